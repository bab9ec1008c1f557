#pragma once

// The schedule benchmark's workload (bench/schedule/workload.txt), shared with the robfig peer
// (peer/main.go) so that both sides run exactly the same schedules, start times and chain length.

#include <string>
#include <vector>

#include "model/result.h"
#include "model/time.h"

namespace cronledger::bench {

struct Workload {
  int chain = 0;                       // chained Next calls per (schedule, start)
  std::vector<Time> starts;            // first input of every chain
  std::vector<std::string> schedules;  // ParseStandard specs
};

// Reads `chain N`, `start RFC3339` and `schedule SPEC` lines; '#' starts a comment line.
// InvalidArgument names the file and line of the first bad line.
Result<Workload> LoadWorkload(const std::string& path);

}  // namespace cronledger::bench
