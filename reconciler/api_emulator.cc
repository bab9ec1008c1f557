#include "reconciler/api_emulator.h"

#include <utility>

namespace cronledger::reconciler {
namespace {

using model::ApiKind;
using model::ApiVerb;

std::string ErrorKey(const model::ApiCall& call) {
  switch (call.verb) {
    case ApiVerb::kGet:
      return call.kind == ApiKind::kJob ? "getJob" : "getCronJob";
    case ApiVerb::kCreate:
      return "createJob";
    case ApiVerb::kDelete:
      return "deleteJob";
    case ApiVerb::kUpdateStatus:
      return "updateStatus";
  }
  return "";
}

std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

}  // namespace

EmulatedApi::EmulatedApi(EmulatedApiOptions options, model::Json cached_cron_job)
    : options_(std::move(options)), cached_cron_job_(std::move(cached_cron_job)) {}

std::string EmulatedApi::ErrorMessage(const std::string& reason, const model::ApiCall& call) {
  const std::string resource = call.kind == ApiKind::kJob ? "jobs.batch" : "cronjobs.batch";
  const std::string quoted = resource + " \"" + call.name + "\"";
  if (reason == "NotFound") return quoted + " not found";
  if (reason == "AlreadyExists") return quoted + " already exists";
  if (reason == "Conflict") {
    return "Operation cannot be fulfilled on " + quoted +
           ": the object has been modified; please apply your changes to the latest version and "
           "try again";
  }
  if (reason == "NamespaceTerminating") {
    return quoted + " is forbidden: unable to create new content in namespace " + call.namespace_ +
           " because it is being terminated";
  }
  if (reason == "BadRequest") return "the server rejected our request: bad request";
  if (reason == "InternalError") return "Internal error occurred: injected InternalError";
  if (reason == "Forbidden") return quoted + " is forbidden";
  return "the server reported " + reason + " for " + quoted;
}

std::optional<model::ApiOutcome> EmulatedApi::InjectedError(const model::ApiCall& call) const {
  auto it = options_.errors.find(ErrorKey(call));
  if (it == options_.errors.end() || it->second.empty()) return std::nullopt;
  return model::ApiOutcome::Error(it->second, ErrorMessage(it->second, call));
}

model::ApiOutcome EmulatedApi::Perform(const model::ApiCall& call) {
  if (auto error = InjectedError(call)) return *error;
  const std::string key = Key(call.namespace_, call.name);
  switch (call.verb) {
    case ApiVerb::kGet: {
      if (call.kind == ApiKind::kCronJob) {
        const model::Json& cj = options_.cron_job ? *options_.cron_job : cached_cron_job_;
        if (cj.is_null())
          return model::ApiOutcome::Error("NotFound", ErrorMessage("NotFound", call));
        return model::ApiOutcome::Ok(cj);
      }
      auto it = options_.jobs.find(key);
      if (it == options_.jobs.end() || it->second.is_null()) {
        return model::ApiOutcome::Error("NotFound", ErrorMessage("NotFound", call));
      }
      return model::ApiOutcome::Ok(it->second);
    }
    case ApiVerb::kCreate: {
      auto it = options_.jobs.find(key);
      if (it != options_.jobs.end() && !it->second.is_null()) {
        return model::ApiOutcome::Error("AlreadyExists", ErrorMessage("AlreadyExists", call));
      }
      model::Json created = call.object;
      if (!created.is_object()) created = model::Json::object();
      if (!created["metadata"].is_object()) created["metadata"] = model::Json::object();
      created["metadata"]["uid"] = options_.created_uid;
      options_.jobs[key] = created;
      return model::ApiOutcome::Ok(std::move(created));
    }
    case ApiVerb::kDelete:
      options_.jobs.erase(key);
      return model::ApiOutcome::Ok(nullptr);
    case ApiVerb::kUpdateStatus:
      return model::ApiOutcome::Ok(call.object);
  }
  return model::ApiOutcome::Error("BadRequest", "unknown verb");
}

SyncResult RunPass(SyncInput in,
                   const std::function<model::ApiOutcome(const model::ApiCall&)>& perform,
                   size_t max_calls) {
  for (size_t calls = 0;; ++calls) {
    Step step = Decide(in);
    if (!step.next_call) return std::move(step.result);
    if (calls >= max_calls) {
      SyncResult failed;
      failed.error = "reconcile pass made more than " + std::to_string(max_calls) + " API calls";
      failed.status = in.cron_job.status;
      failed.accounting = in.accounting;
      return failed;
    }
    in.outcomes.push_back(perform(*step.next_call));
  }
}

}  // namespace cronledger::reconciler
