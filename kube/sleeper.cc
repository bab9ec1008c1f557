#include "kube/sleeper.h"

namespace cronledger::kube {

void Cancellation::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (cancelled_) return;
    cancelled_ = true;
  }
  cv_.notify_all();
  std::lock_guard<std::mutex> hooks_lock(hooks_mu_);
  for (auto& [id, hook] : hooks_) hook();
}

bool Cancellation::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

bool Cancellation::WaitFor(Duration d) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, d, [this] { return cancelled_; });
  return !cancelled_;
}

int Cancellation::AddInterrupt(std::function<void()> hook) const {
  std::lock_guard<std::mutex> hooks_lock(hooks_mu_);
  if (cancelled()) {
    hook();
    return -1;
  }
  const int id = next_id_++;
  hooks_.emplace_back(id, std::move(hook));
  return id;
}

void Cancellation::RemoveInterrupt(int id) const {
  std::lock_guard<std::mutex> hooks_lock(hooks_mu_);
  for (auto it = hooks_.begin(); it != hooks_.end(); ++it) {
    if (it->first == id) {
      hooks_.erase(it);
      return;
    }
  }
}

}  // namespace cronledger::kube
