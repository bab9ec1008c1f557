#pragma once

// The API calls a reconcile pass performs and their outcomes (docs/design.md rule 1: outcomes of
// actions are inputs). `reconciler::Decide` returns the next ApiCall of a pass; the driver performs
// it and feeds back an ApiOutcome. Both are persisted in the ledger so that a pass can be replayed
// exactly, hence the canonical JSON codecs below (Encode* output is byte-stable; decode(encode(x))
// == x).

#include <string>
#include <string_view>

#include "model/json.h"
#include "model/result.h"

namespace cronledger::model {

enum class ApiVerb { kGet, kCreate, kDelete, kUpdateStatus };
enum class ApiKind { kJob, kCronJob };

std::string_view ApiVerbName(ApiVerb v);  // "get" | "create" | "delete" | "updateStatus"
std::string_view ApiKindName(ApiKind k);  // "Job" | "CronJob"
Result<ApiVerb> ParseApiVerb(std::string_view s);
Result<ApiKind> ParseApiKind(std::string_view s);

struct ApiCall {
  ApiVerb verb = ApiVerb::kGet;
  ApiKind kind = ApiKind::kJob;
  std::string namespace_;
  std::string name;
  // create: the Job requested; updateStatus: the CronJob written; get/delete: null.
  Json object;

  friend bool operator==(const ApiCall&, const ApiCall&) = default;
};

// Kubernetes status reasons the reconciler distinguishes, plus the NamespaceTerminating status
// cause (docs/semantics.md §6.12), which cronledger carries in the same field.
namespace api_reason {
inline constexpr std::string_view kNotFound = "NotFound";
inline constexpr std::string_view kAlreadyExists = "AlreadyExists";
inline constexpr std::string_view kNamespaceTerminating = "NamespaceTerminating";
}  // namespace api_reason

struct ApiOutcome {
  // Empty when the call succeeded; otherwise the Kubernetes status reason ("NotFound",
  // "AlreadyExists", "Conflict", "InternalError", ...) or "NamespaceTerminating".
  std::string reason;
  // The error text as the API client reports it (Go's err.Error()); empty on success.
  std::string message;
  // The object the API returned on success (get, create, updateStatus); null otherwise.
  Json object;

  bool ok() const { return reason.empty(); }
  static ApiOutcome Ok(Json object) { return ApiOutcome{"", "", std::move(object)}; }
  static ApiOutcome Error(std::string reason, std::string message) {
    return ApiOutcome{std::move(reason), std::move(message), nullptr};
  }

  friend bool operator==(const ApiOutcome&, const ApiOutcome&) = default;
};

Json EncodeApiCall(const ApiCall& c);
Result<ApiCall> DecodeApiCall(const Json& j);
Json EncodeApiOutcome(const ApiOutcome& o);
Result<ApiOutcome> DecodeApiOutcome(const Json& j);

}  // namespace cronledger::model
