#pragma once

// Test code only. A Ledger that forwards to a real one, except that Commit() fails (IoError,
// nothing written) for units a test-supplied predicate picks: leveldb's fail-the-Nth-write
// environment, for the controller's crash and error paths.

#include <functional>
#include <memory>
#include <mutex>
#include <utility>

#include "store/ledger.h"

namespace cronledger::controller::testing {

class FailingLedger final : public store::Ledger {
 public:
  using Predicate = std::function<bool(const store::UnitOfWork&)>;
  explicit FailingLedger(store::Ledger& base) : base_(base) {}

  void FailCommitsWhere(Predicate p) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_ = std::move(p);
  }

  Result<store::CommitResult> Commit(store::UnitOfWork unit) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (fail_ && fail_(unit)) return Status::IoError("injected commit failure");
    }
    return base_.Commit(std::move(unit));
  }
  Result<model::CronJob> GetCronJob(std::string_view ns, std::string_view name) override {
    return base_.GetCronJob(ns, name);
  }
  Result<store::ViewObject> GetObject(model::ObjectKind kind, std::string_view ns,
                                      std::string_view name) override {
    return base_.GetObject(kind, ns, name);
  }
  Result<std::vector<model::Job>> ListJobsByOwner(std::string_view ns,
                                                  std::string_view owner) override {
    return base_.ListJobsByOwner(ns, owner);
  }
  Result<std::vector<store::ObjectEntry>> ListCronJobEntries() override {
    return base_.ListCronJobEntries();
  }
  Result<std::vector<model::CronJob>> ListCronJobs() override { return base_.ListCronJobs(); }
  Result<store::CronJobView> ReadCronJobView(std::string_view ns, std::string_view name) override {
    return base_.ReadCronJobView(ns, name);
  }
  Result<std::string> GetResourceVersion(std::string_view resource) override {
    return base_.GetResourceVersion(resource);
  }
  Result<std::string> GetControllerState(std::string_view key) override {
    return base_.GetControllerState(key);
  }
  Status ScanInputs(uint64_t from_seq, bool with_raw,
                    const std::function<bool(const store::LogRecord&)>& fn) override {
    return base_.ScanInputs(from_seq, with_raw, fn);
  }
  Status ScanDecisions(uint64_t from_seq,
                       const std::function<bool(const model::Decision&)>& fn) override {
    return base_.ScanDecisions(from_seq, fn);
  }
  Result<std::vector<model::Decision>> DecisionsByCronJob(std::string_view ns,
                                                          std::string_view name, Time from, Time to,
                                                          size_t limit) override {
    return base_.DecisionsByCronJob(ns, name, from, to, limit);
  }
  Result<std::vector<model::Decision>> DecisionsByActionReason(
      std::optional<model::DecisionAction> action, std::string_view reason, Time from, Time to,
      size_t limit) override {
    return base_.DecisionsByActionReason(action, reason, from, to, limit);
  }
  Result<std::vector<store::QuarantineEntry>> ListQuarantine(uint64_t from_id,
                                                             size_t limit) override {
    return base_.ListQuarantine(from_id, limit);
  }
  Result<store::LedgerMeta> Meta() override { return base_.Meta(); }
  Result<std::string> GetSourcePosition(std::string_view source) override {
    return base_.GetSourcePosition(source);
  }
  store::CommitStats Stats() const override { return base_.Stats(); }
  Result<store::RebuildReport> Rebuild(bool repair) override { return base_.Rebuild(repair); }
  Status Backup(const std::string& dir) override { return base_.Backup(dir); }
  Result<store::RetentionReport> ApplyRetention(const store::RetentionOptions& options,
                                                Time now) override {
    return base_.ApplyRetention(options, now);
  }

 private:
  store::Ledger& base_;
  std::mutex mu_;
  Predicate fail_;
};

}  // namespace cronledger::controller::testing
