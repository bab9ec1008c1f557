// The simulation loop of `cronledger simulate`: virtual time (a ManualClock that jumps to the next
// controller timer or cluster lifecycle transition) and real time (controller workers plus the
// cluster's event pump on the system clock).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <thread>

#include "app/support_simulate.h"
#include "app/system_clock.h"
#include "controller/sim_pump.h"
#include "model/clock.h"

namespace cronledger::app {
namespace {

// Watch events per Controller::Ingest call (one ledger unit of work each).
constexpr size_t kIngestBatch = 4096;

std::atomic<bool> g_interrupted{false};
extern "C" void OnSignal(int) { g_interrupted.store(true); }

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Takes everything the cluster has due at the clock's now and ingests it, in batches.
Result<uint64_t> Deliver(controller::SimCluster& sim, controller::Controller& ctrl, Time now) {
  uint64_t n = 0;
  for (;;) {
    std::vector<model::WatchEvent> events = sim.TakeDueEvents(now, kIngestBatch);
    if (events.empty()) return n;
    n += events.size();
    CL_RETURN_IF_ERROR(ctrl.Ingest(std::move(events)));
  }
}

// Delivers events and runs passes at the current instant until neither produces anything new.
Status Quiesce(controller::SimCluster& sim, controller::Controller& ctrl, const ManualClock& clock,
               uint64_t* events) {
  for (;;) {
    CL_ASSIGN_OR_RETURN(const uint64_t delivered, Deliver(sim, ctrl, clock.Now()));
    *events += delivered;
    CL_ASSIGN_OR_RETURN(const size_t passes, ctrl.RunReady());
    if (delivered == 0 && passes == 0) return Status::Ok();
  }
}

controller::ControllerOptions ControllerOptionsFor(const SimulateConfig& config) {
  controller::ControllerOptions options;
  options.workers = config.workers;
  return options;
}

Status ApplyAll(const SimulateConfig& config, controller::SimCluster& sim) {
  for (const model::CronJob& cj : config.cron_jobs) {
    CL_RETURN_IF_ERROR(sim.ApplyCronJob(cj).WithContext(cj.metadata.Key()));
  }
  return Status::Ok();
}

Status RunVirtual(const SimulateConfig& config, store::Ledger& ledger,
                  const model::TimeZoneDb& tzdb, const ProgressFn& progress, SimulateOutcome* out) {
  ManualClock clock(config.start);
  controller::SimCluster sim(config.cluster, clock);
  CL_ASSIGN_OR_RETURN(auto ctrl, controller::Controller::Open(ControllerOptionsFor(config), ledger,
                                                              sim, clock, clock, tzdb));
  CL_RETURN_IF_ERROR(ApplyAll(config, sim));
  const Time stop = out->end.Add(kSettle);
  for (;;) {
    CL_RETURN_IF_ERROR(Quiesce(sim, *ctrl, clock, &out->watch_events));
    if (progress) {
      progress({clock.Now(), out->start, out->end, out->watch_events, ctrl->Stats()});
    }
    // Jump to whichever comes first: a controller timer or a lifecycle transition.
    std::optional<Time> next = sim.NextEventTime();
    if (const auto due = ctrl->NextDueNanos()) {
      const Time ctrl_next = clock.Now().Add(Duration(*due - clock.NowNanos()));
      next = next ? std::min(*next, ctrl_next) : ctrl_next;
    }
    if (!next || *next > stop) break;
    // A due time at or before now that produced nothing (a rate limiter's bucket, say) must not
    // spin: time moves on by at least a millisecond.
    clock.AdvanceTo(std::max(*next, clock.Now().Add(std::chrono::milliseconds(1))));
  }
  clock.AdvanceTo(stop);
  CL_RETURN_IF_ERROR(Quiesce(sim, *ctrl, clock, &out->watch_events));
  // A final resync (every CronJob gets one more pass, as an informer resync would do): fire times
  // of CronJobs the controller is not waking up for (suspended, unparseable schedule) are
  // accounted up to the end of the window.
  CL_RETURN_IF_ERROR(ctrl->EnqueueAll());
  CL_RETURN_IF_ERROR(Quiesce(sim, *ctrl, clock, &out->watch_events));
  out->stopped = clock.Now();
  out->stats = ctrl->Stats();
  out->job_counts = sim.AllJobCounts();
  return Status::Ok();
}

Status RunReal(const SimulateConfig& config, store::Ledger& ledger, const model::TimeZoneDb& tzdb,
               const ProgressFn& progress, SimulateOutcome* out) {
  const SystemClock& clocks = RealClock();
  out->start = clocks.Now();
  out->end = out->start.Add(config.duration);
  controller::SimCluster sim(config.cluster, clocks);
  CL_ASSIGN_OR_RETURN(auto ctrl, controller::Controller::Open(ControllerOptionsFor(config), ledger,
                                                              sim, clocks, clocks, tzdb));
  controller::SimEventPump pump(sim, clocks, [&ctrl](std::vector<model::WatchEvent> events) {
    return ctrl->Ingest(std::move(events));
  });
  CL_RETURN_IF_ERROR(ApplyAll(config, sim));
  g_interrupted.store(false);
  auto old_int = std::signal(SIGINT, OnSignal);
  auto old_term = std::signal(SIGTERM, OnSignal);
  pump.Start();
  ctrl->Start();
  const Time stop = out->end.Add(kSettle);
  while (clocks.Now() < stop && !g_interrupted.load()) {
    if (progress) {
      const auto ps = pump.Stats();
      progress({clocks.Now(), out->start, out->end, ps.events, ctrl->Stats()});
    }
    const Duration left = stop.Sub(clocks.Now());
    std::this_thread::sleep_for(std::min<Duration>(left, std::chrono::milliseconds(200)));
  }
  // Workers first (they call the cluster), then the pump delivers what is left.
  ctrl->Stop();
  pump.Stop();
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  out->interrupted = g_interrupted.load();
  out->stopped = clocks.Now();
  out->watch_events = pump.Stats().events;
  out->stats = ctrl->Stats();
  out->job_counts = sim.AllJobCounts();
  return pump.FirstError().WithContext("ingesting simulated watch events");
}

}  // namespace

Result<SimulateOutcome> RunSimulation(const SimulateConfig& config, store::Ledger& ledger,
                                      const model::TimeZoneDb& tzdb, const ProgressFn& progress) {
  CL_RETURN_IF_ERROR(controller::ValidateLifecycleOptions(config.cluster.lifecycle));
  SimulateOutcome out;
  out.realtime = config.realtime;
  out.start = config.start;
  out.end = config.start.Add(config.duration);
  for (model::CronJob cj : config.cron_jobs) {
    if (cj.metadata.namespace_.empty()) cj.metadata.namespace_ = "default";
    out.cron_jobs.push_back(std::move(cj));
  }
  const auto t0 = std::chrono::steady_clock::now();
  CL_RETURN_IF_ERROR(config.realtime ? RunReal(config, ledger, tzdb, progress, &out)
                                     : RunVirtual(config, ledger, tzdb, progress, &out));
  out.wall_seconds = SecondsSince(t0);
  return out;
}

}  // namespace cronledger::app

