#include "model/decision.h"

#include <array>
#include <utility>

#include "model/objects.h"

namespace cronledger::model {
namespace {

constexpr std::array<std::pair<DecisionAction, std::string_view>, 7> kActions = {{
    {DecisionAction::kScheduled, "scheduled"},
    {DecisionAction::kSkipped, "skipped"},
    {DecisionAction::kCreateJob, "createJob"},
    {DecisionAction::kDeleteJob, "deleteJob"},
    {DecisionAction::kUpdateStatus, "updateStatus"},
    {DecisionAction::kEvent, "event"},
    {DecisionAction::kRequeue, "requeue"},
}};

Result<std::optional<Time>> OptNanoTime(const Json& j, std::string_view key,
                                        std::string_view path) {
  return OptTime(j, key, path);
}

Result<uint64_t> ReqUint(const Json& j, std::string_view key, std::string_view path) {
  CL_ASSIGN_OR_RETURN(auto v, OptInt(j, key, path));
  if (v.value_or(0) < 0) {
    return Status::InvalidArgument(std::string(path) + "." + std::string(key) + ": negative");
  }
  return static_cast<uint64_t>(v.value_or(0));
}

}  // namespace

std::string_view DecisionActionName(DecisionAction a) {
  for (const auto& [action, name] : kActions) {
    if (action == a) return name;
  }
  return "unknown";
}

Result<DecisionAction> ParseDecisionAction(std::string_view s) {
  for (const auto& [action, name] : kActions) {
    if (name == s) return action;
  }
  return Status::InvalidArgument("unknown decision action \"" + std::string(s) + "\"");
}

PolicySnapshot SnapshotPolicy(const CronJobSpec& spec) {
  PolicySnapshot p;
  p.schedule = spec.schedule;
  p.time_zone = spec.time_zone;
  p.concurrency_policy = spec.concurrency_policy;
  p.starting_deadline_seconds = spec.starting_deadline_seconds;
  p.suspend = spec.suspend.value_or(false);
  return p;
}

Json EncodeDecision(const Decision& d) {
  Json j = Json::object();
  j["seq"] = d.seq;
  j["time"] = FormatRfc3339Nano(d.time);
  j["cronJob"] = {
      {"namespace", d.cron_job.namespace_}, {"name", d.cron_job.name}, {"uid", d.cron_job.uid}};
  j["action"] = DecisionActionName(d.action);
  if (d.scheduled_time) j["scheduledTime"] = FormatRfc3339Nano(*d.scheduled_time);
  if (d.range_end) j["rangeEnd"] = FormatRfc3339Nano(*d.range_end);
  if (!d.reason.empty()) j["reason"] = d.reason;
  if (d.job_name || !d.job_object.is_null()) {
    Json job = Json::object();
    if (d.job_name) job["name"] = *d.job_name;
    if (!d.job_object.is_null()) job["object"] = d.job_object;
    j["job"] = std::move(job);
  }
  if (d.event_type) j["eventType"] = *d.event_type;
  if (d.message) j["message"] = *d.message;
  if (d.requeue_after) {
    j["requeueAfterSeconds"] = static_cast<double>(d.requeue_after->count()) / 1e9;
    j["requeueAfterNanos"] = d.requeue_after->count();
  }
  if (!d.status.is_null()) j["status"] = d.status;
  j["cause"] = {
      {"tickSeq", d.cause.tick_seq}, {"inputSeq", d.cause.input_seq}, {"trigger", d.cause.trigger}};
  Json policy = Json::object();
  policy["schedule"] = d.policy.schedule;
  policy["timeZone"] = d.policy.time_zone ? Json(*d.policy.time_zone) : Json(nullptr);
  policy["concurrencyPolicy"] = d.policy.concurrency_policy;
  policy["startingDeadlineSeconds"] = d.policy.starting_deadline_seconds
                                          ? Json(*d.policy.starting_deadline_seconds)
                                          : Json(nullptr);
  policy["suspend"] = d.policy.suspend;
  j["policy"] = std::move(policy);
  return j;
}

Result<Decision> DecodeDecision(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("decision: expected object");
  Decision d;
  CL_ASSIGN_OR_RETURN(d.seq, ReqUint(j, "seq", "decision"));
  CL_ASSIGN_OR_RETURN(auto time, OptNanoTime(j, "time", "decision"));
  if (!time) return Status::InvalidArgument("decision.time: required");
  d.time = *time;
  CL_ASSIGN_OR_RETURN(Json cj, OptObject(j, "cronJob", "decision"));
  CL_ASSIGN_OR_RETURN(auto ns, OptString(cj, "namespace", "decision.cronJob"));
  CL_ASSIGN_OR_RETURN(auto name, OptString(cj, "name", "decision.cronJob"));
  CL_ASSIGN_OR_RETURN(auto uid, OptString(cj, "uid", "decision.cronJob"));
  d.cron_job = {ns.value_or(""), name.value_or(""), uid.value_or("")};
  CL_ASSIGN_OR_RETURN(auto action, OptString(j, "action", "decision"));
  CL_ASSIGN_OR_RETURN(d.action, ParseDecisionAction(action.value_or("")));
  CL_ASSIGN_OR_RETURN(d.scheduled_time, OptNanoTime(j, "scheduledTime", "decision"));
  CL_ASSIGN_OR_RETURN(d.range_end, OptNanoTime(j, "rangeEnd", "decision"));
  CL_ASSIGN_OR_RETURN(auto reason, OptString(j, "reason", "decision"));
  d.reason = reason.value_or("");
  CL_ASSIGN_OR_RETURN(Json job, OptObject(j, "job", "decision"));
  CL_ASSIGN_OR_RETURN(d.job_name, OptString(job, "name", "decision.job"));
  if (job.contains("object")) d.job_object = job["object"];
  CL_ASSIGN_OR_RETURN(d.event_type, OptString(j, "eventType", "decision"));
  CL_ASSIGN_OR_RETURN(d.message, OptString(j, "message", "decision"));
  CL_ASSIGN_OR_RETURN(auto requeue, OptInt(j, "requeueAfterNanos", "decision"));
  if (requeue) d.requeue_after = Duration(*requeue);
  if (j.contains("status")) d.status = j["status"];
  CL_ASSIGN_OR_RETURN(Json cause, OptObject(j, "cause", "decision"));
  CL_ASSIGN_OR_RETURN(d.cause.tick_seq, ReqUint(cause, "tickSeq", "decision.cause"));
  CL_ASSIGN_OR_RETURN(d.cause.input_seq, ReqUint(cause, "inputSeq", "decision.cause"));
  CL_ASSIGN_OR_RETURN(auto trigger, OptString(cause, "trigger", "decision.cause"));
  d.cause.trigger = trigger.value_or("");
  CL_ASSIGN_OR_RETURN(Json policy, OptObject(j, "policy", "decision"));
  CL_ASSIGN_OR_RETURN(auto schedule, OptString(policy, "schedule", "decision.policy"));
  d.policy.schedule = schedule.value_or("");
  CL_ASSIGN_OR_RETURN(d.policy.time_zone, OptString(policy, "timeZone", "decision.policy"));
  CL_ASSIGN_OR_RETURN(auto cp, OptString(policy, "concurrencyPolicy", "decision.policy"));
  d.policy.concurrency_policy = cp.value_or("");
  CL_ASSIGN_OR_RETURN(d.policy.starting_deadline_seconds,
                      OptInt(policy, "startingDeadlineSeconds", "decision.policy"));
  CL_ASSIGN_OR_RETURN(auto suspend, OptBool(policy, "suspend", "decision.policy"));
  d.policy.suspend = suspend.value_or(false);
  return d;
}

std::string CanonicalDecisionBytes(const Decision& d) { return DumpJson(EncodeDecision(d)); }

Json EncodeAccountingState(const AccountingState& s) {
  Json j = Json::object();
  auto put_time = [&j](const char* key, const std::optional<Time>& t) {
    j[key] = t ? Json(FormatRfc3339Nano(*t)) : Json(nullptr);
  };
  put_time("accountedThrough", s.accounted_through);
  put_time("pendingSlot", s.pending_slot);
  j["pendingReason"] = s.pending_reason;
  j["blockedReason"] = s.blocked_reason;
  j["blockedKey"] = s.blocked_key;
  put_time("blockedUntil", s.blocked_until);
  return j;
}

Result<AccountingState> DecodeAccountingState(const Json& j) {
  if (!j.is_object()) return Status::InvalidArgument("accountingState: expected object");
  const std::string_view path = "accountingState";
  AccountingState s;
  CL_ASSIGN_OR_RETURN(s.accounted_through, OptNanoTime(j, "accountedThrough", path));
  CL_ASSIGN_OR_RETURN(s.pending_slot, OptNanoTime(j, "pendingSlot", path));
  CL_ASSIGN_OR_RETURN(auto pending_reason, OptString(j, "pendingReason", path));
  s.pending_reason = pending_reason.value_or("");
  CL_ASSIGN_OR_RETURN(auto blocked_reason, OptString(j, "blockedReason", path));
  s.blocked_reason = blocked_reason.value_or("");
  CL_ASSIGN_OR_RETURN(auto blocked_key, OptString(j, "blockedKey", path));
  s.blocked_key = blocked_key.value_or("");
  CL_ASSIGN_OR_RETURN(s.blocked_until, OptNanoTime(j, "blockedUntil", path));
  return s;
}

}  // namespace cronledger::model
