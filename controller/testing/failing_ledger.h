#pragma once

// Test code only. A Ledger that forwards to a real one, except that Commit() fails (IoError,
// nothing written) for units a test-supplied predicate picks: leveldb's fail-the-Nth-write
// environment, for the controller's crash and error paths. It also notes which CronJobs' views
// were read: every pass reads its CronJob's view once, recorded or not.

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

  Result<store::CronJobViewRaw> ReadCronJobViewRaw(std::string_view ns,
                                                   std::string_view name) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      view_reads_.push_back(std::string(ns) + "/" + std::string(name));
    }
    return ForwardingLedger::ReadCronJobViewRaw(ns, name);
  }
  // "ns/name" of every view read since the last call.
  std::vector<std::string> TakeViewReads() {
    std::lock_guard<std::mutex> lock(mu_);
    return std::exchange(view_reads_, {});
  }

 private:
  std::mutex mu_;
  Predicate fail_;
  std::vector<std::string> view_reads_;
};

}  // namespace cronledger::controller::testing
