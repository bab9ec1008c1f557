#pragma once

// Test code only. Records real ledgers for the replay tests: the real Controller against the
// SimCluster in virtual time (a ManualClock; nothing sleeps), on a real RocksDB ledger in a
// temporary directory. A controller outage is a stretch of virtual time with no controller: the
// cluster goes on (Jobs finish) and its watch events are delivered when the controller is back.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "controller/controller.h"
#include "controller/sim_cluster.h"
#include "model/clock.h"
#include "model/json.h"
#include "model/timezone.h"
#include "store/ledger.h"
#include "store/test_util.h"

namespace cronledger::replay::testing {

// 2024-01-01T00:00:00Z + hh:mm:ss.
inline Time At(int hh, int mm, int ss = 0) {
  return Time::FromUnix(1704067200 + hh * 3600 + mm * 60 + ss);
}

// A batch/v1 CronJob in namespace "default"; `extra_spec` is merged into spec.
inline model::CronJob Manifest(const std::string& name, const std::string& schedule,
                               const model::Json& extra_spec = model::Json::object()) {
  model::Json spec = {
      {"schedule", schedule},
      {"concurrencyPolicy", "Allow"},
      {"suspend", false},
      {"successfulJobsHistoryLimit", 3},
      {"failedJobsHistoryLimit", 1},
      {"jobTemplate",
       {{"spec",
         {{"template",
           {{"spec", {{"restartPolicy", "Never"}, {"containers", model::Json::array()}}}}}}}}}};
  spec.update(extra_spec);
  model::Json j = {{"apiVersion", "batch/v1"},
                   {"kind", "CronJob"},
                   {"metadata", {{"name", name}, {"namespace", "default"}}},
                   {"spec", spec}};
  auto cj = model::DecodeCronJob(j);
  CL_CHECK(cj.ok());
  return *cj;
}

class SimWorld {
 public:
  // Every Job runs `job_run_time` (after a 1 s start delay) and succeeds.
  SimWorld(Time start, Duration job_run_time)
      : clock_(start), cluster_(Options(job_run_time), clock_) {
    model::SystemTimeZoneDbOptions tz;
    auto tzdb = model::OpenSystemTimeZoneDb(tz);
    CL_CHECK(tzdb.ok());
    tzdb_ = std::move(*tzdb);
    store::LedgerOptions lo;
    lo.path = data_dir();
    lo.sync = store::SyncMode::kNone;
    auto ledger = store::Ledger::Open(lo);
    CL_CHECK(ledger.ok());
    ledger_ = std::move(*ledger);
    StartController();
  }
  ~SimWorld() {
    controller_.reset();
    ledger_.reset();
  }

  void Apply(const model::CronJob& cj) { CL_CHECK(cluster_.ApplyCronJob(cj).ok()); }

  // Runs the controller in virtual time up to `t`, stopping at every timer and lifecycle
  // transition on the way.
  void RunUntil(Time t) {
    for (;;) {
      Quiesce();
      std::optional<Time> next = cluster_.NextEventTime();
      if (const auto due = controller_->NextDueNanos()) {
        const Time c = clock_.Now().Add(Duration(*due - clock_.NowNanos()));
        next = next ? std::min(*next, c) : c;
      }
      if (!next || *next > t) break;
      clock_.AdvanceTo(std::max(*next, clock_.Now().Add(std::chrono::milliseconds(1))));
    }
    clock_.AdvanceTo(t);
    Quiesce();
  }
  // The controller is down until `t`: no passes, no ingest. It restarts at `t` and enqueues
  // every CronJob (startup), like a new process.
  void Outage(Time t) {
    controller_.reset();
    clock_.AdvanceTo(t);
    StartController();
    CL_CHECK(controller_->EnqueueAll().ok());
    Quiesce();
  }
  // Delivers watch events the cluster did not make (e.g. a CronJob whose bytes do not decode) and
  // runs the passes they trigger.
  void Ingest(std::vector<model::WatchEvent> events) {
    CL_CHECK(controller_->Ingest(std::move(events)).ok());
    Quiesce();
  }
  // Closes the ledger (a CLI can then open the data directory).
  void CloseLedger() {
    controller_.reset();
    ledger_.reset();
  }

