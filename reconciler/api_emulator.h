#pragma once

// An in-memory stand-in for the Kubernetes API server, as `cronledger decide` describes it
// (docs/design.md §4 "api"), and the driver loop that runs one pass against any API. Pure and
// deterministic: used by the decide command and by tests that script long histories.

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "model/api_call.h"
#include "model/json.h"
#include "reconciler/decide.h"

namespace cronledger::reconciler {

struct EmulatedApiOptions {
  // What a fresh GET of the CronJob returns; nullopt = the cached CronJob of the pass; a JSON
  // null = NotFound.
  std::optional<model::Json> cron_job;
  // "namespace/name" -> what GET returns for that Job (JSON null = NotFound). A name missing here
  // is NotFound.
  std::map<std::string, model::Json> jobs;
  // Injected errors per call ("getJob", "deleteJob", "createJob", "getCronJob",
  // "updateStatus") -> a Kubernetes status reason or "NamespaceTerminating".
  std::map<std::string, std::string> errors;
  // The uid the API assigns to created Jobs.
  std::string created_uid = "test-uid";
};

class EmulatedApi {
 public:
  EmulatedApi(EmulatedApiOptions options, model::Json cached_cron_job);

  // Performs a call. Creating a name that GET would find returns AlreadyExists; created Jobs
  // become visible to later GETs, deleted ones disappear.
  model::ApiOutcome Perform(const model::ApiCall& call);

  // The Kubernetes-style error text for `reason` on `resource` "name" (Go's err.Error()).
  static std::string ErrorMessage(const std::string& reason, const model::ApiCall& call);

 private:
  std::optional<model::ApiOutcome> InjectedError(const model::ApiCall& call) const;

  EmulatedApiOptions options_;
  model::Json cached_cron_job_;
};

// Runs Decide() to completion, performing each requested call with `perform`. `in.outcomes` is
// the starting point (normally empty). Never loops forever: a pass makes a bounded number of
// calls, and more than `max_calls` is reported as an error result.
SyncResult RunPass(SyncInput in,
                   const std::function<model::ApiOutcome(const model::ApiCall&)>& perform,
                   size_t max_calls = 10000);

}  // namespace cronledger::reconciler
