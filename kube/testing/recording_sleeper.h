#pragma once

// A Sleeper for tests: records every requested wait and advances a ManualClock by it instead of
// blocking, so code that backs off or throttles runs instantly and its waits can be asserted.

#include <mutex>
#include <vector>

#include "kube/sleeper.h"
#include "model/clock.h"

namespace cronledger::kube::testing {

class RecordingSleeper : public Sleeper {
 public:
  // `clock` must outlive the sleeper.
  explicit RecordingSleeper(ManualClock& clock) : clock_(clock) {}

  bool SleepFor(Duration d, const Cancellation& cancel) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      waits_.push_back(d);
    }
    if (cancel.cancelled()) return false;
    clock_.Advance(d);
    return true;
  }

  std::vector<Duration> waits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waits_;
  }
  void Clear() {
    std::lock_guard<std::mutex> lock(mu_);
    waits_.clear();
  }

 private:
  ManualClock& clock_;
  mutable std::mutex mu_;
  std::vector<Duration> waits_;
};

}  // namespace cronledger::kube::testing