  store::Ledger& ledger() { return *ledger_; }
  controller::SimCluster& cluster() { return cluster_; }
  ManualClock& clock() { return clock_; }
  std::string data_dir() const { return dir_.Sub("data"); }
  const store::testing::TempDir& dir() const { return dir_; }

 private:
  static controller::SimClusterOptions Options(Duration run) {
    controller::SimClusterOptions o;
    o.lifecycle.start_delay_min = std::chrono::seconds(1);
    o.lifecycle.start_delay_max = std::chrono::seconds(1);
    o.lifecycle.run_min = run;
    o.lifecycle.run_max = run;
    o.lifecycle.run_median = run;
    o.lifecycle.run_sigma = 0;
    o.lifecycle.failure_rate = 0;
    return o;
  }
  void StartController() {
    auto ctl = controller::Controller::Open({}, *ledger_, cluster_, clock_, clock_, *tzdb_);
    CL_CHECK(ctl.ok());
    controller_ = std::move(*ctl);
  }
  void Quiesce() {
    for (int guard = 0; guard < 100000; ++guard) {
      std::vector<model::WatchEvent> events = cluster_.TakeDueEvents(clock_.Now());
      if (!events.empty()) CL_CHECK(controller_->Ingest(std::move(events)).ok());
      auto ran = controller_->RunReady();
      CL_CHECK(ran.ok());
      if (*ran == 0 && events.empty()) return;
    }
    CL_CHECK(false && "the controller did not quiesce");
  }

  store::testing::TempDir dir_;
  ManualClock clock_;
  controller::SimCluster cluster_;
  std::unique_ptr<model::TimeZoneDb> tzdb_;
  std::unique_ptr<store::Ledger> ledger_;
  std::unique_ptr<controller::Controller> controller_;
};

// The scripted incident day used by the replay tests (all times UTC, 2024-01-01):
//  every15   "*/15"                Allow; Jobs run 12 minutes.
//  forbid    "*/5"                 Forbid: the 10:00 Job runs until 10:12:01, so 10:05 is
//                                  ConcurrencyForbid, 10:10 starts late at 10:12:01, and that
//                                  Job makes 10:15 and 10:20 ConcurrencyForbid.
//  susp      "*/5"                 suspended by an update at 10:03, resumed at 10:17: 10:05 and
//                                  10:10 are Suspended, 10:15 starts at the resume.
//  deadline  "*/10", startingDeadlineSeconds 60.
//  Outages: 10:21–10:32 (deadline's 10:30 is TooLate; every15's 10:30 still runs late) and
//  10:50–12:50 (every15: 12:45 runs, 11:00..12:30 Superseded).
inline void RecordIncidentDay(SimWorld& w) {
  w.Apply(Manifest("every15", "*/15 * * * *"));
  w.Apply(Manifest("forbid", "*/5 * * * *", {{"concurrencyPolicy", "Forbid"}}));
  w.Apply(Manifest("susp", "*/5 * * * *"));
  w.Apply(Manifest("deadline", "*/10 * * * *", {{"startingDeadlineSeconds", 60}}));
  w.RunUntil(At(10, 3));
  w.Apply(Manifest("susp", "*/5 * * * *", {{"suspend", true}}));
  w.RunUntil(At(10, 17));
  w.Apply(Manifest("susp", "*/5 * * * *", {{"suspend", false}}));
  w.RunUntil(At(10, 21));
  w.Outage(At(10, 32));
  w.RunUntil(At(10, 50));
  w.Outage(At(12, 50, 30));
  w.RunUntil(At(13, 0));
}

}  // namespace cronledger::replay::testing
