#include "controller/sim_pump.h"

#include <algorithm>
#include <utility>

namespace cronledger::controller {

SimEventPump::SimEventPump(SimCluster& cluster, const WallClock& wall, Sink sink,
                           SimPumpOptions options)
    : cluster_(cluster), wall_(wall), sink_(std::move(sink)), options_(options) {}

SimEventPump::~SimEventPump() { Stop(); }

void SimEventPump::Start() {
  cluster_.SetOnChange([this] {
    {
      std::lock_guard lock(mu_);
      changed_ = true;
    }
    cv_.notify_one();
  });
  thread_ = std::thread([this] { Loop(); });
}

void SimEventPump::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stop_ && !thread_.joinable()) return;
    stop_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
  cluster_.SetOnChange(nullptr);
}

void SimEventPump::Deliver(std::vector<model::WatchEvent> events) {
  const size_t n = events.size();
  Status st = sink_(std::move(events));
  std::lock_guard lock(mu_);
  stats_.events += n;
  ++stats_.batches;
  if (!st.ok()) {
    ++stats_.failures;
    if (first_error_.ok()) first_error_ = st;
  }
}

void SimEventPump::Loop() {
  for (;;) {
    // Take and deliver everything due now, in batches.
    for (;;) {
      std::vector<model::WatchEvent> events =
          cluster_.TakeDueEvents(wall_.Now(), options_.max_batch);
      if (events.empty()) break;
      Deliver(std::move(events));
    }
    std::unique_lock lock(mu_);
    if (stop_) return;
    if (changed_) {
      changed_ = false;
      continue;
    }
    // Sleep until the next transition is due (as far as the injected clock says), a call changes
    // something, or Stop(). The wait is bounded so a clock that jumps is followed.
    Duration wait = options_.max_wait;
    lock.unlock();
    if (auto next = cluster_.NextEventTime()) wait = std::min(wait, next->Sub(wall_.Now()));
    lock.lock();
    if (wait.count() <= 0 || changed_ || stop_) continue;
    cv_.wait_for(lock, wait, [this] { return changed_ || stop_; });
    changed_ = false;
  }
}

SimPumpStats SimEventPump::Stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

Status SimEventPump::FirstError() const {
  std::lock_guard lock(mu_);
  return first_error_;
}

}  // namespace cronledger::controller
