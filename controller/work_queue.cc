#include "controller/work_queue.h"

#include <algorithm>
#include <cmath>

namespace cronledger::controller {

WorkQueue::WorkQueue(const MonotonicClock& clock, RateLimiterOptions options)
    : clock_(clock),
      options_(options),
      tokens_(static_cast<double>(options.burst)),
      tokens_at_(clock.NowNanos()) {}

void WorkQueue::AddLocked(const std::string& key) {
  if (processing_.count(key) != 0) {
    redo_.insert(key);
    return;
  }
  if (waiting_.insert(key).second) ready_.push_back(key);
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  AddLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, Duration delay) {
  std::lock_guard<std::mutex> lock(mu_);
  if (delay.count() <= 0) {
    AddLocked(key);
    return;
  }
  const int64_t due = clock_.NowNanos() + delay.count();
  auto it = timer_due_.find(key);
  if (it != timer_due_.end() && it->second <= due) return;  // an earlier timer already exists
  timer_due_[key] = due;
  timers_.push(Timer{due, timer_order_++, key});
}

Duration WorkQueue::RateLimitDelayLocked(const std::string& key) {
  // Per-item exponential back-off (client-go ItemExponentialFailureRateLimiter).
  const int exp = failures_[key]++;
  const double backoff = static_cast<double>(options_.base_delay.count()) * std::pow(2.0, exp);
  const int64_t item_delay = backoff > static_cast<double>(options_.max_delay.count())
                                 ? options_.max_delay.count()
                                 : static_cast<int64_t>(backoff);
  // Overall token bucket (client-go BucketRateLimiter): reserve a token, wait until it exists.
  const int64_t now = clock_.NowNanos();
  tokens_ = std::min(static_cast<double>(options_.burst),
                     tokens_ + static_cast<double>(now - tokens_at_) / 1e9 * options_.qps);
  tokens_at_ = now;
  tokens_ -= 1;
  const int64_t bucket_delay =
      tokens_ >= 0 ? 0 : static_cast<int64_t>(-tokens_ / options_.qps * 1e9);
  return Duration(std::max(item_delay, bucket_delay));
}

void WorkQueue::AddRateLimited(const std::string& key) {
  Duration delay;
  {
    std::lock_guard<std::mutex> lock(mu_);
    delay = RateLimitDelayLocked(key);
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  failures_.erase(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

void WorkQueue::PromoteDueLocked(int64_t now) {
  while (!timers_.empty() && timers_.top().due <= now) {
    Timer t = timers_.top();
    timers_.pop();
    auto it = timer_due_.find(t.key);
    if (it == timer_due_.end() || it->second != t.due) continue;  // superseded by an earlier timer
    timer_due_.erase(it);
    AddLocked(t.key);
  }
}

std::optional<std::string> WorkQueue::Get() {
  std::lock_guard<std::mutex> lock(mu_);
  PromoteDueLocked(clock_.NowNanos());
  if (ready_.empty()) return std::nullopt;
  std::string key = std::move(ready_.front());
  ready_.pop_front();
  waiting_.erase(key);
  processing_.insert(key);
  return key;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  processing_.erase(key);
  if (redo_.erase(key) != 0) AddLocked(key);
}

std::optional<int64_t> WorkQueue::NextDueNanos() {
  std::lock_guard<std::mutex> lock(mu_);
  // Drop superseded heap entries (a key that got an earlier timer, or whose timer already fired) so
  // the answer is the earliest *live* due time and a virtual-time driver never jumps to a dead one.
  while (!timers_.empty()) {
    const Timer& t = timers_.top();
    auto it = timer_due_.find(t.key);
    if (it != timer_due_.end() && it->second == t.due) return t.due;
    timers_.pop();
  }
  return std::nullopt;
}

size_t WorkQueue::ReadyLen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ready_.size();
}

size_t WorkQueue::DelayedLen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return timer_due_.size();
}

}  // namespace cronledger::controller
