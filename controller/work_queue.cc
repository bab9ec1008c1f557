#include "controller/work_queue.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

namespace cronledger::controller {

WorkQueue::WorkQueue(const MonotonicClock& clock, RateLimiterOptions options)
    : clock_(clock),
      options_(options),
      tokens_(static_cast<double>(options.burst)),
      tokens_at_(clock.NowNanos()) {}

void WorkQueue::AddLocked(const std::string& key, std::string_view reason) {
  if (processing_.count(key) != 0) {
    redo_.try_emplace(key, reason);
    return;
  }
  if (waiting_.try_emplace(key, reason).second) {
    ready_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::Add(const std::string& key, std::string_view reason) {
  std::lock_guard<std::mutex> lock(mu_);
  AddLocked(key, reason);
}

void WorkQueue::AddAfter(const std::string& key, Duration delay, std::string_view reason) {
  std::lock_guard<std::mutex> lock(mu_);
  if (delay.count() <= 0) {
    AddLocked(key, reason);
    return;
  }
  // Saturate: a delay near the largest Duration (docs/semantics.md §7.3 year-1 case) must not wrap.
  const int64_t now = clock_.NowNanos();
  const int64_t due =
      delay.count() > INT64_MAX - now ? INT64_MAX : now + static_cast<int64_t>(delay.count());
  auto it = timer_due_.find(key);
  if (it != timer_due_.end() && it->second.due <= due) return;  // an earlier timer exists
  timer_due_[key] = DueTimer{due, std::string(reason)};
  // A waiter sleeps until the earliest timer it saw (or until woken, when there was none): only a
  // timer earlier than every other needs it to wake sooner.
  const bool earliest = timers_.empty() || due < timers_.top().due;
  timers_.push(Timer{due, timer_order_++, key});
  if (earliest) cv_.notify_one();
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

void WorkQueue::AddRateLimited(const std::string& key, std::string_view reason) {
  Duration delay;
  {
    std::lock_guard<std::mutex> lock(mu_);
    delay = RateLimitDelayLocked(key);
  }
  AddAfter(key, delay, reason);
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
    if (it == timer_due_.end() || it->second.due != t.due) continue;  // superseded
    const std::string reason = std::move(it->second.reason);
    timer_due_.erase(it);
    AddLocked(t.key, reason);
  }
}

std::optional<WorkItem> WorkQueue::PopLocked() {
  PromoteDueLocked(clock_.NowNanos());
  while (keep_ && !ready_.empty() && !keep_(ready_.front())) {
    waiting_.erase(ready_.front());
    failures_.erase(ready_.front());
    ready_.pop_front();
  }
  if (ready_.empty()) return std::nullopt;
  WorkItem item;
  item.key = std::move(ready_.front());
  ready_.pop_front();
  auto it = waiting_.find(item.key);
  item.reason = std::move(it->second);
  waiting_.erase(it);
  processing_.insert(item.key);
  return item;
}

std::optional<std::string> WorkQueue::Get() {
  auto item = GetItem();
  if (!item) return std::nullopt;
  return std::move(item->key);
}

std::optional<WorkItem> WorkQueue::GetItem() {
  std::lock_guard<std::mutex> lock(mu_);
  return PopLocked();
}

std::optional<WorkItem> WorkQueue::WaitGet() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    if (shut_down_) return std::nullopt;
    if (auto item = PopLocked()) return item;
    const std::optional<int64_t> due = NextDueLocked();
    if (!due) {
      cv_.wait(lock);
      continue;
    }
    // Bounded so that a far-future due time cannot overflow the condition variable's clock.
    const int64_t wait = std::min<int64_t>(*due - clock_.NowNanos(), int64_t{3'600'000'000'000});
    if (wait > 0) cv_.wait_for(lock, std::chrono::nanoseconds(wait));
  }
}

void WorkQueue::Wake() {
  // Under the lock, so a waiter between its clock check and its wait cannot miss the wake-up.
  std::lock_guard<std::mutex> lock(mu_);
  cv_.notify_all();
}

void WorkQueue::ShutDown() {
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = true;
  cv_.notify_all();
}

void WorkQueue::Reopen() {
  std::lock_guard<std::mutex> lock(mu_);
  shut_down_ = false;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard<std::mutex> lock(mu_);
  processing_.erase(key);
  auto it = redo_.find(key);
  if (it != redo_.end()) {
    const std::string reason = std::move(it->second);
    redo_.erase(it);
    AddLocked(key, reason);
  }
}

void WorkQueue::SetFilter(std::function<bool(const std::string& key)> keep) {
  std::lock_guard<std::mutex> lock(mu_);
  keep_ = std::move(keep);
  cv_.notify_all();
}

std::optional<int64_t> WorkQueue::NextDueLocked() {
  // Drop superseded heap entries (a key that got an earlier timer, or whose timer already fired) so
  // the answer is the earliest *live* due time and a virtual-time driver never jumps to a dead one.
  while (!timers_.empty()) {
    const Timer& t = timers_.top();
    auto it = timer_due_.find(t.key);
    if (it != timer_due_.end() && it->second.due == t.due) return t.due;
    timers_.pop();
  }
  return std::nullopt;
}

std::optional<int64_t> WorkQueue::NextDueNanos() {
  std::lock_guard<std::mutex> lock(mu_);
  return NextDueLocked();
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
