#include "model/decision.h"

#include <array>
#include <charconv>
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

// The direct writer behind CanonicalDecisionBytes and AccountingStateBytes. It writes what
// DumpJson (nlohmann's serializer: compact, ensure_ascii=false, invalid UTF-8 replaced) writes for
// the same tree: object keys in byte order, integers in decimal. Strings that are plain
// printable ASCII without '"' or '\\' (nearly all of them) are copied; any other string, a
// double, and the embedded Json values go through nlohmann's own serializer, so escaping and
// number formatting are nlohmann's by construction.
void AppendJsonValue(const Json& j, std::string* out) {
  nlohmann::detail::serializer<Json> s(nlohmann::detail::output_adapter<char, std::string>(*out),
                                       ' ', Json::error_handler_t::replace);
  s.dump(j, /*pretty_print=*/false, /*ensure_ascii=*/false, /*indent_step=*/0);
}

void AppendString(std::string_view s, std::string* out) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u > 0x7e || c == '"' || c == '\\') {
      AppendJsonValue(Json(std::string(s)), out);
      return;
    }
  }
  out->push_back('"');
  out->append(s);
  out->push_back('"');
}

template <typename Int>
void AppendInt(Int v, std::string* out) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out->append(buf, r.ptr);
}

// An embedded Json value (the job object, the status) as DumpJson writes it: objects (keys in
// the std::map's byte order), arrays, plain strings, integers, booleans and null written here,
// the same text nlohmann's compact serializer writes for them; strings that need escaping,
// doubles and anything else go through AppendJsonValue (the serializer itself).
void AppendJsonTree(const Json& j, std::string* out) {
  switch (j.type()) {
    case Json::value_t::object: {
      out->push_back('{');
      bool first = true;
      for (const auto& [key, value] : j.get_ref<const Json::object_t&>()) {
        if (!first) out->push_back(',');
        first = false;
        AppendString(key, out);
        out->push_back(':');
        AppendJsonTree(value, out);
      }
      out->push_back('}');
      return;
    }
    case Json::value_t::array: {
      out->push_back('[');
      bool first = true;
      for (const Json& value : j.get_ref<const Json::array_t&>()) {
        if (!first) out->push_back(',');
        first = false;
        AppendJsonTree(value, out);
      }
      out->push_back(']');
      return;
    }
    case Json::value_t::string:
      AppendString(j.get_ref<const std::string&>(), out);
      return;
    case Json::value_t::number_integer:
      AppendInt(j.get<int64_t>(), out);
      return;
    case Json::value_t::number_unsigned:
      AppendInt(j.get<uint64_t>(), out);
      return;
    case Json::value_t::boolean:
      out->append(j.get<bool>() ? "true" : "false");
      return;
    case Json::value_t::null:
      out->append("null");
      return;
    default:  // doubles, binary, discarded
      AppendJsonValue(j, out);
      return;
  }
}

// RFC 3339 text is plain ASCII: no escaping to look for.
void AppendTime(Time t, std::string* out) {
  out->push_back('"');
  AppendRfc3339Nano(t, out);
  out->push_back('"');
}

void AppendOptTime(const std::optional<Time>& t, std::string* out) {
  if (t) {
    AppendTime(*t, out);
  } else {
    out->append("null");
  }
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

std::string CanonicalDecisionBytes(const Decision& d) {
  std::string out;
  out.reserve(512);
  AppendCanonicalDecisionBytes(d, &out);
  return out;
}

// The keys of EncodeDecision in the order nlohmann's std::map holds them (byte order).
void AppendCanonicalDecisionBytes(const Decision& d, std::string* out) {
  out->append("{\"action\":");
  AppendString(DecisionActionName(d.action), out);
  out->append(",\"cause\":{\"inputSeq\":");
  AppendInt(d.cause.input_seq, out);
  out->append(",\"tickSeq\":");
  AppendInt(d.cause.tick_seq, out);
  out->append(",\"trigger\":");
  AppendString(d.cause.trigger, out);
  out->append("},\"cronJob\":{\"name\":");
  AppendString(d.cron_job.name, out);
  out->append(",\"namespace\":");
  AppendString(d.cron_job.namespace_, out);
  out->append(",\"uid\":");
  AppendString(d.cron_job.uid, out);
  out->push_back('}');
  if (d.event_type) {
    out->append(",\"eventType\":");
    AppendString(*d.event_type, out);
  }
  if (d.job_name || !d.job_object.is_null()) {
    out->append(",\"job\":{");
    if (d.job_name) {
      out->append("\"name\":");
      AppendString(*d.job_name, out);
    }
    if (!d.job_object.is_null()) {
      out->append(d.job_name ? ",\"object\":" : "\"object\":");
      AppendJsonTree(d.job_object, out);
    }
    out->push_back('}');
  }
  if (d.message) {
    out->append(",\"message\":");
    AppendString(*d.message, out);
  }
  out->append(",\"policy\":{\"concurrencyPolicy\":");
  AppendString(d.policy.concurrency_policy, out);
  out->append(",\"schedule\":");
  AppendString(d.policy.schedule, out);
  out->append(",\"startingDeadlineSeconds\":");
  if (d.policy.starting_deadline_seconds) {
    AppendInt(*d.policy.starting_deadline_seconds, out);
  } else {
    out->append("null");
  }
  out->append(d.policy.suspend ? ",\"suspend\":true" : ",\"suspend\":false");
  out->append(",\"timeZone\":");
  if (d.policy.time_zone) {
    AppendString(*d.policy.time_zone, out);
  } else {
    out->append("null");
  }
  out->push_back('}');
  if (d.range_end) {
    out->append(",\"rangeEnd\":");
    AppendTime(*d.range_end, out);
  }
  if (!d.reason.empty()) {
    out->append(",\"reason\":");
    AppendString(d.reason, out);
  }
  if (d.requeue_after) {
    out->append(",\"requeueAfterNanos\":");
    AppendInt(d.requeue_after->count(), out);
    out->append(",\"requeueAfterSeconds\":");
    AppendJsonValue(Json(static_cast<double>(d.requeue_after->count()) / 1e9), out);
  }
  if (d.scheduled_time) {
    out->append(",\"scheduledTime\":");
    AppendTime(*d.scheduled_time, out);
  }
  out->append(",\"seq\":");
  AppendInt(d.seq, out);
  if (!d.status.is_null()) {
    out->append(",\"status\":");
    AppendJsonTree(d.status, out);
  }
  out->append(",\"time\":");
  AppendTime(d.time, out);
  out->push_back('}');
}

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

std::string AccountingStateBytes(const AccountingState& s) {
  std::string out;
  out.reserve(160);
  out.append("{\"accountedThrough\":");
  AppendOptTime(s.accounted_through, &out);
  out.append(",\"blockedKey\":");
  AppendString(s.blocked_key, &out);
  out.append(",\"blockedReason\":");
  AppendString(s.blocked_reason, &out);
  out.append(",\"blockedUntil\":");
  AppendOptTime(s.blocked_until, &out);
  out.append(",\"pendingReason\":");
  AppendString(s.pending_reason, &out);
  out.append(",\"pendingSlot\":");
  AppendOptTime(s.pending_slot, &out);
  out.push_back('}');
  return out;
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
