// --shadow: the ShadowActuator (answers from the view, performs nothing) and the ShadowAuditor
// (divergences between the expected decisions and the Jobs the cluster created). docs/run.md.
#include <utility>

#include "app/support_run.h"
#include "audit/divergences.h"

namespace cronledger::app {
namespace {

using model::ApiKind;
using model::ApiOutcome;
using model::ApiVerb;
using model::Json;

std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

std::string MetaString(const Json& j, const char* field) {
  if (!j.is_object() || !j.contains("metadata") || !j["metadata"].is_object()) return "";
  const Json& m = j["metadata"];
  return m.contains(field) && m[field].is_string() ? m[field].get<std::string>() : "";
}

std::optional<Time> MetaTime(const Json& j, const char* field) {
  auto t = ParseRfc3339(MetaString(j, field));
  return t.ok() ? std::optional<Time>(*t) : std::nullopt;
}

// The controller owner of a requested Job (the reconciler always sets exactly one).
std::string OwnerName(const Json& job) {
  if (!job.is_object() || !job.contains("metadata")) return "";
  const Json& m = job["metadata"];
  if (!m.contains("ownerReferences") || !m["ownerReferences"].is_array()) return "";
  for (const Json& ref : m["ownerReferences"]) {
    if (model::BoolOr(ref, "controller") && ref.contains("name") && ref["name"].is_string()) {
      return ref["name"].get<std::string>();
    }
  }
  return "";
}

// Whether the Job's controller is a batch/v1 CronJob, the kind the auditor audits; Jobs of other
// controllers (cronledger's own CRD CronJobs among them) are not the built-in controller's work.
bool ControlledByBatchCronJob(const Json& job) {
  const Json* refs = nullptr;
  if (job.contains("metadata") && job["metadata"].is_object() &&
      job["metadata"].contains("ownerReferences")) {
    refs = &job["metadata"]["ownerReferences"];
  }
  if (refs == nullptr || !refs->is_array()) return false;
  for (const Json& ref : *refs) {
    if (!ref.is_object() || !model::BoolOr(ref, "controller")) continue;
    const std::string api = model::StringOr(ref, "apiVersion");
    return model::StringOr(ref, "kind") == "CronJob" && api.rfind("batch/", 0) == 0;
  }
  return false;
}

ApiOutcome FromView(store::Ledger& ledger, model::ObjectKind kind, const model::ApiCall& call) {
  auto obj = ledger.GetObject(kind, call.namespace_, call.name);
  if (!obj.ok()) {
    if (!obj.status().IsNotFound())
      return ApiOutcome::Error("InternalError", obj.status().ToString());
    const std::string resource = kind == model::ObjectKind::kJob ? "jobs.batch" : "cronjobs.batch";
    return ApiOutcome::Error(std::string(model::api_reason::kNotFound),
                             resource + " \"" + call.name + "\" not found");
  }
  auto json = model::ParseJson(obj->raw);
  if (!json.ok()) return ApiOutcome::Error("InternalError", json.status().ToString());
  return ApiOutcome::Ok(std::move(json).value());
}

}  // namespace

ApiOutcome ShadowActuator::Perform(const model::ApiCall& call) {
  const model::ObjectKind kind = model::ObjectKindOf(call.kind);
  switch (call.verb) {
    case ApiVerb::kGet:
      return FromView(ledger_, kind, call);
    case ApiVerb::kCreate: {
      ApiOutcome existing = FromView(ledger_, model::ObjectKind::kJob, call);
      if (existing.ok()) {
        // The cluster's controller already created it: the reconciler's AlreadyExists path (GET,
        // adopt when controlled by this CronJob) reproduces what the real controller would see.
        auditor_.Matched(call.namespace_, call.name);
        return ApiOutcome::Error(std::string(model::api_reason::kAlreadyExists),
                                 "jobs.batch \"" + call.name + "\" already exists");
      }
      auditor_.Expect(call, wall_.Now());
      return ApiOutcome::Error("ShadowPending",
                               "shadow mode: waiting for the cluster to create job " + call.name);
    }
    case ApiVerb::kDelete: {
      // Answered as the cluster's controller would see it, without deleting: the pass goes on to
      // what follows the delete (Replace's create), whose expectation the auditor then holds. The
      // cluster's own delete arrives through the watch; until then a retried pass deletes again.
      ApiOutcome existing = FromView(ledger_, model::ObjectKind::kJob, call);
      if (!existing.ok()) return existing;
      return ApiOutcome::Ok(nullptr);
    }
    case ApiVerb::kUpdateStatus: {
      ApiOutcome current = FromView(ledger_, model::ObjectKind::kCronJob, call);
      if (!current.ok()) return current;
      // What a successful write would return, without writing: the decided status on the
      // cluster's object. The cluster's own status arrives through the watch.
      Json object = std::move(current.object);
      if (call.object.is_object() && call.object.contains("status")) {
        object["status"] = call.object["status"];
      }
      return ApiOutcome::Ok(std::move(object));
    }
  }
  return ApiOutcome::Error("MethodNotAllowed", "not an action of the controller");
}

ShadowAuditor::ShadowAuditor(store::Ledger& ledger, const WallClock& wall, Duration grace,
                             RunLogFn log)
    : ledger_(ledger), wall_(wall), grace_(grace), started_(wall.Now()), log_(std::move(log)) {}

void ShadowAuditor::Expect(const model::ApiCall& create, Time now) {
  std::lock_guard lock(mu_);
  const std::string key = Key(create.namespace_, create.name);
  if (auto s = seen_.find(key); s != seen_.end()) {
    s->second.expected = true;  // the view lags the auditor: the Job was seen meanwhile
    return;
  }
  expected_.try_emplace(key, Expected{create.object, now, false});
}

void ShadowAuditor::Matched(const std::string& ns, const std::string& name) {
  std::lock_guard lock(mu_);
  const std::string key = Key(ns, name);
  // The view can hold the Job before its watch event reaches Observe: remember the match, so the
  // event that follows finds the Job expected.
  auto [s, inserted] = seen_.try_emplace(key, Seen{"", wall_.Now(), Time(), true});
  if (!inserted) s->second.expected = true;
  auto e = expected_.find(key);
  if (e != expected_.end() && !e->second.missed) expected_.erase(e);
}

void ShadowAuditor::Observe(const std::vector<model::WatchEvent>& events) {
  std::lock_guard lock(mu_);
  for (const model::WatchEvent& ev : events) {
    if (ev.kind != model::ObjectKind::kJob || ev.type != model::WatchEventType::kAdded ||
        ev.owner_name.empty()) {
      continue;
    }
    auto json = model::ParseJson(ev.raw);
    if (!json.ok() || !ControlledByBatchCronJob(*json)) continue;
    const std::optional<Time> created = MetaTime(*json, "creationTimestamp");
    const std::string key = Key(ev.namespace_, ev.name);
    auto e = expected_.find(key);
    if (e != expected_.end()) {
      if (e->second.missed) {
        // Recorded as missed; it came after all: a late run, with its skew.
        const std::optional<Time> scheduled = MetaTime(e->second.job, "creationTimestamp");
        Json detail = {{"job", ev.name}, {"observedAt", FormatRfc3339Nano(wall_.Now())}};
        if (created && scheduled) {
          detail["scheduledTime"] = FormatRfc3339(*scheduled);
          detail["skewSeconds"] = created->Sub(*scheduled).count() / 1e9;
        }
        due_.push_back([this, ns = ev.namespace_, cj = ev.owner_name, job = ev.name, detail] {
          return Record(audit::kLateRun, ns, cj, job, detail);
        });
      }
      expected_.erase(e);
      seen_[key] = Seen{ev.owner_name, wall_.Now(), created.value_or(Time()), true};
      continue;
    }
    if (!created || *created < started_) continue;  // history from before the audit started
    seen_.try_emplace(key, Seen{ev.owner_name, wall_.Now(), *created, false});
  }
}

Result<size_t> ShadowAuditor::Check() {
  std::vector<std::function<Status()>> records;
  {
    std::lock_guard lock(mu_);
    const Time now = wall_.Now();
    records = std::move(due_);
    due_.clear();
    for (auto& [key, e] : expected_) {
      if (e.missed || now.Sub(e.since) < grace_) continue;
      e.missed = true;
      const std::string ns = key.substr(0, key.find('/'));
      const std::string job = key.substr(key.find('/') + 1);
      Json detail = {{"job", job}, {"expectedSince", FormatRfc3339Nano(e.since)}};
      if (auto t = MetaTime(e.job, "creationTimestamp"))
        detail["scheduledTime"] = FormatRfc3339(*t);
      records.push_back([this, ns, cj = OwnerName(e.job), job, detail] {
        return Record(audit::kMissedRun, ns, cj, job, detail);
      });
    }
    for (auto it = seen_.begin(); it != seen_.end();) {
      Seen& s = it->second;
      if (s.expected || now.Sub(s.at) < grace_) {
        // Matched Jobs are forgotten after the grace period; nothing can diverge for them now.
        it = (s.expected && now.Sub(s.at) >= grace_) ? seen_.erase(it) : std::next(it);
        continue;
      }
      const std::string ns = it->first.substr(0, it->first.find('/'));
      const std::string job = it->first.substr(it->first.find('/') + 1);
      Json detail = {{"job", job},
                     {"createdAt", FormatRfc3339(s.created)},
                     {"observedAt", FormatRfc3339Nano(s.at)}};
      records.push_back([this, ns, cj = s.cron_job, job, detail] {
        return Record(audit::kUnexpectedJob, ns, cj, job, detail);
      });
      it = seen_.erase(it);
    }
  }
  for (auto& record : records) CL_RETURN_IF_ERROR(record());
  return records.size();
}

Status ShadowAuditor::Record(const std::string& kind, const std::string& ns,
                             const std::string& cron_job, const std::string& job, Json detail) {
  if (log_) log_("shadow divergence " + kind + ": " + ns + "/" + cron_job + " job " + job);
  store::UnitOfWork unit;
  unit.inputs.push_back(
      audit::DivergenceRecord(wall_.Now(), kind, ns, cron_job, job, std::move(detail)));
  CL_RETURN_IF_ERROR(ledger_.Commit(std::move(unit)).status());
  std::lock_guard lock(counts_mu_);
  ++counts_[kind];
  return Status::Ok();
}

std::map<std::string, uint64_t> ShadowAuditor::RecordedCounts() const {
  std::lock_guard lock(counts_mu_);
  return counts_;
}

}  // namespace cronledger::app
