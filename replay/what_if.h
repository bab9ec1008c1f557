#pragma once

// What-if overrides for replay (`cronledger replay --set K=V`): spec fields applied to the chosen
// CronJobs at every recorded pass, and controller-level changes. docs/replay.md lists the limits.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/objects.h"
#include "model/result.h"

namespace cronledger::replay {

struct WhatIf {
  std::optional<std::string> schedule;                              // spec.schedule
  std::optional<std::optional<std::string>> time_zone;              // spec.timeZone ("" = unset)
  std::optional<std::optional<int64_t>> starting_deadline_seconds;  // "" or null = unset
  std::optional<std::string> concurrency_policy;                    // Allow | Forbid | Replace
  std::optional<bool> suspend;                                      // spec.suspend
  // controller.noDowntime: the controller never went down — a pass is synthesized at every fire
  // time that the recorded history has no pass for (within kSynthesisGrace after it).
  bool no_downtime = false;

  bool changes_spec() const {
    return schedule || time_zone || starting_deadline_seconds || concurrency_policy || suspend;
  }
  bool empty() const { return !changes_spec() && !no_downtime; }
  // "spec.concurrencyPolicy=Replace", ... in a fixed order.
  std::vector<std::string> Describe() const;
};

// Parses one "KEY=VALUE" setting into `w`. InvalidArgument naming the key for an unknown key or a
// value of the wrong shape (the schedule itself is checked by the reconciler, like the API would
// accept it and the controller would report it).
Status ApplySetting(std::string_view setting, WhatIf* w);

// The CronJob with the overrides applied to both its typed spec and its raw object.
model::CronJob ApplyWhatIf(const WhatIf& w, const model::CronJob& cj);

}  // namespace cronledger::replay
