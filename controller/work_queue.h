#pragma once

// The controller's work queue, with client-go's semantics (spec §2): keys are de-duplicated while
// waiting; a key being processed is never handed to a second worker (if it is added meanwhile it is
// marked dirty and re-queued when Done is called); AddAfter keeps the earliest due time per key;
// and AddRateLimited applies the default controller rate limiter (per-item exponential back-off 5
// ms .. 1000 s, combined by max with an overall 10 qps / burst 100 token bucket).
//
// Time comes from an injected MonotonicClock. The queue never sleeps: Get() returns the next ready
// key or nothing, and NextDueNanos() tells the caller (a worker pool in real time, or the simulator
// in virtual time) when the earliest delayed key becomes ready. Thread-safe.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/clock.h"
#include "model/time.h"

namespace cronledger::controller {

struct RateLimiterOptions {
  // Per-item exponential back-off: base * 2^failures, capped. Default: 5 ms, 1000 s (client-go).
  Duration base_delay = std::chrono::milliseconds(5);
  Duration max_delay = std::chrono::seconds(1000);
  // Overall token bucket shared by all items. Default: 10 per second, burst 100 (client-go).
  double qps = 10;
  int burst = 100;
};

class WorkQueue {
 public:
  WorkQueue(const MonotonicClock& clock, RateLimiterOptions options);

  // Makes `key` ready now (no-op if already waiting; marks it dirty if being processed).
  void Add(const std::string& key);
  // Makes `key` ready after `delay`; an earlier pending due time for the key wins.
  void AddAfter(const std::string& key, Duration delay);
  // Re-adds after the rate limiter's delay for this key, and counts a failure.
  void AddRateLimited(const std::string& key);
  // Clears the key's failure count (after a successful pass).
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key) const;

  // Moves due timers to the ready queue and pops the next ready key, marking it processing.
  std::optional<std::string> Get();
  // Marks processing of `key` finished; re-queues it if it was added meanwhile.
  void Done(const std::string& key);

  // Monotonic time at which the earliest delayed key becomes due, if any.
  std::optional<int64_t> NextDueNanos();
  size_t ReadyLen() const;
  size_t DelayedLen() const;

 private:
  struct Timer {
    int64_t due;
    uint64_t order;  // FIFO among equal due times, so the queue is deterministic
    std::string key;
    bool operator>(const Timer& o) const { return due != o.due ? due > o.due : order > o.order; }
  };
  void AddLocked(const std::string& key);
  void PromoteDueLocked(int64_t now);
  Duration RateLimitDelayLocked(const std::string& key);

  const MonotonicClock& clock_;
  const RateLimiterOptions options_;
  mutable std::mutex mu_;
  std::deque<std::string> ready_;
  std::unordered_set<std::string> waiting_;     // in ready_ (dirty set of client-go)
  std::unordered_set<std::string> processing_;  // handed out, not Done yet
  std::unordered_set<std::string> redo_;        // added while processing
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  std::unordered_map<std::string, int64_t> timer_due_;  // earliest live timer per key
  uint64_t timer_order_ = 0;
  std::unordered_map<std::string, int> failures_;
  double tokens_;
  int64_t tokens_at_ = 0;
};

}  // namespace cronledger::controller
