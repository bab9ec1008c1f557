#pragma once

// `cronledger state NS/NAME --at T` (docs/replay.md "state"): the view of one CronJob as the
// controller held it at time T — the CronJob (resourceVersion, the input that wrote it, policy,
// status), its Jobs, the accounting state after the last pass at or before T, and the pending
// timer (that pass's requeue). "At T" means: every input recorded before the first pass (of any
// CronJob) whose now is after T.

#include <cstdint>
#include <optional>
#include <string>

#include "model/json.h"
#include "model/result.h"
#include "replay/source.h"

namespace cronledger::replay {

struct StateQuery {
  std::string cron_job;  // "ns/name"
  Time at;
  std::string zoneinfo_dir = "/usr/share/zoneinfo";
};

struct StateAtResult {
  bool exists = false;             // the view held the CronJob at T
  uint64_t view_seq = 0;           // the view reflects the inputs up to here
  model::Json state;               // the facts (see docs/replay.md); also what -o json prints
  std::vector<std::string> lines;  // the same, for people
};

Result<StateAtResult> StateAt(RecordSource& source, const StateQuery& query);

}  // namespace cronledger::replay
