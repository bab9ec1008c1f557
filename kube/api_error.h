#pragma once

// Typed errors from the Kubernetes API. A failed request carries the HTTP code and the `Status`
// object the server sent (reason, message, details.causes), so callers can tell NotFound from
// AlreadyExists from a namespace being terminated, and record the reason in the ledger.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/json.h"
#include "model/result.h"

namespace cronledger::kube {

// metav1.StatusCause. The wire name of `type` is "reason".
struct StatusCause {
  std::string type;  // "NamespaceTerminating", "FieldValueInvalid", ...
  std::string message;
  std::string field;
};

struct ApiError {
  // HTTP status code; 0 when no response arrived (connect failure, timeout, reset).
  int code = 0;
  // metav1.StatusReason as served ("NotFound", "AlreadyExists", "Conflict", "Gone", "Expired",
  // "TooManyRequests", "InternalError", "ServiceUnavailable", "Invalid", "Forbidden", ...), or
  // derived from `code` when the body was not a Status. Empty for transport failures.
  std::string reason;
  std::string message;
  std::vector<StatusCause> causes;     // details.causes
  std::optional<int64_t> retry_after;  // seconds: Retry-After header or details.retryAfterSeconds
  model::Json body = model::Json();    // the Status object as served, or null

  bool IsNotFound() const { return reason == "NotFound"; }
  bool IsAlreadyExists() const { return reason == "AlreadyExists"; }
  bool IsConflict() const { return reason == "Conflict"; }
  // The requested resourceVersion/continue token is older than the server keeps (HTTP 410, or a
  // watch ERROR event carrying 410): the caller must relist.
  bool IsExpired() const { return code == 410 || reason == "Gone" || reason == "Expired"; }
  bool IsTooManyRequests() const { return code == 429; }
  bool IsServerError() const { return code >= 500; }
  // No HTTP response arrived (connect failure, reset, timeout). Client-side rejections of a request
  // before sending it also have code 0 but carry a reason ("BadRequest").
  bool IsTransport() const { return code == 0 && reason.empty(); }
  bool HasCause(std::string_view type) const;
  // The most specific reason for the ledger: the NamespaceTerminating cause when present (the
  // upstream controller checks it before the reason), else `reason`, else "Transport".
  std::string OutcomeReason() const;

  // Maps onto a cronledger Status: NotFound, AlreadyExists, Conflict map to the same codes;
  // expired → OutOfRange; 429, 5xx and transport failures → Unavailable; Invalid/BadRequest →
  // InvalidArgument; Forbidden/Unauthorized → FailedPrecondition; anything else → Internal.
  Status ToStatus() const;
  std::string ToString() const;
};

// Builds an ApiError from an HTTP code and response body. A body that is a metav1.Status supplies
// reason, message, causes and retryAfterSeconds; otherwise the reason is derived from the code
// (404 NotFound, 409 Conflict, 410 Gone, 429 TooManyRequests, 500 InternalError, ...) and the
// message is the body text (truncated).
ApiError ApiErrorFromResponse(int code, std::string_view body);
// Builds an ApiError from a decoded metav1.Status object (a watch ERROR event's object).
ApiError ApiErrorFromStatus(const model::Json& status);
// A transport failure: no HTTP response.
ApiError TransportError(std::string_view message);
// The reason the API server uses for an HTTP code when none is given (metav1 reasonForCode).
std::string ReasonForCode(int code);

// Either a T or an ApiError. Compatible with CL_ASSIGN_OR_RETURN (status() gives the mapped
// Status); error() keeps the typed details.
template <typename T>
class [[nodiscard]] KubeResult {
 public:
  KubeResult(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  KubeResult(ApiError error) : error_(std::move(error)) {}  // NOLINT: implicit by design

  bool ok() const { return value_.has_value(); }
  Status status() const { return ok() ? Status::Ok() : error_->ToStatus(); }
  const ApiError& error() const {
    CL_CHECK(!ok());
    return *error_;
  }
  T& value() & {
    CL_CHECK(ok());
    return *value_;
  }
  const T& value() const& {
    CL_CHECK(ok());
    return *value_;
  }
  T&& value() && {
    CL_CHECK(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::optional<T> value_;
  std::optional<ApiError> error_;
};

}  // namespace cronledger::kube
