#pragma once

// Test and benchmark code only. A Ledger that forwards every call to another one; a wrapper that
// injects failures, counts reads or measures commits derives from it and overrides just those
// calls (every other call, including ones added to Ledger later, keeps reaching the real ledger).

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "store/ledger.h"

namespace cronledger::store::testing {

class ForwardingLedger : public Ledger {
 public:
  explicit ForwardingLedger(Ledger& base) : base_(base) {}

  Result<CommitResult> Commit(UnitOfWork unit) override { return base_.Commit(std::move(unit)); }
  Result<model::CronJob> GetCronJob(std::string_view ns, std::string_view name) override {
    return base_.GetCronJob(ns, name);
  }
  Result<ViewObject> GetObject(model::ObjectKind kind, std::string_view ns,
                               std::string_view name) override {
    return base_.GetObject(kind, ns, name);
  }
  Result<std::vector<model::Job>> ListJobsByOwner(std::string_view ns,
                                                  std::string_view owner) override {
    return base_.ListJobsByOwner(ns, owner);
  }
  Result<std::vector<ObjectEntry>> ListCronJobEntries() override {
    return base_.ListCronJobEntries();
  }
  Result<std::vector<model::CronJob>> ListCronJobs() override { return base_.ListCronJobs(); }
  Result<CronJobView> ReadCronJobView(std::string_view ns, std::string_view name) override {
    return base_.ReadCronJobView(ns, name);
  }
  Result<uint64_t> ScanViewObjects(const std::function<Status(ViewObject object)>& fn) override {
    return base_.ScanViewObjects(fn);
  }
  Result<std::string> GetInputRaw(uint64_t seq) override { return base_.GetInputRaw(seq); }
  Result<std::string> GetResourceVersion(std::string_view resource) override {
    return base_.GetResourceVersion(resource);
  }
  Result<std::string> GetControllerState(std::string_view key) override {
    return base_.GetControllerState(key);
  }
  Status ScanInputs(uint64_t from_seq, bool with_raw,
                    const std::function<bool(const LogRecord&)>& fn) override {
    return base_.ScanInputs(from_seq, with_raw, fn);
  }
  Status ScanWatchEvents(
      uint64_t from_seq,
      const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn) override {
    return base_.ScanWatchEvents(from_seq, fn);
  }
  uint64_t EstimatedViewKeys() override { return base_.EstimatedViewKeys(); }
  Status ScanWatchEventsReadAhead(
      uint64_t from_seq,
      const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn) override {
    return base_.ScanWatchEventsReadAhead(from_seq, fn);
  }
  Status ScanDecisions(uint64_t from_seq,
                       const std::function<bool(const model::Decision&)>& fn) override {
    return base_.ScanDecisions(from_seq, fn);
  }
  Status ScanStoredInputs(uint64_t from_seq,
                          const std::function<bool(const StoredInput&)>& fn) override {
    return base_.ScanStoredInputs(from_seq, fn);
  }
  Status ScanTrail(std::string_view prefix, std::string_view from_key,
                   const std::function<bool(std::string_view, std::string_view)>& fn) override {
    return base_.ScanTrail(prefix, from_key, fn);
  }
  Result<std::string> GetTrail(std::string_view key) override { return base_.GetTrail(key); }
  Status WriteTrail(const std::vector<std::pair<std::string, std::string>>& puts) override {
    return base_.WriteTrail(puts);
  }
  Status ScanDecisionBytes(uint64_t from_seq,
                           const std::function<bool(uint64_t, std::string_view)>& fn) override {
    return base_.ScanDecisionBytes(from_seq, fn);
  }
  Result<std::vector<model::Decision>> DecisionsByCronJob(std::string_view ns,
                                                          std::string_view name, Time from, Time to,
                                                          size_t limit) override {
    return base_.DecisionsByCronJob(ns, name, from, to, limit);
  }
  Result<std::vector<model::Decision>> DecisionSummariesByCronJob(std::string_view ns,
                                                                  std::string_view name, Time from,
                                                                  Time to, size_t limit) override {
    return base_.DecisionSummariesByCronJob(ns, name, from, to, limit);
  }
  Result<std::vector<model::Decision>> DecisionsByActionReason(
      std::optional<model::DecisionAction> action, std::string_view reason, Time from, Time to,
      size_t limit) override {
    return base_.DecisionsByActionReason(action, reason, from, to, limit);
  }
  Result<std::vector<std::string>> DecisionCronJobNames(std::string_view ns) override {
    return base_.DecisionCronJobNames(ns);
  }
  Result<std::vector<QuarantineEntry>> ListQuarantine(uint64_t from_id, size_t limit) override {
    return base_.ListQuarantine(from_id, limit);
  }
  Result<LedgerMeta> Meta() override { return base_.Meta(); }
  Result<std::string> GetSourcePosition(std::string_view source) override {
    return base_.GetSourcePosition(source);
  }
  CommitStats Stats() const override { return base_.Stats(); }
  Status WriteHealth() const override { return base_.WriteHealth(); }
  DecisionReadStats DecisionReads() const override { return base_.DecisionReads(); }
  Status Refresh() override { return base_.Refresh(); }
  Status SyncAuditIndex() override { return base_.SyncAuditIndex(); }
  Result<RebuildReport> Rebuild(bool repair) override { return base_.Rebuild(repair); }
  Status Backup(const std::string& dir) override { return base_.Backup(dir); }
  Result<RetentionReport> ApplyRetention(const RetentionOptions& options, Time now) override {
    return base_.ApplyRetention(options, now);
  }

 protected:
  Ledger& base() { return base_; }

 private:
  Ledger& base_;
};

}  // namespace cronledger::store::testing
