#include "model/job_fields.h"

#include <simdjson.h>

#include <string>
#include <unordered_map>

#include "model/api_call.h"
#include "model/json.h"

namespace cronledger::model {
namespace {

namespace dom = simdjson::dom;

// Every reader returns false when the nlohmann path must decide (an error or anything unusual);
// a field's repeated key is assigned again, as nlohmann's parser keeps the last value.

bool Str(dom::element v, std::string* out) {
  if (v.is_null()) {
    out->clear();
    return true;
  }
  std::string_view s;
  if (v.get_string().get(s) != simdjson::SUCCESS) return false;
  out->assign(s);
  return true;
}

bool OptBool(dom::element v, std::optional<bool>* out) {
  if (v.is_null()) {
    out->reset();
    return true;
  }
  bool b = false;
  if (v.get_bool().get(b) != simdjson::SUCCESS) return false;
  *out = b;
  return true;
}

bool OptTime(dom::element v, std::optional<Time>* out) {
  if (v.is_null()) {
    out->reset();
    return true;
  }
  std::string_view s;
  if (v.get_string().get(s) != simdjson::SUCCESS) return false;
  auto t = ParseRfc3339(s);
  if (!t.ok()) return false;
  *out = *t;
  return true;
}

// A string map into *out, or, with out null, only checked as DecodeJob checks it.
bool StringMap(dom::element v, std::map<std::string, std::string>* out) {
  if (out != nullptr) out->clear();
  if (v.is_null()) return true;
  dom::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return false;
  for (dom::key_value_pair kv : o) {
    std::string_view s;
    if (kv.value.get_string().get(s) != simdjson::SUCCESS) return false;
    if (out != nullptr) (*out)[std::string(kv.key)] = std::string(s);
  }
  return true;
}

// A nullable JSON array decoded element by element with `one` into `*out` (cleared first; null
// leaves it empty).
template <typename T, typename DecodeOne>
bool ArrayOf(dom::element v, std::vector<T>* out, DecodeOne one) {
  out->clear();
  if (v.is_null()) return true;
  dom::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) return false;
  for (dom::element e : a) {
    T item;
    if (!one(e, &item)) return false;
    out->push_back(std::move(item));
  }
  return true;
}

bool OwnerRef(dom::element v, model::OwnerReference* r) {
  dom::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return false;
  for (dom::key_value_pair kv : o) {
    const std::string_view k = kv.key;
    bool ok = true;
    if (k == "apiVersion") {
      ok = Str(kv.value, &r->api_version);
    } else if (k == "kind") {
      ok = Str(kv.value, &r->kind);
    } else if (k == "name") {
      ok = Str(kv.value, &r->name);
    } else if (k == "uid") {
      ok = Str(kv.value, &r->uid);
    } else if (k == "controller") {
      ok = OptBool(kv.value, &r->controller);
    } else if (k == "blockOwnerDeletion") {
      ok = OptBool(kv.value, &r->block_owner_deletion);
    }
    if (!ok) return false;
  }
  r->raw = nullptr;
  return true;
}

// With keep_maps false the labels and annotations are checked but not kept (a Job's, which a pass
// never reads).
bool Meta(dom::element v, model::ObjectMeta* m, bool keep_maps = true) {
  *m = model::ObjectMeta();
  m->raw = nullptr;
  if (v.is_null()) return true;  // absent: decoded from {}
  dom::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return false;
  for (dom::key_value_pair kv : o) {
    const std::string_view k = kv.key;
    bool ok = true;
    if (k == "name") {
      ok = Str(kv.value, &m->name);
    } else if (k == "namespace") {
      ok = Str(kv.value, &m->namespace_);
    } else if (k == "uid") {
      ok = Str(kv.value, &m->uid);
    } else if (k == "resourceVersion") {
      ok = Str(kv.value, &m->resource_version);
    } else if (k == "creationTimestamp") {
      ok = OptTime(kv.value, &m->creation_timestamp);
    } else if (k == "deletionTimestamp") {
      ok = OptTime(kv.value, &m->deletion_timestamp);
    } else if (k == "labels") {
      ok = StringMap(kv.value, keep_maps ? &m->labels : nullptr);
    } else if (k == "annotations") {
      ok = StringMap(kv.value, keep_maps ? &m->annotations : nullptr);
    } else if (k == "ownerReferences") {
      ok = ArrayOf(kv.value, &m->owner_references, OwnerRef);
    }
    if (!ok) return false;
  }
  return true;
}

bool OptInt(dom::element v, std::optional<int64_t>* out) {
  if (v.is_null()) {
    out->reset();
    return true;
  }
  if (v.type() != dom::element_type::INT64) return false;  // nlohmann's unsigned and floats
  int64_t i = 0;
  if (v.get_int64().get(i) != simdjson::SUCCESS) return false;
  *out = i;
  return true;
}

// Only the keys in `known` (else the raw JSON would hold more than the typed fields).
bool OnlyKeys(dom::object o, std::initializer_list<std::string_view> known) {
  for (dom::key_value_pair kv : o) {
    bool found = false;
    for (std::string_view k : known) found = found || kv.key == k;
    if (!found) return false;
  }
  return true;
}

// Any key twice (ondemand lookups below would see the first, nlohmann keeps the last).
bool UniqueKeys(dom::object o) {
  size_t i = 0;
  for (dom::key_value_pair a : o) {
    size_t j = 0;
    for (dom::key_value_pair b : o) {
      if (j++ >= i) break;
      if (a.key == b.key) return false;
    }
    ++i;
  }
  return true;
}

bool ObjectRef(dom::element v, model::ObjectReference* r) {
  dom::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return false;
  if (!OnlyKeys(o, {"apiVersion", "kind", "namespace", "name", "uid", "resourceVersion"})) {
    return false;
  }
  r->raw = nullptr;
  for (dom::key_value_pair kv : o) {
    const std::string_view k = kv.key;
    bool ok = true;
    if (k == "apiVersion") {
      ok = Str(kv.value, &r->api_version);
    } else if (k == "kind") {
      ok = Str(kv.value, &r->kind);
    } else if (k == "namespace") {
      ok = Str(kv.value, &r->namespace_);
    } else if (k == "name") {
      ok = Str(kv.value, &r->name);
    } else if (k == "uid") {
      ok = Str(kv.value, &r->uid);
    } else if (k == "resourceVersion") {
      ok = Str(kv.value, &r->resource_version);
    }
    if (!ok) return false;
  }
  return true;
}

bool CronStatus(dom::element v, model::CronJobStatus* s) {
  *s = model::CronJobStatus();
  s->raw = nullptr;
  if (v.is_null()) return true;
  dom::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return false;
  if (!OnlyKeys(o, {"active", "lastScheduleTime", "lastSuccessfulTime"})) return false;
  for (dom::key_value_pair kv : o) {
    const std::string_view k = kv.key;
    bool ok = true;
    if (k == "active") {
      ok = ArrayOf(kv.value, &s->active, ObjectRef);
    } else if (k == "lastScheduleTime") {
      ok = OptTime(kv.value, &s->last_schedule_time);
    } else if (k == "lastSuccessfulTime") {
      ok = OptTime(kv.value, &s->last_successful_time);
    }
    if (!ok) return false;
  }
  return true;
}

// spec.jobTemplate without its spec (read from the bytes afterwards); *has_spec tells whether
// the template has a spec object.
bool Template(dom::element v, model::JobTemplate* t, bool* has_spec) {
  *t = model::JobTemplate();
  t->raw = nullptr;
  *has_spec = false;
  if (v.is_null()) return true;
  dom::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS || !UniqueKeys(o)) return false;
  for (dom::key_value_pair kv : o) {
    const std::string_view k = kv.key;
    if (k == "metadata") {
      if (kv.value.is_null()) continue;
      dom::object meta;
      if (kv.value.get_object().get(meta) != simdjson::SUCCESS) return false;
      for (dom::key_value_pair m : meta) {
        if (m.key == "labels" && !StringMap(m.value, &t->labels)) return false;
        if (m.key == "annotations" && !StringMap(m.value, &t->annotations)) return false;
      }
    } else if (k == "spec") {
      if (kv.value.is_null()) continue;
      if (!kv.value.is_object()) return false;
      *has_spec = true;
    }
  }
  return true;
}

