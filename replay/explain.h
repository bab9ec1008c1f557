#pragma once

// `cronledger why NS/NAME --scheduled T | --at T` (docs/replay.md "why"): the causal explanation
// of what happened to one fire time, derived by replaying the CronJob's history: the pass that
// decided it (tick seq, now, trigger), the view it read (the inputs that built it), and the facts
// behind the reason — the active Job and when it finished (ConcurrencyForbid), the update that set
// suspend (Suspended), the gap with no passes (Superseded, TooLate), the deadline arithmetic
// (TooLate). When no record covers the time it says why: not a fire time of the schedule in force
// (with the neighbouring fire times), the CronJob did not exist, or no pass ran (controller down).

#include <optional>
#include <string>
#include <vector>

#include "model/json.h"
#include "model/result.h"
#include "replay/source.h"

namespace cronledger::replay {

struct WhyQuery {
  std::string cron_job;           // "ns/name"
  std::optional<Time> scheduled;  // explain this fire time
  std::optional<Time> at;         // or: the latest fire time at or before this instant
  std::string zoneinfo_dir = "/usr/share/zoneinfo";
};

struct Why {
  std::string cron_job;
  std::optional<Time> scheduled;  // the fire time explained (unset when none could be chosen)
  // "created" | "skipped" | "pending" | "no record" | "not a fire time" | "unknown CronJob"
  std::string verdict;
  std::string reason;                         // the skip reason, when skipped
  std::optional<Time> decided_at;             // created or skipped: when the deciding pass ran
  std::vector<std::string> sentences;         // plain English, in order
  model::Json facts = model::Json::object();  // the same, as data (-o json)
};

// Errors: the source's, or the replay's (replay/engine.h).
Result<Why> Explain(RecordSource& source, const WhyQuery& query);

}  // namespace cronledger::replay
