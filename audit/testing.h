#pragma once

// Test helpers for audit/: a hand-built ledger on a real RocksDB temp store. Test code only.

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "audit/divergences.h"
#include "model/decision.h"
#include "model/inputs.h"
#include "model/json.h"
#include "store/ledger.h"
#include "store/test_util.h"
#include "store/testing/forwarding_ledger.h"

namespace cronledger::audit::testing {

// 2026-01-01T00:00:00Z + h hours + m minutes + s seconds + ms milliseconds.
inline Time At(int h, int m = 0, int s = 0, int ms = 0) {
  return Time::FromUnix(1767225600 + h * 3600 + m * 60 + s, ms * 1'000'000);
}

inline model::PolicySnapshot Policy(const std::string& schedule) {
  model::PolicySnapshot p;
  p.schedule = schedule;
  p.time_zone = "UTC";
  p.concurrency_policy = "Forbid";
  return p;
}

class HandLedger {
 public:
  HandLedger() {
    store::LedgerOptions o;
    o.path = dir_.Sub("ledger");
    o.sync = store::SyncMode::kNone;
    o.clock = &clock_;
    auto opened = store::Ledger::Open(o);
    CL_CHECK(opened.ok());
    ledger_ = std::move(*opened);
  }
  store::Ledger& ledger() { return *ledger_; }
  const std::string& path() const { return path_ = dir_.Sub("ledger"); }
  void Close() { ledger_.reset(); }

  void AddCronJob(const std::string& ns, const std::string& name, const std::string& schedule,
                  Time created, bool suspend = false) {
    const std::string raw =
        R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":")" + name +
        R"(","namespace":")" + ns + R"(","uid":"uid-)" + name +
        R"(","resourceVersion":"1","creationTimestamp":")" + FormatRfc3339(created) +
        R"("},"spec":{"schedule":")" + schedule + R"(","timeZone":"UTC","suspend":)" +
        (suspend ? "true" : "false") +
        R"(,"concurrencyPolicy":"Forbid","jobTemplate":{"spec":{}}},"status":{}})";
    model::WatchEvent ev;
    ev.kind = model::ObjectKind::kCronJob;
    ev.api_version = "batch/v1";
    ev.namespace_ = ns;
    ev.name = name;
    ev.uid = "uid-" + name;
    ev.resource_version = "1";
    ev.raw = raw;
    Commit({ev}, {});
  }

  // The CronJob's DELETED watch event: the view drops it, its decisions stay.
  void DeleteCronJob(const std::string& ns, const std::string& name) {
    model::WatchEvent ev;
    ev.type = model::WatchEventType::kDeleted;
    ev.kind = model::ObjectKind::kCronJob;
    ev.api_version = "batch/v1";
    ev.namespace_ = ns;
    ev.name = name;
    ev.uid = "uid-" + name;
    ev.resource_version = std::to_string(++rv_);
    ev.raw = R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":")" + name +
             R"(","namespace":")" + ns + R"(","uid":"uid-)" + name + R"(","resourceVersion":")" +
             ev.resource_version +
             R"("},"spec":{"schedule":"0 * * * *","jobTemplate":{"spec":{}}}})";
    Commit({ev}, {});
  }

  // A Job watch event; `condition` "" (running), "Complete" or "Failed".
  void AddJob(const std::string& ns, const std::string& owner, const std::string& job,
              const std::string& condition) {
    std::string status =
        condition.empty() ? "{}"
                          : R"({"conditions":[{"type":")" + condition + R"(","status":"True"}]})";
    model::WatchEvent ev;
    ev.type = condition.empty() ? model::WatchEventType::kAdded : model::WatchEventType::kModified;
    ev.kind = model::ObjectKind::kJob;
    ev.api_version = "batch/v1";
    ev.namespace_ = ns;
    ev.name = job;
    ev.uid = "uid-" + job;
    ev.resource_version = std::to_string(++rv_);
    ev.owner_name = owner;
    ev.owner_uid = "uid-" + owner;
    ev.raw = R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":")" + job +
             R"(","namespace":")" + ns + R"(","uid":"uid-)" + job + R"(","resourceVersion":")" +
             ev.resource_version +
             R"(","ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":")" + owner +
             R"(","uid":"uid-)" + owner + R"(","controller":true}]},"spec":{},"status":)" + status +
             "}";
    Commit({ev}, {});
  }

  // From now on, createJob decisions carry their Job object and updateStatus ones a status, as
  // the controller's do (by default they carry neither).
  void WithJsonMembers() { json_members_ = true; }

  // One pass at `now` with one decision.
  void Decide(const std::string& ns, const std::string& name, Time now,
              model::DecisionAction action, std::optional<Time> scheduled,
              const std::string& reason = "", const std::string& schedule = "0 * * * *",
              std::optional<Time> range_end = std::nullopt) {
    model::Tick tick{now, ns, name, "timer"};
    model::Decision d;
    d.time = now;
    d.cron_job = {ns, name, "uid-" + name};
    d.action = action;
    d.scheduled_time = scheduled;
    d.range_end = range_end;
    d.reason = reason;
    if (action == model::DecisionAction::kCreateJob && scheduled) {
      d.job_name = JobName(name, *scheduled);
      if (json_members_) {
        d.job_object = model::Json{{"apiVersion", "batch/v1"},
                                   {"kind", "Job"},
                                   {"metadata", {{"name", *d.job_name}, {"namespace", ns}}}};
      }
    }
    if (action == model::DecisionAction::kUpdateStatus && json_members_) {
      d.status = model::Json{{"lastScheduleTime", FormatRfc3339(now)}};
    }
    d.policy = Policy(schedule);
    Commit({tick}, {d});
  }

  // The controller's state blob for ns/name (controller/reconcile_pass.cc's format).
  void SetAccounting(const std::string& ns, const std::string& name, const std::string& uid,
                     const model::AccountingState& s) {
    store::UnitOfWork u;
    u.controller_state.emplace_back(
        ns + "/" + name, model::DumpJson(model::Json{
                             {"uid", uid}, {"accounting", model::EncodeAccountingState(s)}}));
    auto r = ledger_->Commit(std::move(u));
    CL_CHECK(r.ok());
  }

  // A shadow-mode divergence recorded at `time`, as the shadow auditor commits it (the ledger's
  // clock, which stamps the input, reads `time` too); returns its input seq.
  uint64_t AddDivergence(Time time, const std::string& kind, const std::string& ns,
                         const std::string& cron_job, const std::string& job,
                         model::Json detail = model::Json::object()) {
    clock_.Set(time);
    return CommitInput(DivergenceRecord(time, kind, ns, cron_job, job, std::move(detail)));
  }

  // Any input alone; returns its seq.
  uint64_t CommitInput(model::Input input) {
    store::UnitOfWork u;
    u.inputs.push_back(std::move(input));
    auto r = ledger_->Commit(std::move(u));
    CL_CHECK(r.ok());
    return r->first_input_seq;
  }

  static std::string JobName(const std::string& cron_job, Time scheduled) {
    return cron_job + "-" + std::to_string(scheduled.unix_seconds() / 60);
  }

 private:
  void Commit(std::vector<model::Input> inputs, std::vector<model::Decision> decisions) {
    store::UnitOfWork u;
    u.inputs = std::move(inputs);
    u.decisions = std::move(decisions);
    auto r = ledger_->Commit(std::move(u));
    CL_CHECK(r.ok());
  }

  store::testing::TempDir dir_;
  store::testing::ManualClock clock_{At(0)};
  std::unique_ptr<store::Ledger> ledger_;
  mutable std::string path_;
  int rv_ = 100;
  bool json_members_ = false;
};

