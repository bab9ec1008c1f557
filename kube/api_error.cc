#include "kube/api_error.h"

namespace cronledger::kube {
namespace {

using model::Json;

std::string StringField(const Json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

bool ApiError::HasCause(std::string_view type) const {
  for (const StatusCause& c : causes) {
    if (c.type == type) return true;
  }
  return false;
}

std::string ApiError::OutcomeReason() const {
  if (HasCause("NamespaceTerminating")) return "NamespaceTerminating";
  if (!reason.empty()) return reason;
  return "Transport";
}

Status ApiError::ToStatus() const {
  const std::string text = ToString();
  if (IsNotFound()) return Status::NotFound(text);
  if (IsAlreadyExists()) return Status::AlreadyExists(text);
  if (IsConflict()) return Status::Conflict(text);
  if (IsExpired()) return Status::OutOfRange(text);
  if (reason == "Invalid" || reason == "BadRequest" || code == 400 || code == 422) {
    return Status::InvalidArgument(text);
  }
  if (IsTransport() || IsTooManyRequests() || IsServerError()) return Status::Unavailable(text);
  if (reason == "Forbidden" || reason == "Unauthorized" || code == 401 || code == 403) {
    return Status::FailedPrecondition(text);
  }
  return Status::Internal(text);
}

std::string ApiError::ToString() const {
  std::string out = IsTransport() ? std::string("transport")
                                  : (code == 0 ? "client " : std::to_string(code) + " ") + reason;
  if (!message.empty()) out += ": " + message;
  for (const StatusCause& c : causes) {
    if (!c.type.empty()) out += " [" + c.type + "]";
  }
  return out;
}

std::string ReasonForCode(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "RequestEntityTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 500:
      return "InternalError";
    case 503:
      return "ServiceUnavailable";
    case 504:
      return "Timeout";
    default:
      return "Unknown";
  }
}

ApiError ApiErrorFromStatus(const Json& status) {
  ApiError e;
  e.body = status;
  if (!status.is_object()) return e;
  if (auto it = status.find("code"); it != status.end() && it->is_number_integer()) {
    e.code = it->get<int>();
  }
  e.reason = StringField(status, "reason");
  e.message = StringField(status, "message");
  if (e.reason.empty()) e.reason = ReasonForCode(e.code);
  auto details = status.find("details");
  if (details != status.end() && details->is_object()) {
    auto causes = details->find("causes");
    if (causes != details->end() && causes->is_array()) {
      for (const Json& c : *causes) {
        e.causes.push_back(
            {StringField(c, "reason"), StringField(c, "message"), StringField(c, "field")});
      }
    }
    auto ra = details->find("retryAfterSeconds");
    if (ra != details->end() && ra->is_number_integer()) e.retry_after = ra->get<int64_t>();
  }
  return e;
}

ApiError ApiErrorFromResponse(int code, std::string_view body) {
  auto parsed = model::ParseJson(body);
  if (parsed.ok() && parsed->is_object() && StringField(*parsed, "kind") == "Status") {
    ApiError e = ApiErrorFromStatus(*parsed);
    e.code = code;  // the HTTP code is authoritative
    if (e.reason.empty() || e.reason == "Unknown") e.reason = ReasonForCode(code);
    return e;
  }
  ApiError e;
  e.code = code;
  e.reason = ReasonForCode(code);
  constexpr size_t kMaxMessage = 512;
  e.message = std::string(body.substr(0, kMaxMessage));
  return e;
}

ApiError TransportError(std::string_view message) {
  ApiError e;
  e.message = std::string(message);
  return e;
}

}  // namespace cronledger::kube