bool CronSpec(dom::element v, model::CronJobSpec* s, bool* has_template_spec) {
  *s = model::CronJobSpec();
  s->raw = nullptr;
  *has_template_spec = false;
  s->job_template.raw = nullptr;
  if (v.is_null()) return true;
  dom::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS || !UniqueKeys(o)) return false;
  for (dom::key_value_pair kv : o) {
    const std::string_view k = kv.key;
    bool ok = true;
    if (k == "schedule") {
      ok = Str(kv.value, &s->schedule);
    } else if (k == "timeZone") {
      if (kv.value.is_null()) {
        s->time_zone.reset();
      } else {
        s->time_zone.emplace();
        ok = Str(kv.value, &*s->time_zone);
      }
    } else if (k == "startingDeadlineSeconds") {
      ok = OptInt(kv.value, &s->starting_deadline_seconds);
    } else if (k == "concurrencyPolicy") {
      ok = Str(kv.value, &s->concurrency_policy);
    } else if (k == "suspend") {
      ok = OptBool(kv.value, &s->suspend);
    } else if (k == "successfulJobsHistoryLimit") {
      ok = OptInt(kv.value, &s->successful_jobs_history_limit);
    } else if (k == "failedJobsHistoryLimit") {
      ok = OptInt(kv.value, &s->failed_jobs_history_limit);
    } else if (k == "jobTemplate") {
      ok = Template(kv.value, &s->job_template, has_template_spec);
    }
    if (!ok) return false;
  }
  return true;
}

