#pragma once

// Waiting, injected. The client and the reflector never call a sleep function directly: they ask a
// Sleeper, so tests substitute one that records the requested waits and advances a ManualClock
// (kube/testing/recording_sleeper.h), and production waits stay interruptible for shutdown.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <utility>
#include <vector>

#include "model/time.h"

namespace cronledger::kube {

// A one-shot cancellation signal shared between an owner and the work it may interrupt. Cancel()
// wakes waiters and runs registered interrupt hooks (the watch uses one to shut its socket down so
// a blocked read returns at once). Thread-safe.
class Cancellation {
 public:
  Cancellation() = default;
  Cancellation(const Cancellation&) = delete;
  Cancellation& operator=(const Cancellation&) = delete;

  void Cancel();
  bool cancelled() const;
  // Waits up to `d` of real time; returns false if cancelled (before or during the wait).
  bool WaitFor(Duration d) const;

  // Registers `hook` to run on Cancel() (at once if already cancelled). Returns an id for Remove.
  int AddInterrupt(std::function<void()> hook) const;
  void RemoveInterrupt(int id) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  bool cancelled_ = false;
  // Held while hooks run, so that after RemoveInterrupt returns its hook never runs again (the
  // hook may capture a socket that is about to be destroyed).
  mutable std::mutex hooks_mu_;
  mutable int next_id_ = 0;
  mutable std::vector<std::pair<int, std::function<void()>>> hooks_;
};

class Sleeper {
 public:
  virtual ~Sleeper() = default;
  // Waits for `d` unless `cancel` fires first. Returns false when cancelled.
  virtual bool SleepFor(Duration d, const Cancellation& cancel) = 0;
};

// Waits in real time on the Cancellation's condition variable (the production sleeper).
class RealSleeper : public Sleeper {
 public:
  bool SleepFor(Duration d, const Cancellation& cancel) override { return cancel.WaitFor(d); }
};

}  // namespace cronledger::kube
