#include "kube/testing/fake_objects.h"

#include <cstdio>

namespace cronledger::kube::testing {

Json FailureStatus(int code, const std::string& reason, const std::string& message,
                   const Json& details) {
  Json s = {{"kind", "Status"},    {"apiVersion", "v1"}, {"metadata", Json::object()},
            {"status", "Failure"}, {"message", message}, {"reason", reason}};
  if (!details.is_null()) s["details"] = details;
  s["code"] = code;
  return s;
}

Json StatusDetails(const ResourceType& type, const std::string& name) {
  Json d = {{"name", name}};
  if (!type.group.empty()) d["group"] = type.group;
  d["kind"] = type.resource;
  return d;
}

Json NotFoundStatus(const ResourceType& type, const std::string& name) {
  return FailureStatus(404, "NotFound", type.GroupResource() + " \"" + name + "\" not found",
                       StatusDetails(type, name));
}

Json AlreadyExistsStatus(const ResourceType& type, const std::string& name) {
  return FailureStatus(409, "AlreadyExists",
                       type.GroupResource() + " \"" + name + "\" already exists",
                       StatusDetails(type, name));
}

Json ConflictStatus(const ResourceType& type, const std::string& name, const std::string& why) {
  return FailureStatus(
      409, "Conflict",
      "Operation cannot be fulfilled on " + type.GroupResource() + " \"" + name + "\": " + why,
      StatusDetails(type, name));
}

Json InvalidStatus(const ResourceType& type, const std::string& name, const std::string& field,
                   const std::string& cause_type, const std::string& detail) {
  Json details = {{"name", name}};
  if (!type.group.empty()) details["group"] = type.group;
  details["kind"] = type.kind;
  details["causes"] =
      Json::array({{{"reason", cause_type}, {"message", detail}, {"field", field}}});
  const std::string qualified = type.group.empty() ? type.kind : type.kind + "." + type.group;
  return FailureStatus(422, "Invalid",
                       qualified + " \"" + name + "\" is invalid: " + field + ": " + detail,
                       details);
}

Json NamespaceTerminatingStatus(const ResourceType& type, const std::string& name,
                                const std::string& ns) {
  Json details = StatusDetails(type, name);
  details["causes"] = Json::array({{{"reason", "NamespaceTerminating"},
                                    {"message", "namespace " + ns + " is being terminated"},
                                    {"field", "metadata.namespace"}}});
  return FailureStatus(403, "Forbidden",
                       type.GroupResource() + " \"" + name +
                           "\" is forbidden: unable to create new content in namespace " + ns +
                           " because it is being terminated",
                       details);
}

Json ExpiredStatus(const std::string& message) { return FailureStatus(410, "Expired", message); }

std::string ValidateName(const std::string& name) {
  static const char* kMessage =
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
      "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
      "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
  if (name.size() > 253) return "must be no more than 253 characters";
  auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (name.empty() || !alnum(name.front()) || !alnum(name.back())) return kMessage;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (alnum(c) || c == '-') continue;
    if (c == '.' && alnum(name[i - 1]) && alnum(name[i + 1])) continue;
    return kMessage;
  }
  return "";
}

namespace {

void SetDefault(Json* obj, const char* key, const Json& value) {
  if (!obj->contains(key) || (*obj)[key].is_null()) (*obj)[key] = value;
}

void DefaultJobSpec(Json* job) {
  Json& spec = (*job)["spec"];
  if (!spec.is_object()) spec = Json::object();
  const std::string uid = (*job)["metadata"].value("uid", "");
  const std::string name = (*job)["metadata"].value("name", "");
  Json& tmpl = spec["template"];
  if (!tmpl.is_object()) tmpl = Json::object();
  // SetDefaults_Job: Job labels default to the template's.
  Json& meta = (*job)["metadata"];
  if ((!meta.contains("labels") || meta["labels"].empty()) && tmpl.contains("metadata") &&
      tmpl["metadata"].contains("labels") && !tmpl["metadata"]["labels"].empty()) {
    meta["labels"] = tmpl["metadata"]["labels"];
  }
  const bool completions_unset = !spec.contains("completions") || spec["completions"].is_null();
  const bool parallelism_unset = !spec.contains("parallelism") || spec["parallelism"].is_null();
  if (completions_unset && parallelism_unset) spec["completions"] = 1;
  SetDefault(&spec, "parallelism", 1);
  SetDefault(&spec, "backoffLimit", 6);
  SetDefault(&spec, "completionMode", "NonIndexed");
  SetDefault(&spec, "suspend", false);
  // generateSelector (jobStrategy.PrepareForCreate), 1.27+ label names plus the legacy ones.
  if (!spec.value("manualSelector", false)) {
    Json& labels = tmpl["metadata"]["labels"];
    if (!labels.is_object()) labels = Json::object();
    labels["batch.kubernetes.io/controller-uid"] = uid;
    labels["batch.kubernetes.io/job-name"] = name;
    labels["controller-uid"] = uid;
    labels["job-name"] = name;
    spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/controller-uid", uid}}}};
  }
  DefaultPodTemplate(&tmpl);
}

void DefaultCronJobSpec(Json* cronjob) {
  Json& spec = (*cronjob)["spec"];
  if (!spec.is_object()) return;
  SetDefault(&spec, "concurrencyPolicy", "Allow");
  SetDefault(&spec, "suspend", false);
  SetDefault(&spec, "successfulJobsHistoryLimit", 3);
  SetDefault(&spec, "failedJobsHistoryLimit", 1);
  if (spec.contains("jobTemplate") && spec["jobTemplate"].is_object()) {
    Json& jt = spec["jobTemplate"];
    if (!jt.contains("metadata")) jt["metadata"] = Json::object();
    SetDefault(&jt["metadata"], "creationTimestamp", nullptr);
    if (jt.contains("spec") && jt["spec"].is_object()) DefaultPodTemplate(&jt["spec"]["template"]);
  }
}

}  // namespace

