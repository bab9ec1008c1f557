#pragma once

// `cronledger simulate` (docs/simulate.md): the full controller (controller::Controller over a
// real ledger) against the simulated cluster (controller::SimCluster), in virtual or real time,
// and the summary built from the ledger's decision records afterwards.

#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "controller/controller.h"
#include "controller/sim_cluster.h"
#include "model/json.h"
#include "model/objects.h"
#include "model/result.h"
#include "model/timezone.h"
#include "store/ledger.h"

namespace cronledger::app {

// Go durations ("90m", "1h30m", "2.5h") plus a leading whole number of days, "d" = 24 h ("7d",
// "1d12h"). Must be positive. InvalidArgument otherwise.
Result<Duration> ParseSimDuration(std::string_view text);

// After the window's end the clock runs this much longer, so that a fire time at the very end
// (picked up δ = 100 ms late by the requeue, docs/semantics.md §7.3) is still decided.
inline constexpr Duration kSettle = std::chrono::seconds(1);

struct SimulateConfig {
  std::vector<model::CronJob> cron_jobs;
  // Virtual time: where the clock starts (the window is (start, start + duration]). Real time: the
  // window starts at the system clock's now and this is ignored.
  Time start;
  Duration duration{0};
  bool realtime = false;
  // Controller worker threads in real time. Virtual time runs passes on one thread
  // (Controller::RunReady) so that the run is deterministic.
  int workers = 2;
  controller::SimClusterOptions cluster;
};

struct SimulateProgress {
  Time now;
  Time start;
  Time end;
  uint64_t watch_events = 0;
  controller::ControllerStats stats;
};
using ProgressFn = std::function<void(const SimulateProgress&)>;

struct SimulateOutcome {
  Time start;  // the window is (start, end]
  Time end;
  Time stopped;  // where the clock stopped (end + kSettle in virtual time)
  bool realtime = false;
  bool interrupted = false;  // real time: stopped early by SIGINT/SIGTERM
  uint64_t watch_events = 0;
  controller::ControllerStats stats;
  std::map<std::string, controller::SimJobCounts> job_counts;  // by "ns/name"
  std::vector<model::CronJob> cron_jobs;                       // namespace defaulted
  double wall_seconds = 0;
};

// Runs the simulation into `ledger`. `progress` (may be empty) is called now and then from the
// calling thread. Errors: the controller or the ledger failed.
Result<SimulateOutcome> RunSimulation(const SimulateConfig& config, store::Ledger& ledger,
                                      const model::TimeZoneDb& tzdb, const ProgressFn& progress);

// The summary (docs/simulate.md, "Summary"): {"run": {...}, "items": [...], "totals": {...}},
// built from the ledger's decision records and the cluster's Job counters. Deterministic for a
// deterministic run (no wall-clock figures).
Result<model::Json> BuildSimulationSummary(const SimulateOutcome& outcome, store::Ledger& ledger,
                                           const model::TimeZoneDb& tzdb, uint64_t seed);

// The human-readable form of a summary.
void PrintSimulationTable(std::FILE* out, const model::Json& summary);

}  // namespace cronledger::app
