#include "model/api_call.h"

#include <array>
#include <utility>

namespace cronledger::model {
namespace {

constexpr std::array<std::pair<ApiVerb, std::string_view>, 4> kVerbs = {{
    {ApiVerb::kGet, "get"},
    {ApiVerb::kCreate, "create"},
    {ApiVerb::kDelete, "delete"},
    {ApiVerb::kUpdateStatus, "updateStatus"},
}};

constexpr std::array<std::pair<ApiKind, std::string_view>, 2> kKinds = {{
    {ApiKind::kJob, "Job"},
    {ApiKind::kCronJob, "CronJob"},
}};

template <typename E, size_t N>
Result<E> ParseName(const std::array<std::pair<E, std::string_view>, N>& table, std::string_view s,
                    std::string_view what) {
  for (const auto& [value, name] : table) {
    if (name == s) return value;
  }
  return Status::InvalidArgument("unknown " + std::string(what) + " \"" + std::string(s) + "\"");
}

template <typename E, size_t N>
std::string_view NameOf(const std::array<std::pair<E, std::string_view>, N>& table, E v) {
  for (const auto& [value, name] : table) {
    if (value == v) return name;
  }
  return "unknown";
}

Status RequireObject(const Json& j, std::string_view what) {
  if (j.is_object()) return Status::Ok();
  return Status::InvalidArgument(std::string(what) + ": expected object, got " + j.type_name());
}

}  // namespace

std::string_view ApiVerbName(ApiVerb v) { return NameOf(kVerbs, v); }
std::string_view ApiKindName(ApiKind k) { return NameOf(kKinds, k); }
Result<ApiVerb> ParseApiVerb(std::string_view s) { return ParseName(kVerbs, s, "API verb"); }
Result<ApiKind> ParseApiKind(std::string_view s) { return ParseName(kKinds, s, "API kind"); }

Json EncodeApiCall(const ApiCall& c) {
  Json j = Json::object();
  j["verb"] = ApiVerbName(c.verb);
  j["kind"] = ApiKindName(c.kind);
  j["namespace"] = c.namespace_;
  j["name"] = c.name;
  j["object"] = c.object;
  return j;
}

Result<ApiCall> DecodeApiCall(const Json& j) {
  CL_RETURN_IF_ERROR(RequireObject(j, "apiCall"));
  ApiCall c;
  CL_ASSIGN_OR_RETURN(auto verb, OptString(j, "verb", "apiCall"));
  CL_ASSIGN_OR_RETURN(c.verb, ParseApiVerb(verb.value_or("")));
  CL_ASSIGN_OR_RETURN(auto kind, OptString(j, "kind", "apiCall"));
  CL_ASSIGN_OR_RETURN(c.kind, ParseApiKind(kind.value_or("")));
  CL_ASSIGN_OR_RETURN(auto ns, OptString(j, "namespace", "apiCall"));
  c.namespace_ = ns.value_or("");
  CL_ASSIGN_OR_RETURN(auto name, OptString(j, "name", "apiCall"));
  c.name = name.value_or("");
  if (j.contains("object")) c.object = j["object"];
  return c;
}

Json EncodeApiOutcome(const ApiOutcome& o) {
  Json j = Json::object();
  j["reason"] = o.reason;
  j["message"] = o.message;
  j["object"] = o.object;
  return j;
}

Result<ApiOutcome> DecodeApiOutcome(const Json& j) {
  CL_RETURN_IF_ERROR(RequireObject(j, "apiOutcome"));
  ApiOutcome o;
  CL_ASSIGN_OR_RETURN(auto reason, OptString(j, "reason", "apiOutcome"));
  o.reason = reason.value_or("");
  CL_ASSIGN_OR_RETURN(auto message, OptString(j, "message", "apiOutcome"));
  o.message = message.value_or("");
  if (j.contains("object")) o.object = j["object"];
  return o;
}

}  // namespace cronledger::model
