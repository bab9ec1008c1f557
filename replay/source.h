#pragma once

// Where replay reads the recorded history from: a store (store::Ledger) or an exported bundle
// held in memory (replay/bundle.h). Both deliver input records in seq order with the raw bytes of
// watch events, and decision records in seq order.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/decision.h"
#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::replay {

// Replay runs the two scans of one source at the same time, from two threads (the decision log
// is read while the inputs are replayed): an implementation must allow that.
class RecordSource {
 public:
  virtual ~RecordSource() = default;
  // Calls fn for every input record (raw bytes filled) in seq order until fn returns false.
  virtual Status ScanInputs(const std::function<bool(const store::LogRecord&)>& fn) = 0;
  virtual Status ScanDecisions(const std::function<bool(const model::Decision&)>& fn) = 0;
  // The decision records as stored (model::EncodeDecisionRecord's format) with their seq, in seq
  // order, until fn returns false; the bytes are valid only during the call. The default encodes
  // what ScanDecisions returns.
  virtual Status ScanDecisionBytes(const std::function<bool(uint64_t, std::string_view)>& fn);
  // Records the source holds (inputs + decisions), for progress; 0 when unknown.
  virtual uint64_t ApproximateRecords() = 0;
};

// Reads a ledger. `ledger` is not owned and must outlive the source.
class LedgerSource final : public RecordSource {
 public:
  explicit LedgerSource(store::Ledger& ledger) : ledger_(ledger) {}
  Status ScanInputs(const std::function<bool(const store::LogRecord&)>& fn) override {
    return ledger_.ScanInputs(1, true, fn);
  }
  Status ScanDecisions(const std::function<bool(const model::Decision&)>& fn) override {
    return ledger_.ScanDecisions(1, fn);
  }
  Status ScanDecisionBytes(const std::function<bool(uint64_t, std::string_view)>& fn) override {
    return ledger_.ScanDecisionBytes(1, fn);
  }
  uint64_t ApproximateRecords() override;

 private:
  store::Ledger& ledger_;
};

// Records held in memory (a loaded bundle, tests).
class MemorySource final : public RecordSource {
 public:
  MemorySource(std::vector<store::LogRecord> inputs, std::vector<model::Decision> decisions)
      : inputs_(std::move(inputs)), decisions_(std::move(decisions)) {}
  Status ScanInputs(const std::function<bool(const store::LogRecord&)>& fn) override;
  Status ScanDecisions(const std::function<bool(const model::Decision&)>& fn) override;
  uint64_t ApproximateRecords() override { return inputs_.size() + decisions_.size(); }
  const std::vector<store::LogRecord>& inputs() const { return inputs_; }
  const std::vector<model::Decision>& decisions() const { return decisions_; }

 private:
  std::vector<store::LogRecord> inputs_;
  std::vector<model::Decision> decisions_;
};

}  // namespace cronledger::replay
