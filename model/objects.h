#pragma once

// The Kubernetes objects cronledger reads and writes, as the API serves them: the fields the
// controller semantics use are typed, and the whole object is kept as JSON (`raw`) so that nothing
// the API sent is lost. Encoding writes the typed fields over a copy of `raw` with Go's `omitempty`
// rules, so decode(encode(x)) == x and unknown fields survive.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/json.h"
#include "model/result.h"
#include "model/time.h"

namespace cronledger::model {

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  std::optional<bool> block_owner_deletion;
  Json raw = Json::object();

  bool IsController() const { return controller.value_or(false); }
};

struct ObjectMeta {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  std::optional<Time> creation_timestamp;
  std::optional<Time> deletion_timestamp;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<OwnerReference> owner_references;
  Json raw = Json::object();

  // The owner reference with controller=true, if any (metav1.GetControllerOf).
  const OwnerReference* ControllerRef() const;
  // "namespace/name", the work-queue key.
  std::string Key() const { return namespace_ + "/" + name; }
};

// corev1.ObjectReference as kept in CronJob status.active.
struct ObjectReference {
  std::string api_version;
  std::string kind;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  Json raw = Json::object();

  friend bool operator==(const ObjectReference& a, const ObjectReference& b) {
    return a.api_version == b.api_version && a.kind == b.kind && a.namespace_ == b.namespace_ &&
           a.name == b.name && a.uid == b.uid && a.resource_version == b.resource_version;
  }
};

struct JobTemplate {
  std::map<std::string, std::string> labels;       // spec.jobTemplate.metadata.labels
  std::map<std::string, std::string> annotations;  // spec.jobTemplate.metadata.annotations
  JsonText spec;  // spec.jobTemplate.spec, verbatim ({} when absent); read only to build a Job
  Json raw = Json::object();  // the whole jobTemplate
};

struct CronJobSpec {
  std::string schedule;
  std::optional<std::string> time_zone;
  std::optional<int64_t> starting_deadline_seconds;
  std::string concurrency_policy;  // "Allow" | "Forbid" | "Replace"; anything else acts as Allow
  std::optional<bool> suspend;
  std::optional<int64_t> successful_jobs_history_limit;
  std::optional<int64_t> failed_jobs_history_limit;
  JobTemplate job_template;
  Json raw = Json::object();
};

struct CronJobStatus {
  std::vector<ObjectReference> active;
  std::optional<Time> last_schedule_time;
  std::optional<Time> last_successful_time;
  Json raw = Json::object();
};

struct CronJob {
  std::string api_version;  // "batch/v1" or "cronledger.io/v1"
  std::string kind;         // "CronJob"
  ObjectMeta metadata;
  CronJobSpec spec;
  CronJobStatus status;
  Json raw = Json::object();
};

struct JobCondition {
  std::string type;    // "Complete", "Failed", "Suspended", ...
  std::string status;  // "True" | "False" | "Unknown"
  Json raw = Json::object();
};

struct JobStatus {
  std::vector<JobCondition> conditions;
  std::optional<Time> start_time;
  std::optional<Time> completion_time;
  Json raw = Json::object();
};

struct Job {
  std::string api_version;  // "batch/v1"
  std::string kind;         // "Job"
  ObjectMeta metadata;
  Json spec = Json::object();  // verbatim
  JobStatus status;
  Json raw = Json::object();
};

// Finished = first Complete/Failed condition with status True (docs/semantics.md §1). Returns the
// condition type
// ("Complete" or "Failed"), or nullopt when the Job is still running.
std::optional<std::string> FinishedCondition(const Job& job);
inline bool IsFinished(const Job& job) { return FinishedCondition(job).has_value(); }
inline bool IsSucceeded(const Job& job) { return FinishedCondition(job) == "Complete"; }

// Decoders validate types and required fields (metadata.name, metadata.namespace is optional for
// requests; uid is required only where the caller says so) and never throw.
Result<ObjectMeta> DecodeObjectMeta(const Json& j, std::string_view path = "metadata");
Result<CronJob> DecodeCronJob(const Json& j);
Result<Job> DecodeJob(const Json& j);
// DecodeJob(j)->metadata, with DecodeJob's errors, without copying the rest of the Job (the raw
// object, spec, status): what a pass reads of the Job an API call returned.
Result<ObjectMeta> DecodeJobMetadata(const Json& j);
Result<ObjectReference> DecodeObjectReference(const Json& j, std::string_view path);

Json EncodeObjectMeta(const ObjectMeta& m);
Json EncodeObjectReference(const ObjectReference& r);
Json EncodeCronJobStatus(const CronJobStatus& s);
Json EncodeCronJob(const CronJob& cj);
Json EncodeJob(const Job& job);

}  // namespace cronledger::model
