#pragma once

// The controller's work queue, with client-go's semantics (docs/semantics.md §2): keys are
// de-duplicated while waiting; a key being processed is never handed to a second worker (if it is
// added meanwhile it is marked dirty and re-queued when Done is called); AddAfter keeps the
// earliest due time per key; and AddRateLimited applies the default controller rate limiter
// (per-item exponential back-off 5 ms .. 1000 s, combined by max with an overall 10 qps / burst 100
// token bucket).
//
// Time comes from an injected MonotonicClock. Get() never sleeps: it returns the next ready key or
// nothing, and NextDueNanos() tells the caller (the simulator in virtual time) when the earliest
// delayed key becomes ready. Real-time workers use WaitGet(), which blocks until a key is ready or
// the queue is shut down. Every add carries a reason ("cronjob-add", "timer", "retry", ...); the
// reason that made a key ready is handed out with it. Thread-safe.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <string_view>
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

// A key handed out for processing, with the reason of the add that made it ready.
struct WorkItem {
  std::string key;
  std::string reason;
};

class WorkQueue {
 public:
  WorkQueue(const MonotonicClock& clock, RateLimiterOptions options);

  // Makes `key` ready now (no-op if already waiting; marks it dirty if being processed). While a
  // key waits, the reason of the first add is kept.
  void Add(const std::string& key, std::string_view reason = "");
  // Makes `key` ready after `delay`; an earlier pending due time for the key wins (with its
  // reason).
  void AddAfter(const std::string& key, Duration delay, std::string_view reason = "");
  // Re-adds after the rate limiter's delay for this key, and counts a failure.
  void AddRateLimited(const std::string& key, std::string_view reason = "");
  // Clears the key's failure count (after a successful pass).
  void Forget(const std::string& key);
  int NumRequeues(const std::string& key) const;

  // Moves due timers to the ready queue and pops the next ready key, marking it processing.
  std::optional<std::string> Get();
  // Get() with the reason the key became ready.
  std::optional<WorkItem> GetItem();
  // Blocks until a key is ready (waiting for due timers on the monotonic clock, read as real
  // nanoseconds) or the queue is shut down (then nullopt).
  std::optional<WorkItem> WaitGet();
  // Wakes WaitGet() callers so they look at the clock again (after a manual clock moved).
  void Wake();
  // Makes WaitGet() return nullopt in every waiter, now and later, until Reopen(). Keys stay
  // queued.
  void ShutDown();
  void Reopen();
  // Marks processing of `key` finished; re-queues it if it was added meanwhile.
  void Done(const std::string& key);

  // Keys `keep` rejects are dropped when they would be handed out (Get/GetItem/WaitGet), with
  // their failure count; a delayed key is checked when its timer is due. `keep` is
  // called under the queue's lock: it must not call into the queue. Empty (default): keep all.
  // Used for partition ownership (docs/kafka.md "Operating model").
  void SetFilter(std::function<bool(const std::string& key)> keep);

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
  void AddLocked(const std::string& key, std::string_view reason);
  void PromoteDueLocked(int64_t now);
  std::optional<WorkItem> PopLocked();
  std::optional<int64_t> NextDueLocked();
  Duration RateLimitDelayLocked(const std::string& key);

  const MonotonicClock& clock_;
  const RateLimiterOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool shut_down_ = false;
  std::deque<std::string> ready_;
  std::unordered_map<std::string, std::string> waiting_;  // in ready_ -> reason (client-go dirty)
  std::unordered_set<std::string> processing_;            // handed out, not Done yet
  std::unordered_map<std::string, std::string> redo_;     // added while processing -> reason
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;
  struct DueTimer {
    int64_t due;
    std::string reason;
  };
  std::unordered_map<std::string, DueTimer> timer_due_;  // earliest live timer per key
  uint64_t timer_order_ = 0;
  std::unordered_map<std::string, int> failures_;
  std::function<bool(const std::string&)> keep_;  // SetFilter
  double tokens_;
  int64_t tokens_at_ = 0;
};

}  // namespace cronledger::controller
