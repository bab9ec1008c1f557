// REST semantics of the fixture API server: what kube-apiserver's generic registry and the
// batch/v1 strategies do for get, list, create, update (and status), patch and delete.

#include <algorithm>
#include <sstream>

#include "kube/testing/fake_api_impl.h"
#include "kube/testing/fake_objects.h"

namespace cronledger::kube::testing {
namespace {

const char kB64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// base64.RawURLEncoding, as the API server encodes continue tokens.
std::string Base64Url(const std::string& in) {
  std::string out;
  int val = 0, bits = -6;
  for (unsigned char c : in) {
    val = (val << 8) + c;
    bits += 8;
    while (bits >= 0) {
      out += kB64[(val >> bits) & 0x3F];
      bits -= 6;
    }
  }
  if (bits > -6) out += kB64[((val << 8) >> (bits + 8)) & 0x3F];
  return out;
}

std::optional<std::string> UnBase64Url(const std::string& in) {
  std::string out;
  int val = 0, bits = -8;
  for (char c : in) {
    const char* p = std::find(kB64, kB64 + 64, c);
    if (p == kB64 + 64) return std::nullopt;
    val = (val << 6) + static_cast<int>(p - kB64);
    bits += 6;
    if (bits >= 0) {
      out += static_cast<char>((val >> bits) & 0xFF);
      bits -= 8;
    }
  }
  return out;
}

bool ParseRevision(const std::string& text, int64_t* out) {
  if (text.empty() || text.size() > 18) return false;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *out = v;
  return true;
}

}  // namespace

std::string Meta(const Json& object, const char* key) {
  if (!object.contains("metadata") || !object["metadata"].is_object()) return "";
  const Json& m = object["metadata"];
  return m.contains(key) && m[key].is_string() ? m[key].get<std::string>() : "";
}

Reply BadRequest(const std::string& message) {
  return {400, FailureStatus(400, "BadRequest", message)};
}

// Built-in list items carry no TypeMeta; custom resources are unstructured and keep it.
bool IsCustomResource(const ResourceType& type) { return type.group == "cronledger.io"; }

Reply ParseBody(const std::string& text, Json* out) {
  auto parsed = model::ParseJson(text);
  if (!parsed.ok() || !parsed->is_object()) {
    return BadRequest("error decoding request body: " +
                      (parsed.ok() ? std::string("not a JSON object") : parsed.status().message()));
  }
  *out = std::move(parsed).value();
  return {0, Json()};
}

std::string CollectionPrefix(const Route& r) {
  std::string prefix = r.type.GroupResource() + "/";
  if (!r.ns.empty()) prefix += r.ns + "/";
  return prefix;
}

Time FakeApiServer::Impl::NowLocked() {
  if (options.now) return options.now();
  return Time::FromUnix(1704067200 + ticks++);  // 2024-01-01T00:00:00Z, one second per write
}

void FakeApiServer::Impl::CommittedLocked() {
  if (options.compaction_window > 0) {
    store.CompactTo(store.revision() - options.compaction_window);
  }
  changed.notify_all();
}

Reply FakeApiServer::Impl::Get(const Route& r) {
  std::lock_guard<std::mutex> lock(mu);
  const Json* object = store.Get(StoreKey(r.type.GroupResource(), r.ns, r.name));
  if (object == nullptr) return {404, NotFoundStatus(r.type, r.name)};
  return {200, *object};
}

Reply FakeApiServer::Impl::List(const Route& r, const Params& params) {
  auto param = [&](const char* k) {
    auto it = params.find(k);
    return it == params.end() ? std::string() : it->second;
  };
  auto matcher = MakeMatcher(param("labelSelector"), param("fieldSelector"));
  if (!matcher.ok()) return BadRequest(matcher.status().message());
  int64_t limit = 0;
  if (!param("limit").empty() && !ParseRevision(param("limit"), &limit)) {
    return BadRequest("invalid limit");
  }
  std::lock_guard<std::mutex> lock(mu);
  const std::string prefix = CollectionPrefix(r);
  int64_t at = 0;
  std::string start_after;
  if (const std::string token = param("continue"); !token.empty()) {
    auto decoded = UnBase64Url(token);
    auto parsed = decoded ? model::ParseJson(*decoded) : Result<Json>(Status::Corruption("b64"));
    if (!parsed.ok() || !parsed->is_object() || !(*parsed)["rv"].is_number_integer() ||
        !(*parsed)["start"].is_string()) {
      return BadRequest("continue key is not valid: incorrect encoded start resourceVersion");
    }
    at = (*parsed)["rv"].get<int64_t>();
    std::string start = (*parsed)["start"].get<std::string>();
    if (!start.empty() && start.back() == '\0') start.pop_back();
    start_after = prefix + start;
    if (at < store.compacted()) {
      return {410, ExpiredStatus(
                       "The provided continue parameter is too old to display a consistent list "
                       "result. You can start a new list without the continue parameter, or use "
                       "the continue token in this response to retrieve the remainder of the "
                       "results. Continuing with the provided token results in an inconsistent "
                       "list - objects that were created, modified, or deleted between the time "
                       "the first chunk was returned and now may show up in the list.")};
    }
  } else if (const std::string rv = param("resourceVersion"); !rv.empty() && rv != "0") {
    int64_t wanted = 0;
    if (!ParseRevision(rv, &wanted)) return BadRequest("invalid resourceVersion " + rv);
    if (wanted > store.revision()) {
      Json details = {{"causes", Json::array({{{"reason", "ResourceVersionTooLarge"},
                                               {"message", "Too large resource version"}}})},
                      {"retryAfterSeconds", 1}};
      return {504, FailureStatus(504, "Timeout",
                                 "Too large resource version: " + rv +
                                     ", current: " + std::to_string(store.revision()),
                                 details)};
    }
    // Exact (explicitly, or implied by a limit as the legacy semantics do) reads that snapshot.
    if (param("resourceVersionMatch") == "Exact" ||
        (limit > 0 && param("resourceVersionMatch").empty())) {
      at = wanted;
      if (at < store.compacted()) {
        return {410, ExpiredStatus("too old resource version: " + rv + " (" +
                                   std::to_string(store.compacted()) + ")")};
      }
    }
  }
  if (at == 0) at = store.revision();
  auto page = store.List(prefix, at, start_after, limit, matcher.value());
  if (!page.ok()) return {410, ExpiredStatus("too old resource version: " + std::to_string(at))};
  Json list = {{"kind", r.type.kind + "List"}, {"apiVersion", r.type.ApiVersion()}};
  list["metadata"] = {{"resourceVersion", std::to_string(at)}};
  if (page->more) {
    Json token = {{"v", "meta.k8s.io/v1"},
                  {"rv", at},
                  {"start", page->last_key.substr(prefix.size()) + std::string(1, '\0')}};
    list["metadata"]["continue"] = Base64Url(token.dump());
    if (param("labelSelector").empty() && param("fieldSelector").empty()) {
      list["metadata"]["remainingItemCount"] = page->remaining;
    }
  }
  Json items = Json::array();
  for (Json& item : page->items) {
    if (!IsCustomResource(r.type)) {
      item.erase("kind");
      item.erase("apiVersion");
    }
    items.push_back(std::move(item));
  }
  list["items"] = std::move(items);
  return {200, list};
}

Reply FakeApiServer::Impl::Create(const Route& r, const std::string& body,
                                  const std::string& manager) {
  Json object;
  if (Reply bad = ParseBody(body, &object); bad.code != 0) return bad;
  std::lock_guard<std::mutex> lock(mu);
  return CreateLocked(r, std::move(object), manager);
}

Reply FakeApiServer::Impl::CreateLocked(const Route& r, Json object, const std::string& manager) {
  const std::string api_version = r.type.ApiVersion();
  if (object.contains("apiVersion") && object["apiVersion"] != api_version) {
    return BadRequest("the API version in the data (" + object["apiVersion"].dump() +
                      ") does not match the expected API version (" + api_version + ")");
  }
  if (object.contains("kind") && object["kind"] != r.type.kind) {
    return BadRequest("the kind in the data (" + object["kind"].dump() +
                      ") does not match the expected kind (" + r.type.kind + ")");
  }
  object["apiVersion"] = api_version;
  object["kind"] = r.type.kind;
  if (!object.contains("metadata") || !object["metadata"].is_object()) {
    object["metadata"] = Json::object();
  }
  Json& meta = object["metadata"];
  if (!Meta(object, "namespace").empty() && Meta(object, "namespace") != r.ns) {
    return BadRequest(
        "the namespace of the provided object does not match the namespace sent on the request");
  }
  std::string name = Meta(object, "name");
  if (name.empty() && !Meta(object, "generateName").empty()) {
    name = Meta(object, "generateName") + GenerateNameSuffix(++generated_names);
  }
  if (name.empty()) {
    return {422, InvalidStatus(r.type, "", "metadata.name", "FieldValueRequired",
                               "Required value: name or generateName is required")};
  }
  if (terminating.count(r.ns)) return {403, NamespaceTerminatingStatus(r.type, name, r.ns)};
  if (const std::string problem = ValidateName(name); !problem.empty()) {
    return {422, InvalidStatus(r.type, name, "metadata.name", "FieldValueInvalid",
                               "Invalid value: \"" + name + "\": " + problem)};
  }
  if (!Meta(object, "resourceVersion").empty()) {
    // etcd3 store: a generic error, hence 500.
    return {500, FailureStatus(500, "InternalError",
                               "resourceVersion should not be set on objects to be created")};
  }
  if (r.type.resource == "jobs") {
    const Json* policy = object.contains("spec") && object["spec"].is_object()
                             ? &object["spec"]["template"]["spec"]["restartPolicy"]
                             : nullptr;
    if (policy == nullptr || (*policy != "Never" && *policy != "OnFailure")) {
      return {422,
              InvalidStatus(r.type, name, "spec.template.spec.restartPolicy", "FieldValueRequired",
                            "Required value: valid values: \"OnFailure\", \"Never\"")};
    }
  }
  const std::string key = StoreKey(r.type.GroupResource(), r.ns, name);
  if (store.Get(key) != nullptr) return {409, AlreadyExistsStatus(r.type, name)};
  meta["name"] = name;
  if (r.type.namespaced) meta["namespace"] = r.ns;
  meta["uid"] = FixtureUid(++uids);
  const Time now = NowLocked();
  meta["creationTimestamp"] = FormatRfc3339(now);
  if (r.type.has_status_subresource) meta["generation"] = 1;
  meta.erase("managedFields");
  ApplyCreateDefaults(r.type, &object);
  RecordManager(&object, ManagedFieldsEntry(manager, api_version, "Update", "", now, object));
  store.Put(key, &object);
  CommittedLocked();
  return {201, object};
}

Reply FakeApiServer::Impl::Update(const Route& r, const std::string& body,
                                  const std::string& manager) {
  Json object;
  if (Reply bad = ParseBody(body, &object); bad.code != 0) return bad;
  std::lock_guard<std::mutex> lock(mu);
  return UpdateLocked(r, std::move(object), manager);
}

}  // namespace cronledger::kube::testing
