#pragma once

// What the fixture API server does to objects and how it words errors, following the real
// kube-apiserver (k8s.io/apimachinery errors, the batch/v1 defaulting and strategies). Deviations
// are listed in docs/kube.md.

#include <cstdint>
#include <string>

#include "kube/resource.h"
#include "model/json.h"
#include "model/time.h"

namespace cronledger::kube::testing {

using model::Json;

// A metav1.Status failure body: {"kind":"Status","apiVersion":"v1","metadata":{},
// "status":"Failure","message":...,"reason":...,"details":...,"code":...}. `details` is omitted
// when null.
Json FailureStatus(int code, const std::string& reason, const std::string& message,
                   const Json& details = Json());
// details{name, group, kind} as NewNotFound and friends fill it (kind = the plural resource).
Json StatusDetails(const ResourceType& type, const std::string& name);

Json NotFoundStatus(const ResourceType& type, const std::string& name);
Json AlreadyExistsStatus(const ResourceType& type, const std::string& name);
Json ConflictStatus(const ResourceType& type, const std::string& name, const std::string& why);
// 422 Invalid with one cause.
Json InvalidStatus(const ResourceType& type, const std::string& name, const std::string& field,
                   const std::string& cause_type, const std::string& detail);
// 403 Forbidden with the NamespaceTerminating cause (NamespaceLifecycle admission).
Json NamespaceTerminatingStatus(const ResourceType& type, const std::string& name,
                                const std::string& ns);
// 410 Expired, as the watch cache reports a too-old resourceVersion.
Json ExpiredStatus(const std::string& message);

// Empty when valid, else the message of a DNS-1123 subdomain violation.
std::string ValidateName(const std::string& name);

// Defaulting and create-time preparation the real server applies to each resource: batch/v1 Job
// selector and labels, Job/CronJob spec defaults, pod template defaults; status reset on
// resources with a status subresource.
void ApplyCreateDefaults(const ResourceType& type, Json* object);
// Pod template defaulting (SetDefaults_PodSpec/Container, the fields a Job's pods show).
void DefaultPodTemplate(Json* pod_template);

// A managedFields entry for `manager` (the User-Agent's first segment) with a fieldsV1 set derived
// from the object's keys.
Json ManagedFieldsEntry(const std::string& manager, const std::string& api_version,
                        const std::string& operation, const std::string& subresource, Time now,
                        const Json& object);
// Replaces `manager`'s entry (same subresource) in metadata.managedFields.
void RecordManager(Json* object, const Json& entry);

// Deterministic identifiers: a UUID-shaped uid from a counter, and the 5-character suffix
// generateName gets (from the alphabet the real server uses).
std::string FixtureUid(uint64_t n);
std::string GenerateNameSuffix(uint64_t n);

}  // namespace cronledger::kube::testing
