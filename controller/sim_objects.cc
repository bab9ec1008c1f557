#include "controller/sim_objects.h"

namespace cronledger::controller::sim {
namespace {

model::Json Condition(std::string_view type, Time at, const std::string& reason,
                      const std::string& message) {
  model::Json c = {{"type", type},
                   {"status", "True"},
                   {"lastProbeTime", FormatRfc3339(at)},
                   {"lastTransitionTime", FormatRfc3339(at)}};
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  return c;
}

}  // namespace

void SetCreatedMetadata(model::Json* object, std::string_view ns, std::string_view uid,
                        std::string_view resource_version, Time now) {
  if (!(*object)["metadata"].is_object()) (*object)["metadata"] = model::Json::object();
  model::Json& meta = (*object)["metadata"];
  meta["namespace"] = ns;
  meta["uid"] = uid;
  meta["resourceVersion"] = resource_version;
  meta["generation"] = 1;
  meta["creationTimestamp"] = FormatRfc3339(now);
}

void SetResourceVersion(model::Json* object, std::string_view resource_version) {
  (*object)["metadata"]["resourceVersion"] = resource_version;
}

void SetJobStarted(model::Json* job, Time started) {
  (*job)["status"] = {{"startTime", FormatRfc3339(started)}, {"active", 1}, {"ready", 0}};
}

void SetJobFinished(model::Json* job, Time started, Time finished, const JobPlan& plan) {
  model::Json status = {{"startTime", FormatRfc3339(started)}, {"ready", 0}};
  if (plan.failed) {
    status["failed"] = 1;
    status["conditions"] = model::Json::array(
        {Condition("Failed", finished, plan.failure_reason, plan.failure_message)});
  } else {
    status["succeeded"] = 1;
    status["completionTime"] = FormatRfc3339(finished);
    status["conditions"] = model::Json::array({Condition("Complete", finished, "", "")});
  }
  (*job)["status"] = std::move(status);
}

std::optional<int64_t> ActiveDeadlineSeconds(const model::Json& job) {
  const auto spec = job.find("spec");
  if (spec == job.end() || !spec->is_object()) return std::nullopt;
  const auto d = spec->find("activeDeadlineSeconds");
  if (d == spec->end() || !d->is_number_integer()) return std::nullopt;
  return d->get<int64_t>();
}

std::string ResourceName(model::ApiKind kind, std::string_view api_version) {
  if (kind == model::ApiKind::kJob) return "jobs.batch";
  const size_t slash = api_version.find('/');
  if (slash == std::string_view::npos) return "cronjobs.batch";
  return "cronjobs." + std::string(api_version.substr(0, slash));
}

std::string ErrorMessage(std::string_view reason, std::string_view resource,
                         std::string_view name) {
  const std::string quoted = std::string(resource) + " \"" + std::string(name) + "\"";
  if (reason == model::api_reason::kNotFound) return quoted + " not found";
  if (reason == model::api_reason::kAlreadyExists) return quoted + " already exists";
  if (reason == "Conflict") {
    return "Operation cannot be fulfilled on " + quoted +
           ": the object has been modified; please apply your changes to the latest version and "
           "try again";
  }
  if (reason == "MethodNotAllowed") {
    return "the server does not allow this method on the requested resource";
  }
  return "the server rejected our request for " + quoted + ": " + std::string(reason);
}

model::ApiOutcome ErrorOutcome(std::string_view reason, std::string_view resource,
                               std::string_view name) {
  return model::ApiOutcome::Error(std::string(reason), ErrorMessage(reason, resource, name));
}

}  // namespace cronledger::controller::sim