namespace cronledger::app {

Result<Duration> ParseSimDuration(std::string_view text) {
  Duration days{0};
  std::string_view rest = text;
  if (const size_t d = text.find('d'); d != std::string_view::npos) {
    const std::string_view count = text.substr(0, d);
    int64_t n = 0;
    if (count.empty() || count.size() > 6 ||
        !std::all_of(count.begin(), count.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return Status::InvalidArgument("invalid duration \"" + std::string(text) +
                                     "\": days must be a whole number, as in 7d or 1d12h");
    }
    for (const char c : count) n = n * 10 + (c - '0');
    if (n > 36500) return Status::InvalidArgument("duration longer than 100 years");
    days = std::chrono::hours(24 * n);
    rest = text.substr(d + 1);
  }
  Duration d = days;
  if (!rest.empty()) {
    auto parsed = ParseGoDuration(rest);
    if (!parsed.ok()) {
      return Status::InvalidArgument("invalid duration \"" + std::string(text) + "\"");
    }
    if (parsed->count() < 0 || *parsed > kMaxDuration - d) {
      return Status::InvalidArgument("invalid duration \"" + std::string(text) + "\"");
    }
    d += *parsed;
  }
  if (d.count() <= 0) {
    return Status::InvalidArgument("duration \"" + std::string(text) + "\" must be positive");
  }
  return d;
}

}  // namespace cronledger::app
