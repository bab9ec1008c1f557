#pragma once

// What the simulated cluster costs in the controller bench's process: the stand-in for the API
// server runs on the controller's threads (a pass's calls) and on the event pump's thread (its
// Jobs' lifecycle, the watch events it makes), and a real API server's CPU is not the
// controller's. SimCpu adds up the thread CPU time spent in the simulated cluster, so that the
// bench can print the controller's share of the process's CPU beside the whole.

#include <pthread.h>

#include <atomic>
#include <cstdint>

#include "controller/actuator.h"

namespace cronledger::bench {

class SimCpu {
 public:
  // The simulated cluster as the controller's actuator: each call's thread CPU time is the
  // cluster's.
  class TimedActuator final : public controller::Actuator {
   public:
    TimedActuator(controller::Actuator& inner, SimCpu& cpu) : inner_(inner), cpu_(cpu) {}
    model::ApiOutcome Perform(const model::ApiCall& call) override;
    void RecordEvent(const model::CronJobRef& cron_job, const reconciler::Event& event) override;

   private:
    controller::Actuator& inner_;
    SimCpu& cpu_;
  };

  // Called by the pump's sink around the controller's ingest of a batch, on the pump's thread:
  // the rest of that thread's CPU time is the cluster's (its lifecycle, the events it makes).
  void IngestStarted();
  void IngestFinished();

  // Thread CPU seconds spent in the simulated cluster so far.
  double Seconds() const;

 private:
  void Add(int64_t nanos) { in_calls_.fetch_add(nanos, std::memory_order_relaxed); }

  std::atomic<int64_t> in_calls_{0};   // actuator calls, on any thread
  std::atomic<int64_t> in_ingest_{0};  // the controller's ingest on the pump's thread
  double ingest_started_ = 0;          // the pump's thread only (ThreadCpuSeconds)
  std::atomic<bool> has_pump_{false};
  pthread_t pump_{};
};

}  // namespace cronledger::bench