// spec.jobTemplate.spec as DecodeCronJob holds it: its bytes parsed by nlohmann, kept as
// DumpJson's bytes of that tree (model::JsonText).
bool TemplateSpec(std::string_view json, model::JsonText* out) {
  namespace od = simdjson::ondemand;
  thread_local od::parser parser;
  // The bytes with simdjson's padding (spaces), in a buffer reused for every CronJob.
  thread_local std::string padded;
  padded.assign(json);
  padded.append(simdjson::SIMDJSON_PADDING, ' ');
  od::document doc;
  if (parser.iterate(padded.data(), json.size(), padded.size()).get(doc) != simdjson::SUCCESS) {
    return false;
  }
  od::object spec;
  std::string_view raw;
  if (doc["spec"]["jobTemplate"]["spec"].get_object().get(spec) != simdjson::SUCCESS ||
      spec.raw_json().get(raw) != simdjson::SUCCESS) {
    return false;
  }
  // The versions of a CronJob repeat its template (most differ only in status): each distinct
  // template is parsed and written once per thread and copied from then on. Bounded: starts over
  // at kMaxTemplates.
  static constexpr size_t kMaxTemplates = 1024;
  struct Hash {  // looks the bytes up without copying them into a key
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  thread_local std::unordered_map<std::string, model::JsonText, Hash, std::equal_to<>> parsed;
  if (auto it = parsed.find(raw); it != parsed.end()) {
    *out = it->second;
    return true;
  }
  auto j = model::ParseJson(raw);
  if (!j.ok()) return false;
  if (parsed.size() >= kMaxTemplates) parsed.clear();
  *out = model::JsonText(*j);
  parsed.emplace(std::string(raw), *out);
  return true;
}

bool Status(dom::element v, model::JobStatus* s) {
  *s = model::JobStatus();
  s->raw = nullptr;
  if (v.is_null()) return true;
  dom::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return false;
  for (dom::key_value_pair kv : o) {
    const std::string_view k = kv.key;
    bool ok = true;
    if (k == "conditions") {
      ok = ArrayOf(kv.value, &s->conditions, [](dom::element e, model::JobCondition* c) {
        dom::object co;
        if (e.get_object().get(co) != simdjson::SUCCESS) return false;
        c->raw = nullptr;
        for (dom::key_value_pair ckv : co) {
          if (ckv.key == "type" && !Str(ckv.value, &c->type)) return false;
          if (ckv.key == "status" && !Str(ckv.value, &c->status)) return false;
        }
        return true;
      });
    } else if (k == "startTime") {
      ok = OptTime(kv.value, &s->start_time);
    } else if (k == "completionTime") {
      ok = OptTime(kv.value, &s->completion_time);
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace

namespace {

// The Job in `doc` (a parsed document or member), as DecodeJobFieldsFast decodes it.
bool JobOf(dom::element doc, model::Job* job) {
  dom::object o;
  if (doc.get_object().get(o) != simdjson::SUCCESS) return false;
  StripJobJson(job);
  for (dom::key_value_pair kv : o) {
    const std::string_view k = kv.key;
    bool ok = true;
    if (k == "apiVersion") {
      ok = Str(kv.value, &job->api_version);
    } else if (k == "kind") {
      ok = Str(kv.value, &job->kind);
    } else if (k == "metadata") {
      ok = Meta(kv.value, &job->metadata, /*keep_maps=*/false);
    } else if (k == "spec") {
      ok = kv.value.is_null() || kv.value.is_object();
    } else if (k == "status") {
      ok = Status(kv.value, &job->status);
    }
    if (!ok) return false;
  }
  return true;
}

}  // namespace

bool DecodeJobFieldsFast(std::string_view json, model::Job* job) {
  // nlohmann and simdjson differ on some \u escapes (unpaired surrogates): never decide those.
  if (json.find("\\u") != std::string_view::npos) return false;
  thread_local dom::parser parser;
  dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS) return false;
  return JobOf(doc, job);
}

bool DecodeOutcomeFieldsFast(std::string_view payload, std::string_view verb,
                             model::ObjectKind kind, model::ApiOutcome* out) {
  const bool created_job = verb == "create" && kind == model::ObjectKind::kJob;
  if (!created_job && verb != "updateStatus" && verb != "delete") return false;
  if (payload.find("\\u") != std::string_view::npos) return false;
  thread_local dom::parser parser;
  dom::element doc;
  if (parser.parse(payload.data(), payload.size()).get(doc) != simdjson::SUCCESS) return false;
  dom::object o;
  if (doc.get_object().get(o) != simdjson::SUCCESS || !UniqueKeys(o)) return false;
  *out = model::ApiOutcome();
  for (dom::key_value_pair kv : o) {
    const std::string_view k = kv.key;
    if (k == "reason") {
      if (!Str(kv.value, &out->reason)) return false;
    } else if (k == "message") {
      if (!Str(kv.value, &out->message)) return false;
    } else if (k == "object" && created_job && !kv.value.is_null()) {
      model::Job job;
      if (!JobOf(kv.value, &job)) return false;  // DecodeJob decides (and the pass with it)
      out->object = CreatedJobAsRead(std::move(job.api_version), std::move(job.kind),
                                     std::move(job.metadata));
    }
  }
  return true;
}

model::Json CreatedJobAsRead(std::string api_version, std::string kind, model::ObjectMeta meta) {
  // Built member by member with the strings moved in (an initializer list copies each element,
  // twice for the nested object).
  model::Json object(model::Json::value_t::object);
  object["apiVersion"] = std::move(api_version);
  object["kind"] = std::move(kind);
  model::Json& m = object["metadata"];
  m = model::Json(model::Json::value_t::object);
  m["name"] = std::move(meta.name);
  m["namespace"] = std::move(meta.namespace_);
  m["uid"] = std::move(meta.uid);
  m["resourceVersion"] = std::move(meta.resource_version);
  return object;
}

Result<model::ApiOutcome> DecodeOutcomeFields(std::string_view payload, std::string_view verb,
                                              model::ObjectKind kind) {
  model::ApiOutcome out;
  if (DecodeOutcomeFieldsFast(payload, verb, kind, &out)) return out;
  CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(payload));
  return model::DecodeApiOutcome(j);
}

bool DecodeCronJobFieldsFast(std::string_view json, model::CronJob* cj) {
  if (json.find("\\u") != std::string_view::npos) return false;
  thread_local dom::parser parser;
  dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS) return false;
  dom::object o;
  if (doc.get_object().get(o) != simdjson::SUCCESS || !UniqueKeys(o)) return false;
  *cj = model::CronJob();
  cj->raw = nullptr;
  cj->metadata.raw = nullptr;
  cj->spec.raw = nullptr;
  cj->spec.job_template.raw = nullptr;
  cj->status.raw = nullptr;
  bool has_template_spec = false;
  for (dom::key_value_pair kv : o) {
    const std::string_view k = kv.key;
    bool ok = true;
    if (k == "apiVersion") {
      ok = Str(kv.value, &cj->api_version);
    } else if (k == "kind") {
      ok = Str(kv.value, &cj->kind);
    } else if (k == "metadata") {
      ok = Meta(kv.value, &cj->metadata);
    } else if (k == "spec") {
      ok = CronSpec(kv.value, &cj->spec, &has_template_spec);
    } else if (k == "status") {
      ok = CronStatus(kv.value, &cj->status);
    }
    if (!ok) return false;
  }
  return !has_template_spec || TemplateSpec(json, &cj->spec.job_template.spec);
}

void StripCronJobJson(model::CronJob* cj) {
  cj->raw = nullptr;
  cj->metadata.raw = nullptr;
  for (auto& r : cj->metadata.owner_references) r.raw = nullptr;
  cj->spec.raw = nullptr;
  cj->spec.job_template.raw = nullptr;
}

Result<model::CronJob> DecodeCronJobFields(std::string_view json) {
  model::CronJob cj;
  if (DecodeCronJobFieldsFast(json, &cj)) return cj;
  CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(json));
  CL_ASSIGN_OR_RETURN(cj, model::DecodeCronJob(j));
  StripCronJobJson(&cj);
  return cj;
}

void StripJobJson(model::Job* job) {
  job->raw = nullptr;
  job->spec = nullptr;
  job->metadata.raw = nullptr;
  job->metadata.labels.clear();
  job->metadata.annotations.clear();
  for (auto& r : job->metadata.owner_references) r.raw = nullptr;
  job->status.raw = nullptr;
  for (auto& c : job->status.conditions) c.raw = nullptr;
}

Result<model::Job> DecodeJobFields(std::string_view json) {
  model::Job job;
  if (DecodeJobFieldsFast(json, &job)) return job;
  CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(json));
  CL_ASSIGN_OR_RETURN(job, model::DecodeJob(j));
  StripJobJson(&job);
  return job;
}

}  // namespace cronledger::model
