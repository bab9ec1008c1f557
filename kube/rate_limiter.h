#pragma once

// Client-side request throttling: a token bucket like client-go's flowcontrol rate limiter
// (rest.Config QPS/Burst). Time comes from an injected MonotonicClock; the limiter never sleeps,
// it tells the caller how long to wait.

#include <cstdint>
#include <mutex>

#include "model/clock.h"
#include "model/time.h"

namespace cronledger::kube {

class TokenBucket {
 public:
  // `qps` tokens per second refill a bucket of `burst` tokens, initially full. qps <= 0 disables
  // throttling (Reserve always returns zero). `clock` must outlive the bucket.
  TokenBucket(const MonotonicClock& clock, double qps, int burst);

  // Takes one token and returns how long the caller must wait before using it (zero when a token
  // was available). Reservations queue: the n-th caller beyond the burst waits n/qps. Thread-safe.
  Duration Reserve();

  // For best-effort requests that must never delay Reserve()'s callers: takes a token only when a
  // whole one is there now, so never while reservations are outstanding. Returns zero when it
  // took one, else how long until one would be there if nobody reserved meanwhile (then call
  // again). Thread-safe.
  Duration TryTake();

 private:
  void Refill();  // under mu_

  const MonotonicClock& clock_;
  const double qps_;
  const double burst_;
  std::mutex mu_;
  double tokens_;  // may go negative: outstanding reservations
  int64_t last_nanos_;
};

}  // namespace cronledger::kube
