// Updates, patches and deletes in the fixture API server: optimistic concurrency on
// resourceVersion, the status subresource split, no-op updates that do not bump the version,
// generation on spec changes, and deletion with propagationPolicy and finalizers.

#include <sstream>

#include "kube/testing/fake_api_impl.h"
#include "kube/testing/fake_objects.h"

namespace cronledger::kube::testing {
namespace {

const char* kModified =
    "the object has been modified; please apply your changes to the latest version and try again";

// Copies server-owned metadata from the live object, as the registry's BeforeUpdate does.
void KeepServerMetadata(const Json& live, Json* next) {
  Json& meta = (*next)["metadata"];
  for (const char* key : {"name", "namespace", "uid", "creationTimestamp", "generation",
                          "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields"}) {
    if (live["metadata"].contains(key)) {
      meta[key] = live["metadata"][key];
    } else {
      meta.erase(key);
    }
  }
}

}  // namespace

Reply FakeApiServer::Impl::UpdateLocked(const Route& r, Json body, const std::string& manager) {
  const std::string key = StoreKey(r.type.GroupResource(), r.ns, r.name);
  const Json* live_ptr = store.Get(key);
  if (live_ptr == nullptr) return {404, NotFoundStatus(r.type, r.name)};
  const Json live = *live_ptr;
  if (!body.contains("metadata") || !body["metadata"].is_object()) {
    body["metadata"] = Json::object();
  }
  if (!Meta(body, "name").empty() && Meta(body, "name") != r.name) {
    return BadRequest("the name of the object (" + Meta(body, "name") +
                      ") does not match the name on the URL (" + r.name + ")");
  }
  const std::string rv = Meta(body, "resourceVersion");
  if (!rv.empty() && rv != Meta(live, "resourceVersion")) {
    return {409, ConflictStatus(r.type, r.name, kModified)};
  }
  const std::string uid = Meta(body, "uid");
  if (!uid.empty() && uid != Meta(live, "uid")) {
    return {409, ConflictStatus(r.type, r.name,
                                "Precondition failed: UID in precondition: " + uid +
                                    ", UID in object meta: " + Meta(live, "uid"))};
  }
  Json next;
  if (r.subresource == "status") {
    if (!r.type.has_status_subresource) return {404, NotFoundStatus(r.type, r.name)};
    // The status strategy keeps everything but status from the live object.
    next = live;
    if (body.contains("status")) {
      next["status"] = body["status"];
    } else {
      next.erase("status");
    }
  } else if (!r.subresource.empty()) {
    return {404, NotFoundStatus(r.type, r.name)};
  } else {
    next = std::move(body);
    next["apiVersion"] = r.type.ApiVersion();
    next["kind"] = r.type.kind;
    KeepServerMetadata(live, &next);
    if (r.type.has_status_subresource) {
      // The main resource ignores status; the spec bumps generation.
      if (live.contains("status")) {
        next["status"] = live["status"];
      } else {
        next.erase("status");
      }
      if (next.value("spec", Json()) != live.value("spec", Json())) {
        next["metadata"]["generation"] = live["metadata"].value("generation", 0) + 1;
      }
    }
  }
  next["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"];
  if (next == live) return {200, live};  // a no-op update writes nothing and keeps the version
  RecordManager(&next, ManagedFieldsEntry(manager, r.type.ApiVersion(), "Update", r.subresource,
                                          NowLocked(), next));
  const bool finalized = next["metadata"].contains("deletionTimestamp") &&
                         next["metadata"].value("finalizers", Json::array()).empty();
  if (finalized) {
    // Removing the last finalizer of an object being deleted deletes it.
    store.Remove(key);
    CommittedLocked();
    return {200, next};
  }
  store.Put(key, &next);
  CommittedLocked();
  return {200, next};
}

Reply FakeApiServer::Impl::Patch(const Route& r, const std::string& content_type,
                                 const std::string& body, const std::string& manager) {
  const std::string type = content_type.substr(0, content_type.find(';'));
  if (type == "application/apply-patch+yaml") {
    return {415, FailureStatus(415, "UnsupportedMediaType",
                               "the fixture API server does not implement server-side apply")};
  }
  if (type != "application/merge-patch+json" && type != "application/strategic-merge-patch+json" &&
      type != "application/json-patch+json") {
    return {415, FailureStatus(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted "
                               "media types include: application/json-patch+json, "
                               "application/merge-patch+json, "
                               "application/apply-patch+yaml")};
  }
  auto patch = model::ParseJson(body);
  if (!patch.ok()) return BadRequest("error decoding patch: " + patch.status().message());
  std::lock_guard<std::mutex> lock(mu);
  const Json* live = store.Get(StoreKey(r.type.GroupResource(), r.ns, r.name));
  if (live == nullptr) return {404, NotFoundStatus(r.type, r.name)};
  Json patched = *live;
  try {
    if (type == "application/json-patch+json") {
      patched = live->patch(*patch);
    } else {
      // Strategic merge is approximated by JSON merge patch (docs/kube.md).
      patched.merge_patch(*patch);
    }
  } catch (const std::exception& e) {
    return {422, FailureStatus(422, "Invalid",
                               std::string("the server rejected our request due to an error in "
                                           "our request: ") +
                                   e.what())};
  }
  if (!patched.is_object()) return BadRequest("patch result is not an object");
  return UpdateLocked(r, std::move(patched), manager);
}

Reply FakeApiServer::Impl::Delete(const Route& r, const std::string& body) {
  Json delete_options = Json::object();
  if (!body.empty()) {
    if (Reply bad = ParseBody(body, &delete_options); bad.code != 0) return bad;
  }
  std::lock_guard<std::mutex> lock(mu);
  return DeleteLocked(r, delete_options);
}

Reply FakeApiServer::Impl::DeleteLocked(const Route& r, const Json& delete_options) {
  const std::string key = StoreKey(r.type.GroupResource(), r.ns, r.name);
  const Json* live_ptr = store.Get(key);
  if (live_ptr == nullptr) return {404, NotFoundStatus(r.type, r.name)};
  Json live = *live_ptr;
  const Json pre = delete_options.value("preconditions", Json::object());
  if (pre.contains("uid") && pre["uid"] != live["metadata"]["uid"]) {
    return {409, ConflictStatus(
                     r.type, r.name,
                     "Precondition failed: UID in precondition: " + pre["uid"].get<std::string>() +
                         ", UID in object meta: " + Meta(live, "uid"))};
  }
  if (pre.contains("resourceVersion") &&
      pre["resourceVersion"] != live["metadata"]["resourceVersion"]) {
    return {409, ConflictStatus(
                     r.type, r.name,
                     "Precondition failed: ResourceVersion in precondition: " +
                         pre["resourceVersion"].get<std::string>() +
                         ", ResourceVersion in object meta: " + Meta(live, "resourceVersion"))};
  }
  std::string policy = delete_options.value("propagationPolicy", "");
  // batch/v1 Jobs keep the legacy default of orphaning their Pods.
  if (policy.empty()) policy = r.type.resource == "jobs" ? "Orphan" : "Background";
  if (policy == "Background") {
    store.Remove(key);
    CommittedLocked();
    Json details = StatusDetails(r.type, r.name);
    details["uid"] = live["metadata"]["uid"];
    Json ok = {{"kind", "Status"},
               {"apiVersion", "v1"},
               {"metadata", Json::object()},
               {"status", "Success"},
               {"details", details}};
    return {200, ok};
  }
  if (policy != "Foreground" && policy != "Orphan") {
    return {422, FailureStatus(422, "Invalid",
                               "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: "
                               "Unsupported value: \"" +
                                   policy + "\"")};
  }
  // Foreground/Orphan: the object gets the finalizer and a deletionTimestamp (a MODIFIED event);
  // the fixture's garbage collector then finishes at once (no dependents) and the object goes
  // (a DELETED event). The response is the object as it stood with the finalizer.
  Json& meta = live["metadata"];
  meta["deletionTimestamp"] = FormatRfc3339(NowLocked());
  meta["deletionGracePeriodSeconds"] = 0;
  meta["finalizers"].push_back(policy == "Foreground" ? "foregroundDeletion" : "orphan");
  store.Put(key, &live);
  store.Remove(key);
  CommittedLocked();
  return {200, live};
}

Result<std::function<bool(const Json&)>> MakeMatcher(const std::string& label_selector,
                                                     const std::string& field_selector) {
  struct Term {
    std::string key, value;
    enum { kEq, kNe, kExists, kNotExists } op;
  };
  std::vector<Term> labels;
  std::stringstream ls(label_selector);
  for (std::string part; std::getline(ls, part, ',');) {
    if (part.empty()) continue;
    if (part.find(" in ") != std::string::npos || part.find(" notin ") != std::string::npos) {
      return Status::InvalidArgument("set-based label selectors are not supported by the fixture");
    }
    if (size_t p = part.find("!="); p != std::string::npos) {
      labels.push_back({part.substr(0, p), part.substr(p + 2), Term::kNe});
    } else if (size_t q = part.find("=="); q != std::string::npos) {
      labels.push_back({part.substr(0, q), part.substr(q + 2), Term::kEq});
    } else if (size_t e = part.find('='); e != std::string::npos) {
      labels.push_back({part.substr(0, e), part.substr(e + 1), Term::kEq});
    } else if (part[0] == '!') {
      labels.push_back({part.substr(1), "", Term::kNotExists});
    } else {
      labels.push_back({part, "", Term::kExists});
    }
  }
  std::vector<std::pair<std::string, std::string>> fields;
  std::stringstream fs(field_selector);
  for (std::string part; std::getline(fs, part, ',');) {
    if (part.empty()) continue;
    const size_t e = part.find('=');
    const std::string field = part.substr(0, e);
    if (e == std::string::npos || (field != "metadata.name" && field != "metadata.namespace")) {
      return Status::InvalidArgument("field label not supported: " + field);
    }
    const size_t v = part[e + 1] == '=' ? e + 2 : e + 1;
    fields.emplace_back(field.substr(9), part.substr(v));
  }
  return std::function<bool(const Json&)>([labels, fields](const Json& object) {
    const Json meta = object.value("metadata", Json::object());
    const Json l = meta.value("labels", Json::object());
    for (const Term& t : labels) {
      const bool has = l.contains(t.key);
      const std::string v = has && l[t.key].is_string() ? l[t.key].get<std::string>() : "";
      if (t.op == Term::kEq && (!has || v != t.value)) return false;
      if (t.op == Term::kNe && has && v == t.value) return false;
      if (t.op == Term::kExists && !has) return false;
      if (t.op == Term::kNotExists && has) return false;
    }
    for (const auto& [field, value] : fields) {
      if (meta.value(field, "") != value) return false;
    }
    return true;
  });
}

}  // namespace cronledger::kube::testing
