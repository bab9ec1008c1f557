#pragma once

// What-if differences: the terminal record of every fire time (created, or skipped with a reason)
// in the recorded stream against the what-if stream.

#include <optional>
#include <string>
#include <vector>

#include "model/decision.h"
#include "model/json.h"

namespace cronledger::replay {

struct SlotOutcome {
  model::DecisionAction action = model::DecisionAction::kSkipped;  // kCreateJob | kSkipped
  std::string reason;                                              // skipped: the reason
  std::string job;                                                 // created: the Job's name
  std::optional<Time> range_end;                                   // TooManyMissed ranges
  std::string Describe() const;  // "created job-x" | "skipped (ConcurrencyForbid)"
};

struct SlotDifference {
  std::string cron_job;  // "ns/name"
  Time scheduled;
  std::optional<SlotOutcome> recorded;  // none: the recorded stream has no terminal record
  std::optional<SlotOutcome> what_if;
  // "would run" | "would not run" | "reason changed" | "only recorded" | "only what-if"
  std::string change;
};

// Differences ordered by (scheduled time, CronJob). Fire times with the same outcome on both
// sides are not listed.
std::vector<SlotDifference> DiffTerminal(const std::vector<model::Decision>& recorded,
                                         const std::vector<model::Decision>& what_if);

model::Json EncodeSlotDifference(const SlotDifference& d);

}  // namespace cronledger::replay
