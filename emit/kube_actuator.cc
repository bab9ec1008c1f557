#include "emit/kube_actuator.h"

#include <utility>

#include "model/annotations.h"

namespace cronledger::emit {
namespace {

using model::ApiKind;
using model::ApiOutcome;
using model::ApiVerb;
using model::Json;

// The slot a Job was created for: the request's creationTimestamp (docs/semantics.md §8 sets it to
// the scheduled time), else the scheduled-timestamp annotation.
std::optional<Time> ScheduledTimeOf(const Json& request) {
  if (auto t = ParseRfc3339(model::StringAt(request, "metadata", "creationTimestamp")); t.ok()) {
    return *t;
  }
  const Json annotations = model::MemberOr(model::MemberOr(request, "metadata"), "annotations");
  if (auto t = ParseRfc3339(model::StringOr(annotations, model::kScheduledTimestampAnnotation));
      t.ok()) {
    return *t;
  }
  return std::nullopt;
}

}  // namespace

ApiOutcome OutcomeOf(const kube::ApiError& error) {
  return ApiOutcome::Error(error.OutcomeReason(),
                           error.message.empty() ? error.ToString() : error.message);
}

KubeActuator::KubeActuator(kube::KubeClient& client, EventRecorder& events,
                           ControllerMetrics& metrics, KubeActuatorOptions options,
                           std::function<void(const std::string&)> log)
    : client_(client),
      events_(events),
      metrics_(metrics),
      options_(std::move(options)),
      log_(std::move(log)) {}

ApiOutcome KubeActuator::Perform(const model::ApiCall& call) {
  const kube::ResourceType& type =
      call.kind == ApiKind::kJob ? kube::BatchJobs() : options_.cron_jobs;
  switch (call.verb) {
    case ApiVerb::kGet: {
      auto got = client_.Get(type, call.namespace_, call.name);
      return got.ok() ? ApiOutcome::Ok(std::move(got).value()) : OutcomeOf(got.error());
    }
    case ApiVerb::kCreate:
      if (call.kind == ApiKind::kJob) return CreateJob(call);
      break;
    case ApiVerb::kDelete:
      if (call.kind == ApiKind::kJob) {
        kube::DeleteOptions options;
        options.propagation = kube::PropagationPolicy::kBackground;
        auto deleted = client_.Delete(type, call.namespace_, call.name, options);
        return deleted.ok() ? ApiOutcome::Ok(nullptr) : OutcomeOf(deleted.error());
      }
      break;
    case ApiVerb::kUpdateStatus:
      if (call.kind == ApiKind::kCronJob) return UpdateStatus(call);
      break;
  }
  return ApiOutcome::Error("MethodNotAllowed", std::string(model::ApiVerbName(call.verb)) + " " +
                                                   std::string(model::ApiKindName(call.kind)) +
                                                   " is not an action of the controller");
}

ApiOutcome KubeActuator::CreateJob(const model::ApiCall& call) {
  auto created = client_.Create(kube::BatchJobs(), call.namespace_, call.object);
  if (!created.ok()) return OutcomeOf(created.error());
  // docs/semantics.md §6.12/§11: observed on success only, never on the AlreadyExists path.
  ObserveSkew(call.object, created.value());
  if (log_) log_("created job " + call.namespace_ + "/" + call.name);
  return ApiOutcome::Ok(std::move(created).value());
}

void KubeActuator::ObserveSkew(const Json& request, const Json& created) {
  const std::optional<Time> scheduled = ScheduledTimeOf(request);
  auto at = ParseRfc3339(model::StringAt(created, "metadata", "creationTimestamp"));
  if (!scheduled || !at.ok()) return;
  const Duration skew = at->Sub(*scheduled);
  metrics_.ObserveCreationSkew(std::chrono::duration<double>(skew).count());
}

ApiOutcome KubeActuator::UpdateStatus(const model::ApiCall& call) {
  Json object = call.object;
  const std::string uid = model::StringAt(object, "metadata", "uid");
  for (int attempt = 0;; ++attempt) {
    auto updated = client_.UpdateStatus(options_.cron_jobs, call.namespace_, object);
    if (updated.ok()) return ApiOutcome::Ok(std::move(updated).value());
    if (!updated.error().IsConflict() || attempt >= options_.status_conflict_retries) {
      return OutcomeOf(updated.error());
    }
    // Re-read only to learn the current resourceVersion; the status written stays the one the
    // reconciler decided (see the header).
    auto fresh = client_.Get(options_.cron_jobs, call.namespace_, call.name);
    if (!fresh.ok()) return OutcomeOf(fresh.error());
    const std::string fresh_uid = model::StringAt(fresh.value(), "metadata", "uid");
    if (!uid.empty() && fresh_uid != uid) return OutcomeOf(updated.error());
    if (log_) {
      log_("status of " + call.namespace_ + "/" + call.name +
           ": conflict, retrying with resourceVersion " +
           model::StringAt(fresh.value(), "metadata", "resourceVersion"));
    }
    if (!object.contains("metadata") || !object["metadata"].is_object()) {
      object["metadata"] = Json::object();
    }
    object["metadata"]["resourceVersion"] =
        model::StringAt(fresh.value(), "metadata", "resourceVersion");
  }
}

void KubeActuator::RecordEvent(const model::CronJobRef& cron_job, const reconciler::Event& event) {
  EventRegarding regarding;
  regarding.api_version = options_.cron_jobs.ApiVersion();
  regarding.namespace_ = cron_job.namespace_;
  regarding.name = cron_job.name;
  regarding.uid = cron_job.uid;
  events_.Record(regarding, event.type, event.reason, event.message);
}

}  // namespace cronledger::emit
