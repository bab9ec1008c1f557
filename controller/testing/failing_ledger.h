#pragma once

// Test code only. A Ledger that forwards to a real one, except that Commit() fails (IoError,
// nothing written) for units a test-supplied predicate picks: leveldb's fail-the-Nth-write
// environment, for the controller's crash and error paths. It also notes which CronJobs'
// accounting states were read: every pass of a CronJob the view holds reads it once, recorded or
// not.

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "store/ledger.h"
#include "store/testing/forwarding_ledger.h"

namespace cronledger::controller::testing {

class FailingLedger final : public store::testing::ForwardingLedger {
 public:
  using Predicate = std::function<bool(const store::UnitOfWork&)>;
  explicit FailingLedger(store::Ledger& base) : ForwardingLedger(base) {}

  void FailCommitsWhere(Predicate p) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_ = std::move(p);
  }

  Result<store::CommitResult> Commit(store::UnitOfWork unit) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (fail_ && fail_(unit)) return Status::IoError("injected commit failure");
    }
    return ForwardingLedger::Commit(std::move(unit));
  }

  Result<std::string> GetControllerState(std::string_view key) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      state_reads_.emplace_back(key);
    }
    return ForwardingLedger::GetControllerState(key);
  }
  // "ns/name" of every accounting state read since the last call.
  std::vector<std::string> TakeStateReads() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(state_reads_, {});
  }

 private:
  std::mutex mu_;
  Predicate fail_;
  std::vector<std::string> state_reads_;
};

}  // namespace cronledger::controller::testing
