#include "replay/job_fields.h"

#include <simdjson.h>

#include "model/json.h"

namespace cronledger::replay {
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

bool StringMap(dom::element v, std::map<std::string, std::string>* out) {
  out->clear();
  if (v.is_null()) return true;
  dom::object o;
  if (v.get_object().get(o) != simdjson::SUCCESS) return false;
  for (dom::key_value_pair kv : o) {
    std::string_view s;
    if (kv.value.get_string().get(s) != simdjson::SUCCESS) return false;
    (*out)[std::string(kv.key)] = std::string(s);
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

bool Meta(dom::element v, model::ObjectMeta* m) {
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
      ok = StringMap(kv.value, &m->labels);
    } else if (k == "annotations") {
      ok = StringMap(kv.value, &m->annotations);
    } else if (k == "ownerReferences") {
      m->owner_references.clear();
      if (kv.value.is_null()) continue;
      dom::array refs;
      if (kv.value.get_array().get(refs) != simdjson::SUCCESS) return false;
      for (dom::element e : refs) {
        model::OwnerReference r;
        if (!OwnerRef(e, &r)) return false;
        m->owner_references.push_back(std::move(r));
      }
    }
    if (!ok) return false;
  }
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
      s->conditions.clear();
      if (kv.value.is_null()) continue;
      dom::array conds;
      if (kv.value.get_array().get(conds) != simdjson::SUCCESS) return false;
      for (dom::element e : conds) {
        dom::object co;
        if (e.get_object().get(co) != simdjson::SUCCESS) return false;
        model::JobCondition c;
        c.raw = nullptr;
        for (dom::key_value_pair ckv : co) {
          if (ckv.key == "type" && !Str(ckv.value, &c.type)) return false;
          if (ckv.key == "status" && !Str(ckv.value, &c.status)) return false;
        }
        s->conditions.push_back(std::move(c));
      }
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

bool DecodeJobFieldsFast(std::string_view json, model::Job* job) {
  // nlohmann and simdjson differ on some \u escapes (unpaired surrogates): never decide those.
  if (json.find("\\u") != std::string_view::npos) return false;
  thread_local dom::parser parser;
  dom::element doc;
  if (parser.parse(json.data(), json.size()).get(doc) != simdjson::SUCCESS) return false;
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
      ok = Meta(kv.value, &job->metadata);
    } else if (k == "spec") {
      ok = kv.value.is_null() || kv.value.is_object();
    } else if (k == "status") {
      ok = Status(kv.value, &job->status);
    }
    if (!ok) return false;
  }
  return true;
}

void StripJobJson(model::Job* job) {
  job->raw = nullptr;
  job->spec = nullptr;
  job->metadata.raw = nullptr;
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

}  // namespace cronledger::replay
