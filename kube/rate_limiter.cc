#include "kube/rate_limiter.h"

#include <algorithm>
#include <cmath>

namespace cronledger::kube {

TokenBucket::TokenBucket(const MonotonicClock& clock, double qps, int burst)
    : clock_(clock),
      qps_(qps),
      burst_(std::max(1, burst)),
      tokens_(std::max(1, burst)),
      last_nanos_(clock.NowNanos()) {}

void TokenBucket::Refill() {
  const int64_t now = clock_.NowNanos();
  if (now > last_nanos_) {
    tokens_ = std::min(burst_, tokens_ + static_cast<double>(now - last_nanos_) * qps_ / 1e9);
    last_nanos_ = now;
  }
}

Duration TokenBucket::TryTake() {
  if (qps_ <= 0) return Duration::zero();
  std::lock_guard<std::mutex> lock(mu_);
  Refill();
  if (tokens_ >= 1) {
    tokens_ -= 1;
    return Duration::zero();
  }
  return Duration(
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil((1 - tokens_) / qps_ * 1e9))));
}

Duration TokenBucket::Reserve() {
  if (qps_ <= 0) return Duration::zero();
  std::lock_guard<std::mutex> lock(mu_);
  Refill();
  tokens_ -= 1;
  if (tokens_ >= 0) return Duration::zero();
  return Duration(static_cast<int64_t>(std::ceil(-tokens_ / qps_ * 1e9)));
}

}  // namespace cronledger::kube
