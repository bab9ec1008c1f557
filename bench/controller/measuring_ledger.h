#pragma once

// A store::Ledger decorator that measures, at the moment a unit of work is committed, the creation
// skew of every createJob decision in it: commit time (system clock) - scheduled time. That is
// exactly "scheduled time -> create decision committed". Every other call is forwarded
// (store::testing::ForwardingLedger).

#include <atomic>
#include <memory>

#include "bench/controller/skew_histogram.h"
#include "model/clock.h"
#include "store/ledger.h"
#include "store/testing/forwarding_ledger.h"

namespace cronledger::bench {

class MeasuringLedger final : public store::testing::ForwardingLedger {
 public:
  // `inner` is owned; `wall` is not and must outlive the decorator.
  MeasuringLedger(std::unique_ptr<store::Ledger> inner, const WallClock& wall);

  // Only createJob decisions whose scheduled time is in [from, until) are measured.
  void SetWindow(Time from, Time until);
  const SkewHistogram& skew() const { return skew_; }
  uint64_t decisions() const { return decisions_.load(); }
  uint64_t creates_in_window() const { return skew_.count(); }

  Result<store::CommitResult> Commit(store::UnitOfWork unit) override;

 private:
  std::unique_ptr<store::Ledger> inner_;
  const WallClock& wall_;
  std::atomic<int64_t> from_nanos_{INT64_MAX};
  std::atomic<int64_t> until_nanos_{INT64_MAX};
  std::atomic<uint64_t> decisions_{0};
  SkewHistogram skew_;
};

}  // namespace cronledger::bench