// A Ledger that forwards to another and counts the decision records each read path returns, so a
// test can show that a query is served from an index (records read ~ records matched), never
// scans the decision log, and (LogReads) how many decisions the store read from the decision log
// by seq rather than from the index entries.
class CountingLedger : public store::testing::ForwardingLedger {
 public:
  explicit CountingLedger(store::Ledger& inner) : ForwardingLedger(inner) { Reset(); }

  uint64_t by_cronjob = 0;        // records returned by DecisionsByCronJob
  uint64_t summaries = 0;         // ... by DecisionSummariesByCronJob
  uint64_t by_action_reason = 0;  // ... by DecisionsByActionReason (incl. the time index)
  uint64_t log_scanned = 0;       // records visited by ScanDecisions
  uint64_t index_calls = 0;
  uint64_t name_calls = 0;  // DecisionCronJobNames calls (a skip scan of the CronJob index)
  uint64_t Read() const { return by_cronjob + summaries + by_action_reason + log_scanned; }
  // Since Reset(): decisions the store read from the decision log by seq (point reads), and those
  // it took from CronJob index entries alone (store::Ledger::DecisionReads).
  uint64_t LogReads() { return base().DecisionReads().log_reads - start_.log_reads; }
  uint64_t FromIndex() { return base().DecisionReads().from_index - start_.from_index; }
  // Since Reset(): Job templates the store read for whole records from the CronJob index.
  uint64_t TemplateReads() { return base().DecisionReads().template_reads - start_.template_reads; }
  void Reset() {
    by_cronjob = summaries = by_action_reason = log_scanned = index_calls = name_calls = 0;
    start_ = base().DecisionReads();
  }

  Status ScanDecisions(uint64_t from_seq,
                       const std::function<bool(const model::Decision&)>& fn) override {
    return base().ScanDecisions(from_seq, [&](const model::Decision& d) {
      ++log_scanned;
      return fn(d);
    });
  }
  Result<std::vector<model::Decision>> DecisionsByCronJob(std::string_view ns,
                                                          std::string_view name, Time from, Time to,
                                                          size_t limit) override {
    auto r = base().DecisionsByCronJob(ns, name, from, to, limit);
    ++index_calls;
    if (r.ok()) by_cronjob += r->size();
    return r;
  }
  Result<std::vector<model::Decision>> DecisionSummariesByCronJob(std::string_view ns,
                                                                  std::string_view name, Time from,
                                                                  Time to, size_t limit) override {
    auto r = base().DecisionSummariesByCronJob(ns, name, from, to, limit);
    ++index_calls;
    if (r.ok()) summaries += r->size();
    return r;
  }
  Result<std::vector<model::Decision>> DecisionsByActionReason(
      std::optional<model::DecisionAction> action, std::string_view reason, Time from, Time to,
      size_t limit) override {
    auto r = base().DecisionsByActionReason(action, reason, from, to, limit);
    ++index_calls;
    if (r.ok()) by_action_reason += r->size();
    return r;
  }
  Result<std::vector<std::string>> DecisionCronJobNames(std::string_view ns) override {
    ++name_calls;
    return base().DecisionCronJobNames(ns);
  }

 private:
  store::DecisionReadStats start_;
};

}  // namespace cronledger::audit::testing
