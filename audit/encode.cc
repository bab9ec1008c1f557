// JSON shapes of audit results (audit/encode.h).
#include "audit/encode.h"

#include <cmath>

namespace cronledger::audit {
namespace {

model::Json Percent(std::optional<double> p) {
  if (!p) return nullptr;
  return std::round(*p * 100.0) / 100.0;
}

}  // namespace

model::Json Seconds(Duration d) { return static_cast<double>(d.count() / 1'000'000) / 1000.0; }

model::Json DecisionRow(const model::Decision& d) {
  model::Json j = model::Json::object();
  j["seq"] = d.seq;
  j["time"] = FormatRfc3339Nano(d.time);
  j["namespace"] = d.cron_job.namespace_;
  j["name"] = d.cron_job.name;
  j["action"] = std::string(model::DecisionActionName(d.action));
  j["scheduledTime"] = d.scheduled_time ? FormatRfc3339(*d.scheduled_time) : "";
  if (d.range_end)
    j["scheduledTime"] = j["scheduledTime"].get<std::string>() + ".." + FormatRfc3339(*d.range_end);
  j["reason"] = d.reason;
  j["job"] = d.job_name.value_or("");
  return j;
}

model::Json EncodeSourcedDecision(const model::Decision& d, const std::string& source) {
  model::Json j = model::EncodeDecision(d);
  j["source"] = source;
  return j;
}

std::vector<std::string> DecisionRowColumns() {
  return {"seq", "time", "namespace", "name", "action", "scheduledTime", "reason", "job"};
}

model::Json EncodeSlot(const Slot& s) {
  model::Json j = model::Json::object();
  j["scheduledTime"] = FormatRfc3339(s.scheduled);
  j["status"] = s.status;
  if (!s.reason.empty()) j["reason"] = s.reason;
  if (!s.job.empty()) j["job"] = s.job;
  if (s.skew) j["skewSeconds"] = Seconds(*s.skew);
  if (!s.outcome.empty()) j["outcome"] = s.outcome;
  if (s.seq != 0) j["seq"] = s.seq;
  if (!s.expected) j["expected"] = false;
  if (s.held) j["held"] = true;
  if (!s.source.empty()) j["source"] = s.source;
  if (!s.also_decided_by.empty()) {
    j["alsoDecidedBy"] = model::Json::array();
    for (const Slot& o : s.also_decided_by) j["alsoDecidedBy"].push_back(EncodeSlot(o));
  }
  return j;
}

model::Json EncodeAdherence(const CronJobAdherence& a) {
  model::Json j = model::Json::object();
  j["namespace"] = a.namespace_;
  j["name"] = a.name;
  j["uid"] = a.uid;
  j["inView"] = a.in_view;
  j["expected"] = a.expected;
  j["created"] = a.created;
  j["skipped"] = a.skipped;
  j["pending"] = a.pending;
  j["unaccounted"] = a.unaccounted;
  j["pendingHeld"] = a.pending_held;
  j["unexpected"] = a.unexpected;
  j["skippedByReason"] = model::Json::object();
  for (const auto& [reason, n] : a.skipped_by_reason) j["skippedByReason"][reason] = n;
  j["succeeded"] = a.succeeded;
  j["failed"] = a.failed;
  j["running"] = a.running;
  j["outcomeUnknown"] = a.outcome_unknown;
  j["maxSkewSeconds"] = a.max_skew ? Seconds(*a.max_skew) : model::Json(nullptr);
  j["meanSkewSeconds"] = a.mean_skew ? Seconds(*a.mean_skew) : model::Json(nullptr);
  j["adherencePercent"] = Percent(AdherencePercent(a));
  j["executedPercent"] = Percent(ExecutedPercent(a));
  j["scheduleErrors"] = a.schedule_errors;
  if (!a.error.empty()) j["error"] = a.error;
  if (!a.slots.empty()) {
    j["slots"] = model::Json::array();
    for (const Slot& s : a.slots) j["slots"].push_back(EncodeSlot(s));
  }
  j["divergencesByKind"] = model::Json::object();
  for (const auto& [kind, n] : a.divergences_by_kind) j["divergencesByKind"][kind] = n;
  if (!a.divergences.empty()) {
    j["divergences"] = model::Json::array();
    for (const Divergence& d : a.divergences) j["divergences"].push_back(DivergenceJson(d));
  }
  return j;
}

std::vector<std::string> AdherenceColumns() {
  return {"namespace",
          "name",
          "expected",
          "created",
          "skipped",
          "pending",
          "unaccounted",
          "succeeded",
          "failed",
          "maxSkewSeconds",
          "adherencePercent",
          "executedPercent",
          "skippedByReason",
          "pendingHeld",
          "error",
          "divergencesByKind"};
}

model::Json EncodeReport(const AdherenceReport& r) {
  model::Json j = model::Json::object();
  j["since"] = FormatRfc3339(r.since);
  j["until"] = FormatRfc3339(r.until);
  j["horizon"] = r.horizon ? model::Json(FormatRfc3339Nano(*r.horizon)) : model::Json(nullptr);
  model::Json totals = EncodeAdherence(r.totals);
  totals.erase("namespace");
  totals.erase("name");
  totals.erase("uid");
  totals.erase("inView");
  totals.erase("meanSkewSeconds");
  totals.erase("scheduleErrors");
  j["totals"] = std::move(totals);
  j["items"] = model::Json::array();
  for (const CronJobAdherence& a : r.items) j["items"].push_back(EncodeAdherence(a));
  return j;
}

}  // namespace cronledger::audit
