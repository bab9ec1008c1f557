#pragma once

// A store::Ledger decorator that measures, at the moment a unit of work is committed, the creation
// skew of every createJob decision in it: commit time (system clock) - scheduled time. That is
// exactly "scheduled time -> create decision committed". Every other call is forwarded.

#include <atomic>
#include <memory>

#include "bench/controller/skew_histogram.h"
#include "model/clock.h"
#include "store/ledger.h"

namespace cronledger::bench {

class MeasuringLedger final : public store::Ledger {
 public:
  // `inner` is owned; `wall` is not and must outlive the decorator.
  MeasuringLedger(std::unique_ptr<store::Ledger> inner, const WallClock& wall);

  // Only createJob decisions whose scheduled time is in [from, until) are measured.
  void SetWindow(Time from, Time until);
  const SkewHistogram& skew() const { return skew_; }
  uint64_t decisions() const { return decisions_.load(); }
  uint64_t creates_in_window() const { return skew_.count(); }

  Result<store::CommitResult> Commit(store::UnitOfWork unit) override;

  Result<model::CronJob> GetCronJob(std::string_view ns, std::string_view name) override {
    return inner_->GetCronJob(ns, name);
  }
  Result<store::ViewObject> GetObject(model::ObjectKind kind, std::string_view ns,
                                      std::string_view name) override {
    return inner_->GetObject(kind, ns, name);
  }
  Result<std::vector<model::Job>> ListJobsByOwner(std::string_view ns,
                                                  std::string_view owner) override {
    return inner_->ListJobsByOwner(ns, owner);
  }
  Result<std::vector<store::ObjectEntry>> ListCronJobEntries() override {
    return inner_->ListCronJobEntries();
  }
  Result<std::vector<model::CronJob>> ListCronJobs() override { return inner_->ListCronJobs(); }
  Result<store::CronJobView> ReadCronJobView(std::string_view ns, std::string_view name) override {
    return inner_->ReadCronJobView(ns, name);
  }
  Result<std::string> GetResourceVersion(std::string_view resource) override {
    return inner_->GetResourceVersion(resource);
  }
  Result<std::string> GetControllerState(std::string_view key) override {
    return inner_->GetControllerState(key);
  }
  Status ScanInputs(uint64_t from_seq, bool with_raw,
                    const std::function<bool(const store::LogRecord&)>& fn) override {
    return inner_->ScanInputs(from_seq, with_raw, fn);
  }
  Status ScanDecisions(uint64_t from_seq,
                       const std::function<bool(const model::Decision&)>& fn) override {
    return inner_->ScanDecisions(from_seq, fn);
  }
  Result<std::vector<model::Decision>> DecisionsByCronJob(std::string_view ns,
                                                          std::string_view name, Time from, Time to,
                                                          size_t limit) override {
    return inner_->DecisionsByCronJob(ns, name, from, to, limit);
  }
  Result<std::vector<model::Decision>> DecisionsByActionReason(
      std::optional<model::DecisionAction> action, std::string_view reason, Time from, Time to,
      size_t limit) override {
    return inner_->DecisionsByActionReason(action, reason, from, to, limit);
  }
  Result<std::vector<store::QuarantineEntry>> ListQuarantine(uint64_t from_id,
                                                             size_t limit) override {
    return inner_->ListQuarantine(from_id, limit);
  }
  Result<store::LedgerMeta> Meta() override { return inner_->Meta(); }
  Result<std::string> GetSourcePosition(std::string_view source) override {
    return inner_->GetSourcePosition(source);
  }
  store::CommitStats Stats() const override { return inner_->Stats(); }
  Result<store::RebuildReport> Rebuild(bool repair) override { return inner_->Rebuild(repair); }
  Status Backup(const std::string& dir) override { return inner_->Backup(dir); }
  Result<store::RetentionReport> ApplyRetention(const store::RetentionOptions& options,
                                                Time now) override {
    return inner_->ApplyRetention(options, now);
  }

 private:
  std::unique_ptr<store::Ledger> inner_;
  const WallClock& wall_;
  std::atomic<int64_t> from_nanos_{INT64_MAX};
  std::atomic<int64_t> until_nanos_{INT64_MAX};
  std::atomic<uint64_t> decisions_{0};
  SkewHistogram skew_;
};

}  // namespace cronledger::bench
