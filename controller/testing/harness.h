#pragma once

// Test code only. A controller on a real RocksDB ledger in a temporary directory, a FakeActuator
// cluster and a ManualClock: virtual time that moves only when a test says so, never sleeping.

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "controller/controller.h"
#include "controller/testing/failing_ledger.h"
#include "controller/testing/fake_actuator.h"
#include "model/timezone.h"
#include "store/ledger.h"
#include "store/test_util.h"

namespace cronledger::controller::testing {

// A batch/v1 CronJob manifest; `extra_spec` is merged into spec.
inline model::Json CronJobManifest(const std::string& name, const std::string& schedule,
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
  return {{"apiVersion", "batch/v1"},
          {"kind", "CronJob"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", spec}};
}

class Harness {
 public:
  explicit Harness(Time start, ControllerOptions options = {})
      : clock_(start), cluster_(clock_), options_(options) {
    model::SystemTimeZoneDbOptions tz;
    tz.local_zone = options.local_time_zone;  // Go's Local is the zone the controller is told
    auto tzdb = model::OpenSystemTimeZoneDb(tz);
    CL_CHECK(tzdb.ok());
    tzdb_ = std::move(*tzdb);
    Open();
  }
  ~Harness() { Close(); }

  // Opens the ledger and the controller on the same data directory (again, after Close()).
  void Open() {
    store::LedgerOptions lo;
    lo.path = dir_.Sub("ledger");
    lo.sync = store::SyncMode::kNone;
    auto ledger = store::Ledger::Open(lo);
    CL_CHECK(ledger.ok());
    base_ = std::move(*ledger);
    ledger_ = std::make_unique<FailingLedger>(*base_);
    auto ctl = Controller::Open(options_, *ledger_, cluster_, clock_, clock_, *tzdb_);
    CL_CHECK(ctl.ok());
    controller_ = std::move(*ctl);
  }
  // A process stop: the controller and its queue are gone, the ledger and the cluster stay.
  void Close() {
    controller_.reset();
    ledger_.reset();
    base_.reset();
  }
  void Restart() {
    Close();
    Open();
    CL_CHECK(controller_->EnqueueAll().ok());
  }

  // Delivers the cluster's watch events and runs ready passes until both are quiet. Returns the
  // number of passes run.
  size_t Pump() {
    size_t passes = 0;
    for (;;) {
      std::vector<model::WatchEvent> events = cluster_.TakeEvents();
      if (!events.empty()) CL_CHECK(controller_->Ingest(events).ok());
      auto ran = controller_->RunReady();
      CL_CHECK(ran.ok());
      passes += *ran;
      // Only passes make the cluster change, so no events and no passes means quiet.
      if (*ran == 0 && events.empty()) return passes;
    }
  }
  // Moves virtual time to `t`, stopping at every timer due on the way (the simulator's
  // fast-forward). Returns the number of passes run.
  size_t RunUntil(Time t) {
    size_t passes = Pump();
    const int64_t deadline = clock_.NowNanos() + t.Sub(clock_.Now()).count();
    for (auto due = controller_->NextDueNanos(); due && *due <= deadline;
         due = controller_->NextDueNanos()) {
      if (*due > clock_.NowNanos()) clock_.Advance(Duration(*due - clock_.NowNanos()));
      passes += Pump();
    }
    clock_.AdvanceTo(t);
    return passes + Pump();
  }

  std::vector<model::Decision> Decisions() {
    std::vector<model::Decision> out;
    CL_CHECK(ledger_
                 ->ScanDecisions(1,
                                 [&](const model::Decision& d) {
                                   out.push_back(d);
                                   return true;
                                 })
                 .ok());
    return out;
  }
  std::vector<store::LogRecord> Inputs() {
    std::vector<store::LogRecord> out;
    CL_CHECK(ledger_
                 ->ScanInputs(1, false,
                              [&](const store::LogRecord& r) {
                                out.push_back(r);
                                return true;
                              })
                 .ok());
    return out;
  }
  template <typename T>
  std::vector<T> InputsOf() {
    std::vector<T> out;
    for (const auto& r : Inputs()) {
      if (const T* v = std::get_if<T>(&r.input)) out.push_back(*v);
    }
    return out;
  }

  ManualClock& clock() { return clock_; }
  FakeActuator& cluster() { return cluster_; }
  Controller& controller() { return *controller_; }
  // The controller's ledger; FailCommitsWhere() injects commit failures.
  FailingLedger& ledger() { return *ledger_; }
  const model::TimeZoneDb& tzdb() { return *tzdb_; }

 private:
  store::testing::TempDir dir_;
  ManualClock clock_;
  FakeActuator cluster_;
  ControllerOptions options_;
  std::unique_ptr<model::TimeZoneDb> tzdb_;
  std::unique_ptr<store::Ledger> base_;
  std::unique_ptr<FailingLedger> ledger_;
  std::unique_ptr<Controller> controller_;
};

}  // namespace cronledger::controller::testing
