#pragma once

// A store::Ledger decorator that measures, at the moment a unit of work is committed, the creation
// skew of every createJob decision in it: commit time (system clock) - scheduled time. That is
// exactly "scheduled time -> create decision committed". It also counts what the controller
// writes (units, records by type, a sampled estimate of the encoded record bytes), the figures the
// ledger-capacity calculation of docs/controller.md "Scale" uses. Every other call is forwarded
// (store::testing::ForwardingLedger).

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "bench/controller/skew_histogram.h"
#include "model/clock.h"
#include "store/ledger.h"
#include "store/testing/forwarding_ledger.h"

namespace cronledger::bench {

// Cumulative counts of what was committed (take differences for a window).
struct WriteCounts {
  uint64_t units = 0;
  // Input records by model::Input alternative: watch event, tick, outcome, config, intent, pass
  // end.
  std::array<uint64_t, 6> inputs{};
  uint64_t decisions = 0;
  uint64_t creates = 0;  // createJob decisions (any scheduled time)
  // Encoded record bytes (model::EncodeInput / EncodeDecisionRecord, which is what the ledger
  // appends before its keys and indexes), estimated from every 8th unit.
  uint64_t record_bytes_estimate = 0;
  uint64_t records() const {
    uint64_t n = decisions;
    for (const uint64_t c : inputs) n += c;
    return n;
  }
};

class MeasuringLedger final : public store::testing::ForwardingLedger {
 public:
  // `inner` is owned; `wall` is not and must outlive the decorator.
  MeasuringLedger(std::unique_ptr<store::Ledger> inner, const WallClock& wall);

  // Only createJob decisions whose scheduled time is in [from, until) are measured.
  void SetWindow(Time from, Time until);
  const SkewHistogram& skew() const { return skew_; }
  uint64_t decisions() const { return decisions_.load(); }
  uint64_t creates_in_window() const { return skew_.count(); }
  WriteCounts counts() const;
  // What the raw peer (raw_create_peer.h) replays: the input seqs of every unit that carried a
  // create-Job intent whose time is in the window (the pass's Tick and the intent, with whatever
  // else went in that unit) and the seqs of the createJob decisions measured in the window.
  std::vector<uint64_t> create_input_seqs() const;
  std::vector<uint64_t> create_decision_seqs() const;
  // The longest skew of the creates scheduled in each minute of the window (index = minutes since
  // its start): how long each minute's burst took to commit.
  std::vector<double> burst_seconds() const;

  Result<store::CommitResult> Commit(store::UnitOfWork unit) override;

 private:
  static constexpr uint64_t kSampleEvery = 8;

  std::unique_ptr<store::Ledger> inner_;
  const WallClock& wall_;
  std::atomic<int64_t> from_nanos_{INT64_MAX};
  std::atomic<int64_t> until_nanos_{INT64_MAX};
  std::atomic<uint64_t> decisions_{0};
  std::atomic<uint64_t> units_{0};
  std::atomic<uint64_t> creates_{0};
  std::array<std::atomic<uint64_t>, 6> inputs_{};
  std::atomic<uint64_t> sampled_bytes_{0};
  SkewHistogram skew_;
  mutable std::mutex capture_mu_;
  std::vector<uint64_t> create_input_seqs_;
  std::vector<uint64_t> create_decision_seqs_;
  std::vector<int64_t> burst_nanos_;
};

}  // namespace cronledger::bench
