#include "model/objects.h"

namespace cronledger::model {
namespace {

std::string Sub(std::string_view path, std::string_view key) {
  return std::string(path) + "." + std::string(key);
}

// OptObject without the copy: the member object, or a shared empty object when it is absent.
Result<const Json*> ObjectAt(const Json& j, std::string_view key, std::string_view path) {
  static const Json kEmpty = Json::object();
  if (!j.is_object()) return &kEmpty;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return &kEmpty;
  if (!it->is_object()) return OptObject(j, key, path).status();  // the same error
  return &*it;
}

Result<std::string> ReqString(const Json& j, std::string_view key, std::string_view path) {
  CL_ASSIGN_OR_RETURN(auto v, OptString(j, key, path));
  return v.value_or("");
}

Result<OwnerReference> DecodeOwnerReference(const Json& j, std::string_view path) {
  if (!j.is_object()) return Status::InvalidArgument(std::string(path) + ": expected object");
  OwnerReference r;
  CL_ASSIGN_OR_RETURN(r.api_version, ReqString(j, "apiVersion", path));
  CL_ASSIGN_OR_RETURN(r.kind, ReqString(j, "kind", path));
  CL_ASSIGN_OR_RETURN(r.name, ReqString(j, "name", path));
  CL_ASSIGN_OR_RETURN(r.uid, ReqString(j, "uid", path));
  CL_ASSIGN_OR_RETURN(r.controller, OptBool(j, "controller", path));
  CL_ASSIGN_OR_RETURN(r.block_owner_deletion, OptBool(j, "blockOwnerDeletion", path));
  r.raw = j;
  return r;
}

Json EncodeOwnerReference(const OwnerReference& r) {
  Json j = r.raw.is_object() ? r.raw : Json::object();
  j["apiVersion"] = r.api_version;
  j["kind"] = r.kind;
  j["name"] = r.name;
  j["uid"] = r.uid;
  PutOptBool(&j, "controller", r.controller);
  PutOptBool(&j, "blockOwnerDeletion", r.block_owner_deletion);
  return j;
}

Result<JobTemplate> DecodeJobTemplate(const Json& j, std::string_view path) {
  JobTemplate t;
  t.raw = j;
  CL_ASSIGN_OR_RETURN(const Json* meta, ObjectAt(j, "metadata", path));
  const std::string meta_path = Sub(path, "metadata");
  CL_ASSIGN_OR_RETURN(t.labels, StringMap(*meta, "labels", meta_path));
  CL_ASSIGN_OR_RETURN(t.annotations, StringMap(*meta, "annotations", meta_path));
  CL_ASSIGN_OR_RETURN(const Json spec, OptObject(j, "spec", path));
  t.spec = JsonText(spec);
  return t;
}

Json EncodeJobTemplate(const JobTemplate& t) {
  Json j = t.raw.is_object() ? t.raw : Json::object();
  Json meta = j.contains("metadata") && j["metadata"].is_object() ? j["metadata"] : Json::object();
  PutStringMap(&meta, "labels", t.labels);
  PutStringMap(&meta, "annotations", t.annotations);
  if (meta.empty()) {
    j.erase("metadata");
  } else {
    j["metadata"] = std::move(meta);
  }
  j["spec"] = t.spec.Tree();
  return j;
}

Result<CronJobSpec> DecodeCronJobSpec(const Json& j) {
  const std::string_view path = "spec";
  CronJobSpec s;
  s.raw = j;
  CL_ASSIGN_OR_RETURN(s.schedule, ReqString(j, "schedule", path));
  CL_ASSIGN_OR_RETURN(s.time_zone, OptString(j, "timeZone", path));
  CL_ASSIGN_OR_RETURN(s.starting_deadline_seconds, OptInt(j, "startingDeadlineSeconds", path));
  CL_ASSIGN_OR_RETURN(s.concurrency_policy, ReqString(j, "concurrencyPolicy", path));
  CL_ASSIGN_OR_RETURN(s.suspend, OptBool(j, "suspend", path));
  CL_ASSIGN_OR_RETURN(s.successful_jobs_history_limit,
                      OptInt(j, "successfulJobsHistoryLimit", path));
  CL_ASSIGN_OR_RETURN(s.failed_jobs_history_limit, OptInt(j, "failedJobsHistoryLimit", path));
  CL_ASSIGN_OR_RETURN(const Json* tmpl, ObjectAt(j, "jobTemplate", path));
  CL_ASSIGN_OR_RETURN(s.job_template, DecodeJobTemplate(*tmpl, "spec.jobTemplate"));
  return s;
}

Json EncodeCronJobSpec(const CronJobSpec& s) {
  Json j = s.raw.is_object() ? s.raw : Json::object();
  j["schedule"] = s.schedule;
  PutOptString(&j, "timeZone", s.time_zone);
  PutOptInt(&j, "startingDeadlineSeconds", s.starting_deadline_seconds);
  PutString(&j, "concurrencyPolicy", s.concurrency_policy);
  PutOptBool(&j, "suspend", s.suspend);
  PutOptInt(&j, "successfulJobsHistoryLimit", s.successful_jobs_history_limit);
  PutOptInt(&j, "failedJobsHistoryLimit", s.failed_jobs_history_limit);
  j["jobTemplate"] = EncodeJobTemplate(s.job_template);
  return j;
}

Result<CronJobStatus> DecodeCronJobStatus(const Json& j) {
  const std::string_view path = "status";
  CronJobStatus s;
  s.raw = j;
  if (j.contains("active") && !j["active"].is_null()) {
    if (!j["active"].is_array()) return Status::InvalidArgument("status.active: expected array");
    for (size_t i = 0; i < j["active"].size(); ++i) {
      CL_ASSIGN_OR_RETURN(
          auto ref,
          DecodeObjectReference(j["active"][i], "status.active[" + std::to_string(i) + "]"));
      s.active.push_back(std::move(ref));
    }
  }
  CL_ASSIGN_OR_RETURN(s.last_schedule_time, OptTime(j, "lastScheduleTime", path));
  CL_ASSIGN_OR_RETURN(s.last_successful_time, OptTime(j, "lastSuccessfulTime", path));
  return s;
}

Result<JobStatus> DecodeJobStatus(const Json& j) {
  const std::string_view path = "status";
  JobStatus s;
  s.raw = j;
  if (j.contains("conditions") && !j["conditions"].is_null()) {
    const Json& conds = j["conditions"];
    if (!conds.is_array()) return Status::InvalidArgument("status.conditions: expected array");
    for (size_t i = 0; i < conds.size(); ++i) {
      const std::string cpath = "status.conditions[" + std::to_string(i) + "]";
      if (!conds[i].is_object()) return Status::InvalidArgument(cpath + ": expected object");
      JobCondition c;
      CL_ASSIGN_OR_RETURN(c.type, ReqString(conds[i], "type", cpath));
      CL_ASSIGN_OR_RETURN(c.status, ReqString(conds[i], "status", cpath));
      c.raw = conds[i];
      s.conditions.push_back(std::move(c));
    }
  }
  CL_ASSIGN_OR_RETURN(s.start_time, OptTime(j, "startTime", path));
  CL_ASSIGN_OR_RETURN(s.completion_time, OptTime(j, "completionTime", path));
  return s;
}

Json EncodeJobStatus(const JobStatus& s) {
  Json j = s.raw.is_object() ? s.raw : Json::object();
  if (s.conditions.empty()) {
    j.erase("conditions");
  } else {
    Json arr = Json::array();
    for (const auto& c : s.conditions) {
      Json cj = c.raw.is_object() ? c.raw : Json::object();
      cj["type"] = c.type;
      cj["status"] = c.status;
      arr.push_back(std::move(cj));
    }
    j["conditions"] = std::move(arr);
  }
  PutOptTime(&j, "startTime", s.start_time);
  PutOptTime(&j, "completionTime", s.completion_time);
  return j;
}

Status RequireObject(const Json& j, std::string_view what) {
  if (!j.is_object()) {
    return Status::InvalidArgument(std::string(what) + ": expected a JSON object, got " +
                                   j.type_name());
  }
  return Status::Ok();
}

}  // namespace

const OwnerReference* ObjectMeta::ControllerRef() const {
  for (const auto& ref : owner_references) {
    if (ref.IsController()) return &ref;
  }
  return nullptr;
}

std::optional<std::string> FinishedCondition(const Job& job) {
  for (const auto& c : job.status.conditions) {
    if ((c.type == "Complete" || c.type == "Failed") && c.status == "True") return c.type;
  }
  return std::nullopt;
}

Result<ObjectReference> DecodeObjectReference(const Json& j, std::string_view path) {
  CL_RETURN_IF_ERROR(RequireObject(j, path));
  ObjectReference r;
  CL_ASSIGN_OR_RETURN(r.api_version, ReqString(j, "apiVersion", path));
  CL_ASSIGN_OR_RETURN(r.kind, ReqString(j, "kind", path));
  CL_ASSIGN_OR_RETURN(r.namespace_, ReqString(j, "namespace", path));
  CL_ASSIGN_OR_RETURN(r.name, ReqString(j, "name", path));
  CL_ASSIGN_OR_RETURN(r.uid, ReqString(j, "uid", path));
  CL_ASSIGN_OR_RETURN(r.resource_version, ReqString(j, "resourceVersion", path));
  r.raw = j;
  return r;
}

Json EncodeObjectReference(const ObjectReference& r) {
  Json j = r.raw.is_object() ? r.raw : Json::object();
  PutString(&j, "apiVersion", r.api_version);
  PutString(&j, "kind", r.kind);
  PutString(&j, "namespace", r.namespace_);
  PutString(&j, "name", r.name);
  PutString(&j, "uid", r.uid);
  PutString(&j, "resourceVersion", r.resource_version);
  return j;
}

Result<ObjectMeta> DecodeObjectMeta(const Json& j, std::string_view path) {
  CL_RETURN_IF_ERROR(RequireObject(j, path));
  ObjectMeta m;
  m.raw = j;
  CL_ASSIGN_OR_RETURN(m.name, ReqString(j, "name", path));
  CL_ASSIGN_OR_RETURN(m.namespace_, ReqString(j, "namespace", path));
  CL_ASSIGN_OR_RETURN(m.uid, ReqString(j, "uid", path));
  CL_ASSIGN_OR_RETURN(m.resource_version, ReqString(j, "resourceVersion", path));
  CL_ASSIGN_OR_RETURN(m.creation_timestamp, OptTime(j, "creationTimestamp", path));
  CL_ASSIGN_OR_RETURN(m.deletion_timestamp, OptTime(j, "deletionTimestamp", path));
  CL_ASSIGN_OR_RETURN(m.labels, StringMap(j, "labels", path));
  CL_ASSIGN_OR_RETURN(m.annotations, StringMap(j, "annotations", path));
  if (j.contains("ownerReferences") && !j["ownerReferences"].is_null()) {
    const Json& refs = j["ownerReferences"];
    if (!refs.is_array()) {
      return Status::InvalidArgument(Sub(path, "ownerReferences") + ": expected array");
    }
    for (size_t i = 0; i < refs.size(); ++i) {
      CL_ASSIGN_OR_RETURN(auto ref, DecodeOwnerReference(refs[i], Sub(path, "ownerReferences[") +
                                                                      std::to_string(i) + "]"));
      m.owner_references.push_back(std::move(ref));
    }
  }
  return m;
}

Json EncodeObjectMeta(const ObjectMeta& m) {
  Json j = m.raw.is_object() ? m.raw : Json::object();
  PutString(&j, "name", m.name);
  PutString(&j, "namespace", m.namespace_);
  PutString(&j, "uid", m.uid);
  PutString(&j, "resourceVersion", m.resource_version);
  PutOptTime(&j, "creationTimestamp", m.creation_timestamp);
  PutOptTime(&j, "deletionTimestamp", m.deletion_timestamp);
  PutStringMap(&j, "labels", m.labels);
  PutStringMap(&j, "annotations", m.annotations);
  if (m.owner_references.empty()) {
    j.erase("ownerReferences");
  } else {
    Json arr = Json::array();
    for (const auto& r : m.owner_references) arr.push_back(EncodeOwnerReference(r));
    j["ownerReferences"] = std::move(arr);
  }
  return j;
}

Json EncodeCronJobStatus(const CronJobStatus& s) {
  Json j = s.raw.is_object() ? s.raw : Json::object();
  if (s.active.empty()) {
    j.erase("active");
  } else {
    Json arr = Json::array();
    for (const auto& r : s.active) arr.push_back(EncodeObjectReference(r));
    j["active"] = std::move(arr);
  }
  PutOptTime(&j, "lastScheduleTime", s.last_schedule_time);
  PutOptTime(&j, "lastSuccessfulTime", s.last_successful_time);
  return j;
}

Result<CronJob> DecodeCronJob(const Json& j) {
  CL_RETURN_IF_ERROR(RequireObject(j, "CronJob"));
  CronJob cj;
  cj.raw = j;
  CL_ASSIGN_OR_RETURN(cj.api_version, ReqString(j, "apiVersion", ""));
  CL_ASSIGN_OR_RETURN(cj.kind, ReqString(j, "kind", ""));
  CL_ASSIGN_OR_RETURN(const Json* meta, ObjectAt(j, "metadata", ""));
  CL_ASSIGN_OR_RETURN(cj.metadata, DecodeObjectMeta(*meta));
  CL_ASSIGN_OR_RETURN(const Json* spec, ObjectAt(j, "spec", ""));
  CL_ASSIGN_OR_RETURN(cj.spec, DecodeCronJobSpec(*spec));
  CL_ASSIGN_OR_RETURN(const Json* status, ObjectAt(j, "status", ""));
  CL_ASSIGN_OR_RETURN(cj.status, DecodeCronJobStatus(*status));
  return cj;
}

Json EncodeCronJob(const CronJob& cj) {
  Json j = cj.raw.is_object() ? cj.raw : Json::object();
  PutString(&j, "apiVersion", cj.api_version);
  PutString(&j, "kind", cj.kind);
  j["metadata"] = EncodeObjectMeta(cj.metadata);
  j["spec"] = EncodeCronJobSpec(cj.spec);
  j["status"] = EncodeCronJobStatus(cj.status);
  return j;
}

Result<Job> DecodeJob(const Json& j) {
  CL_RETURN_IF_ERROR(RequireObject(j, "Job"));
  Job job;
  job.raw = j;
  CL_ASSIGN_OR_RETURN(job.api_version, ReqString(j, "apiVersion", ""));
  CL_ASSIGN_OR_RETURN(job.kind, ReqString(j, "kind", ""));
  CL_ASSIGN_OR_RETURN(const Json* meta, ObjectAt(j, "metadata", ""));
  CL_ASSIGN_OR_RETURN(job.metadata, DecodeObjectMeta(*meta));
  CL_ASSIGN_OR_RETURN(job.spec, OptObject(j, "spec", ""));
  CL_ASSIGN_OR_RETURN(const Json* status, ObjectAt(j, "status", ""));
  CL_ASSIGN_OR_RETURN(job.status, DecodeJobStatus(*status));
  return job;
}

Result<ObjectMeta> DecodeJobMetadata(const Json& j) {
  // DecodeJob's checks in DecodeJob's order (the first error wins), keeping only the metadata.
  CL_RETURN_IF_ERROR(RequireObject(j, "Job"));
  CL_RETURN_IF_ERROR(ReqString(j, "apiVersion", "").status());
  CL_RETURN_IF_ERROR(ReqString(j, "kind", "").status());
  CL_ASSIGN_OR_RETURN(const Json* meta, ObjectAt(j, "metadata", ""));
  CL_ASSIGN_OR_RETURN(ObjectMeta metadata, DecodeObjectMeta(*meta));
  CL_RETURN_IF_ERROR(ObjectAt(j, "spec", "").status());  // OptObject's error, without the copy
  CL_ASSIGN_OR_RETURN(const Json* status, ObjectAt(j, "status", ""));
  CL_RETURN_IF_ERROR(DecodeJobStatus(*status).status());
  return metadata;
}

Json EncodeJob(const Job& job) {
  Json j = job.raw.is_object() ? job.raw : Json::object();
  PutString(&j, "apiVersion", job.api_version);
  PutString(&j, "kind", job.kind);
  j["metadata"] = EncodeObjectMeta(job.metadata);
  j["spec"] = job.spec;
  j["status"] = EncodeJobStatus(job.status);
  return j;
}

}  // namespace cronledger::model