void DefaultPodTemplate(Json* pod_template) {
  if (!pod_template->is_object()) *pod_template = Json::object();
  Json& meta = (*pod_template)["metadata"];
  if (!meta.is_object()) meta = Json::object();
  SetDefault(&meta, "creationTimestamp", nullptr);
  Json& spec = (*pod_template)["spec"];
  if (!spec.is_object()) spec = Json::object();
  SetDefault(&spec, "dnsPolicy", "ClusterFirst");
  SetDefault(&spec, "schedulerName", "default-scheduler");
  SetDefault(&spec, "securityContext", Json::object());
  SetDefault(&spec, "terminationGracePeriodSeconds", 30);
  if (spec.contains("containers") && spec["containers"].is_array()) {
    for (Json& c : spec["containers"]) {
      if (!c.is_object()) continue;
      SetDefault(&c, "resources", Json::object());
      SetDefault(&c, "terminationMessagePath", "/dev/termination-log");
      SetDefault(&c, "terminationMessagePolicy", "File");
      const std::string image = c.value("image", "");
      const size_t slash = image.rfind('/');
      const std::string last = slash == std::string::npos ? image : image.substr(slash + 1);
      const bool latest =
          last.find(':') == std::string::npos || last.substr(last.find(':')) == ":latest";
      SetDefault(&c, "imagePullPolicy",
                 image.find('@') == std::string::npos && latest ? "Always" : "IfNotPresent");
    }
  }
}

void ApplyCreateDefaults(const ResourceType& type, Json* object) {
  // Strategies with a status subresource drop client-set status on create. Built-in types then
  // serialise the empty struct ("status": {}); custom resources omit it.
  if (type.has_status_subresource) {
    if (type.group == "batch") {
      (*object)["status"] = Json::object();
    } else {
      object->erase("status");
    }
  }
  if (type.group == "batch" && type.resource == "jobs") DefaultJobSpec(object);
  if (type.group == "batch" && type.resource == "cronjobs") DefaultCronJobSpec(object);
}

namespace {

Json FieldSet(const Json& value) {
  Json out = Json::object();
  if (!value.is_object()) return out;
  for (auto it = value.begin(); it != value.end(); ++it) {
    if (it.value().is_object() && !it.value().empty()) {
      Json inner = FieldSet(it.value());
      inner["."] = Json::object();
      out["f:" + it.key()] = std::move(inner);
    } else {
      out["f:" + it.key()] = Json::object();
    }
  }
  return out;
}

}  // namespace

Json ManagedFieldsEntry(const std::string& manager, const std::string& api_version,
                        const std::string& operation, const std::string& subresource, Time now,
                        const Json& object) {
  Json owned = Json::object();
  if (subresource == "status") {
    if (object.contains("status")) owned["f:status"] = FieldSet(object["status"]);
  } else {
    for (auto it = object.begin(); it != object.end(); ++it) {
      const std::string& key = it.key();
      if (key == "apiVersion" || key == "kind" || key == "status") continue;
      if (key == "metadata") {
        Json meta = Json::object();
        for (const char* field : {"labels", "annotations", "ownerReferences", "finalizers"}) {
          if (it.value().contains(field) && !it.value()[field].empty()) {
            meta[std::string("f:") + field] = FieldSet(it.value()[field]);
            meta[std::string("f:") + field]["."] = Json::object();
          }
        }
        if (!meta.empty()) owned["f:metadata"] = meta;
        continue;
      }
      owned["f:" + key] = FieldSet(it.value());
    }
  }
  Json entry = {{"manager", manager},        {"operation", operation},
                {"apiVersion", api_version}, {"time", FormatRfc3339(now)},
                {"fieldsType", "FieldsV1"},  {"fieldsV1", owned}};
  if (!subresource.empty()) entry["subresource"] = subresource;
  return entry;
}

void RecordManager(Json* object, const Json& entry) {
  Json& fields = (*object)["metadata"]["managedFields"];
  if (!fields.is_array()) fields = Json::array();
  for (Json& e : fields) {
    if (e.value("manager", "") == entry.value("manager", "") &&
        e.value("operation", "") == entry.value("operation", "") &&
        e.value("subresource", "") == entry.value("subresource", "")) {
      e = entry;
      return;
    }
  }
  fields.push_back(entry);
}

std::string FixtureUid(uint64_t n) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "00000000-0000-4000-8000-%012llx",
                static_cast<unsigned long long>(n));
  return buf;
}

std::string GenerateNameSuffix(uint64_t n) {
  // utilrand.String's alphabet: no vowels (no accidental words), no confusable characters.
  static const char kAlphabet[] = "bcdfghjklmnpqrstvwxz2456789";
  constexpr uint64_t kSize = sizeof(kAlphabet) - 1;
  uint64_t x = n * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
  std::string out;
  for (int i = 0; i < 5; ++i) {
    out += kAlphabet[x % kSize];
    x /= kSize;
  }
  return out;
}

}  // namespace cronledger::kube::testing
