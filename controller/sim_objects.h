#pragma once

// Object shapes the simulated cluster serves: Job status as the Job controller writes it at each
// lifecycle step, server-set metadata, and the API server's error texts.

#include <optional>
#include <string>
#include <string_view>

#include "controller/sim_lifecycle.h"
#include "model/api_call.h"
#include "model/json.h"
#include "model/time.h"

namespace cronledger::controller::sim {

// Metadata the API server sets on create: namespace, uid, resourceVersion, generation 1 and
// creationTimestamp (whole seconds; the request's value is overwritten, docs/semantics.md §8).
void SetCreatedMetadata(model::Json* object, std::string_view ns, std::string_view uid,
                        std::string_view resource_version, Time now);
void SetResourceVersion(model::Json* object, std::string_view resource_version);

// status after the Job's pod started: startTime, active 1.
void SetJobStarted(model::Json* job, Time started);
// status after the Job finished: Complete (completionTime, succeeded 1) or Failed (the plan's
// reason and message, failed 1; the Job controller sets no completionTime on failure).
void SetJobFinished(model::Json* job, Time started, Time finished, const JobPlan& plan);

// spec.activeDeadlineSeconds of a Job object, when set to an integer.
std::optional<int64_t> ActiveDeadlineSeconds(const model::Json& job);

// "jobs.batch", "cronjobs.batch" or "cronjobs.<group>" for a CronJob of apiVersion <group>/v1.
std::string ResourceName(model::ApiKind kind, std::string_view api_version);
// The client-go error text (err.Error()) of a status reason on `resource` "name".
std::string ErrorMessage(std::string_view reason, std::string_view resource, std::string_view name);
model::ApiOutcome ErrorOutcome(std::string_view reason, std::string_view resource,
                               std::string_view name);

}  // namespace cronledger::controller::sim
