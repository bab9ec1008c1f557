#include "kube/poco_client.h"

#include <Poco/URI.h>

#include <memory>
#include <utility>
#include <vector>

#include "kube/poco_transport.h"
#include "kube/rate_limiter.h"
#include "kube/token_source.h"

namespace cronledger::kube {
namespace {

using internal::HttpRequest;
using internal::HttpResponse;

std::string Encode(const std::string& value) {
  std::string out;
  Poco::URI::encode(value, "!#$&'()*+,/:;=?@[]", out);
  return out;
}

class Query {
 public:
  void Add(const char* key, const std::string& value) {
    if (value.empty()) return;
    text_ += text_.empty() ? "?" : "&";
    text_ += key;
    text_ += "=";
    text_ += Encode(value);
  }
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

ApiError ClientError(std::string message) {
  ApiError e;
  e.reason = "BadRequest";
  e.message = std::move(message);
  return e;
}

std::string NameOf(const Json& object) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto name = meta->find("name");
  return name != meta->end() && name->is_string() ? name->get<std::string>() : "";
}

KubeResult<Json> ParseBody(std::string_view body, int code) {
  auto parsed = model::ParseJson(body);
  if (!parsed.ok()) {
    ApiError e = TransportError("response is not JSON: " + parsed.status().message());
    e.code = code;
    e.reason = "InternalError";
    return e;
  }
  return std::move(parsed).value();
}

const char* PatchContentType(PatchType type) {
  switch (type) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
  }
  return "application/merge-patch+json";
}

}  // namespace

struct PocoKubeClient::Impl {
  PocoKubeClientOptions options;
  std::unique_ptr<internal::HttpTransport> transport;
  std::unique_ptr<BearerTokenSource> tokens;
  std::shared_ptr<TokenBucket> bucket;  // shared with the Background() client
  bool background = false;
  Cancellation never_cancelled;

  Impl(const PocoKubeClientOptions& o, std::unique_ptr<internal::HttpTransport> t,
       std::unique_ptr<BearerTokenSource> token_source)
      : options(o),
        transport(std::move(t)),
        tokens(std::move(token_source)),
        bucket(std::make_shared<TokenBucket>(*o.clock, o.qps, o.burst)) {}

  // False when `cancel` fired while waiting for a token.
  bool Throttle(const Cancellation& cancel) {
    if (background) {
      for (Duration wait = bucket->TryTake(); wait > Duration::zero(); wait = bucket->TryTake()) {
        if (!options.sleeper->SleepFor(wait, cancel)) return false;
      }
      return true;
    }
    const Duration wait = bucket->Reserve();
    return wait <= Duration::zero() || options.sleeper->SleepFor(wait, cancel);
  }

  KubeResult<std::string> Token() {
    auto token = tokens->Token();
    if (!token.ok()) return TransportError(token.status().message());
    return std::move(token).value();
  }

  // Runs `attempt` under throttling and the retry policy.
  template <typename T, typename Attempt>
  KubeResult<T> WithRetries(const std::string& key, bool idempotent, const Cancellation& cancel,
                            Attempt attempt) {
    bool reauthenticated = false;
    for (int n = 1;; ++n) {
      if (!Throttle(cancel)) return TransportError(key + ": cancelled");
      KubeResult<std::string> token = Token();
      if (!token.ok()) return token.error();
      KubeResult<T> result = attempt(token.value());
      if (result.ok()) return result;
      // client-go's exec authenticator: a 401 means the plugin's credential is no longer good;
      // run the plugin again and retry once.
      if (result.error().code == 401 && !reauthenticated && tokens->Invalidate()) {
        reauthenticated = true;
        continue;
      }
      const std::optional<Duration> delay =
          RetryDelay(options.retry, result.error(), idempotent, key, n);
      if (!delay.has_value()) return result;
      if (!options.sleeper->SleepFor(*delay, cancel)) return result;
    }
  }

  KubeResult<Json> Do(HttpRequest request, bool idempotent) {
    KubeResult<HttpResponse> response = DoRaw(std::move(request), idempotent);
    if (!response.ok()) return response.error();
    return ParseBody(response.value().body, response.value().code);
  }

  // Do() without parsing the answer: the response as the server sent it.
  KubeResult<HttpResponse> DoRaw(HttpRequest request, bool idempotent) {
    const std::string key = request.method + " " + request.path_and_query;
    KubeResult<HttpResponse> response = WithRetries<HttpResponse>(
        key, idempotent, never_cancelled,
        [&](const std::string& token) -> KubeResult<HttpResponse> {
          KubeResult<HttpResponse> r = transport->RoundTrip(request, token);
          if (!r.ok() || (r->code >= 200 && r->code < 300)) return r;
          ApiError e = ApiErrorFromResponse(r->code, r->body);
          if (r->retry_after.has_value()) e.retry_after = r->retry_after;
          return e;
        });
    return response;
  }

  KubeResult<Json> Send(const char* method, std::string path, const Json& body,
                        const char* content_type, bool idempotent) {
    HttpRequest request;
    request.method = method;
    request.path_and_query = std::move(path);
    if (!body.is_null()) {
      request.body = model::DumpJson(body);
      request.content_type = content_type;
    }
    return Do(std::move(request), idempotent);
  }

  std::string Namespace(const ResourceType& type, std::string_view ns, const Json& object) const {
    if (!type.namespaced || !ns.empty()) return std::string(ns);
    auto meta = object.find("metadata");
    if (meta != object.end() && meta->is_object()) {
      auto n = meta->find("namespace");
      if (n != meta->end() && n->is_string()) return n->get<std::string>();
    }
    return "";
  }
};

PocoKubeClient::PocoKubeClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Result<std::unique_ptr<PocoKubeClient>> PocoKubeClient::Background() const {
  CL_ASSIGN_OR_RETURN(std::unique_ptr<PocoKubeClient> client, Open(impl_->options));
  client->impl_->bucket = impl_->bucket;
  client->impl_->background = true;
  return client;
}
PocoKubeClient::~PocoKubeClient() = default;

Result<std::unique_ptr<PocoKubeClient>> PocoKubeClient::Open(const PocoKubeClientOptions& options) {
  if (options.clock == nullptr || options.sleeper == nullptr) {
    return Status::InvalidArgument("PocoKubeClientOptions needs a clock and a sleeper");
  }
  if (options.config.exec && options.wall_clock == nullptr) {
    return Status::InvalidArgument("PocoKubeClientOptions needs a wall clock for an exec plugin");
  }
  auto tokens = std::make_unique<BearerTokenSource>(options.config, options.wall_clock);
  KubeConfig transport_config = options.config;
  if (options.config.exec) {
    // The plugin's client certificate is part of the TLS context, which is built once here.
    CL_ASSIGN_OR_RETURN(ExecCredential credential, tokens->Credential());
    if (!credential.client_cert_pem.empty()) {
      transport_config.client_cert_pem = credential.client_cert_pem;
      transport_config.client_key_pem = credential.client_key_pem;
    }
  }
  CL_ASSIGN_OR_RETURN(auto transport, internal::HttpTransport::Open(
                                          transport_config, options.request_timeout,
                                          options.user_agent, options.max_idle_connections));
  return std::unique_ptr<PocoKubeClient>(
      new PocoKubeClient(std::make_unique<Impl>(options, std::move(transport), std::move(tokens))));
}

KubeResult<Json> PocoKubeClient::Get(const ResourceType& type, std::string_view ns,
                                     std::string_view name) {
  if (name.empty()) return ClientError("get: empty name");
  return impl_->Send("GET", ObjectPath(type, ns, name), Json(), "", true);
}

KubeResult<std::string> PocoKubeClient::ListBytes(const ResourceType& type, std::string_view ns,
                                                  const ListOptions& options) {
  Query q;
  q.Add("labelSelector", options.label_selector);
  q.Add("fieldSelector", options.field_selector);
  if (options.limit > 0) q.Add("limit", std::to_string(options.limit));
  q.Add("continue", options.continue_token);
  q.Add("resourceVersion", options.resource_version);
  q.Add("resourceVersionMatch", options.resource_version_match);
  HttpRequest request;
  request.method = "GET";
  request.path_and_query = CollectionPath(type, ns) + q.str();
  KubeResult<HttpResponse> response = impl_->DoRaw(std::move(request), true);
  if (!response.ok()) return response.error();
  return std::move(response).value().body;
}

KubeResult<ObjectList> PocoKubeClient::List(const ResourceType& type, std::string_view ns,
                                            const ListOptions& options) {
  KubeResult<std::string> bytes = ListBytes(type, ns, options);
  if (!bytes.ok()) return bytes.error();
  KubeResult<Json> body = ParseBody(bytes.value(), 200);
  if (!body.ok()) return body.error();
  const Json& j = body.value();
  ObjectList list;
  if (!j.is_object()) return TransportError("list response is not an object");
  if (auto meta = j.find("metadata"); meta != j.end() && meta->is_object()) {
    list.resource_version = meta->value("resourceVersion", "");
    list.continue_token = meta->value("continue", "");
    if (auto r = meta->find("remainingItemCount"); r != meta->end() && r->is_number_integer()) {
      list.remaining_item_count = r->get<int64_t>();
    }
  }
  if (auto items = j.find("items"); items != j.end() && items->is_array()) {
    list.items.reserve(items->size());
    for (const Json& item : *items) list.items.push_back(item);
  }
  return list;
}

KubeResult<Json> PocoKubeClient::Create(const ResourceType& type, std::string_view ns,
                                        const Json& object) {
  if (!object.is_object()) return ClientError("create: object is not a JSON object");
  const std::string n = impl_->Namespace(type, ns, object);
  if (type.namespaced && n.empty()) return ClientError("create: no namespace");
  // POST is not idempotent: only a 429 (rejected before any work) is retried.
  return impl_->Send("POST", CollectionPath(type, n), object, "application/json", false);
}

KubeResult<Json> PocoKubeClient::Update(const ResourceType& type, std::string_view ns,
                                        const Json& object) {
  if (!object.is_object() || NameOf(object).empty()) return ClientError("update: no name");
  const std::string n = impl_->Namespace(type, ns, object);
  return impl_->Send("PUT", ObjectPath(type, n, NameOf(object)), object, "application/json", true);
}

KubeResult<Json> PocoKubeClient::UpdateStatus(const ResourceType& type, std::string_view ns,
                                              const Json& object) {
  if (!object.is_object() || NameOf(object).empty()) return ClientError("update status: no name");
  const std::string n = impl_->Namespace(type, ns, object);
  return impl_->Send("PUT", ObjectPath(type, n, NameOf(object), "status"), object,
                     "application/json", true);
}

KubeResult<Json> PocoKubeClient::Patch(const ResourceType& type, std::string_view ns,
                                       std::string_view name, PatchType patch_type,
                                       const Json& patch, std::string_view subresource) {
  if (name.empty()) return ClientError("patch: empty name");
  return impl_->Send("PATCH", ObjectPath(type, ns, name, subresource), patch,
                     PatchContentType(patch_type), false);
}

KubeResult<Json> PocoKubeClient::Delete(const ResourceType& type, std::string_view ns,
                                        std::string_view name, const DeleteOptions& options) {
  if (name.empty()) return ClientError("delete: empty name");
  Json body = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}};
  switch (options.propagation) {
    case PropagationPolicy::kBackground:
      body["propagationPolicy"] = "Background";
      break;
    case PropagationPolicy::kForeground:
      body["propagationPolicy"] = "Foreground";
      break;
    case PropagationPolicy::kOrphan:
      body["propagationPolicy"] = "Orphan";
      break;
    case PropagationPolicy::kServerDefault:
      break;
  }
  if (!options.precondition_uid.empty()) body["preconditions"]["uid"] = options.precondition_uid;
  if (!options.precondition_resource_version.empty()) {
    body["preconditions"]["resourceVersion"] = options.precondition_resource_version;
  }
  return impl_->Send("DELETE", ObjectPath(type, ns, name), body, "application/json", true);
}

KubeResult<WatchResult> PocoKubeClient::Watch(const ResourceType& type, std::string_view ns,
                                              const WatchOptions& options,
                                              const WatchHandler& handler) {
  Query q;
  q.Add("watch", "1");
  q.Add("resourceVersion", options.resource_version);
  if (options.allow_bookmarks) q.Add("allowWatchBookmarks", "true");
  q.Add("labelSelector", options.label_selector);
  q.Add("fieldSelector", options.field_selector);
  const auto timeout = std::chrono::duration_cast<std::chrono::seconds>(options.server_timeout);
  if (timeout.count() > 0) q.Add("timeoutSeconds", std::to_string(timeout.count()));
  HttpRequest request;
  request.method = "GET";
  request.path_and_query = CollectionPath(type, ns) + q.str();
  const Cancellation& cancel = options.cancel ? *options.cancel : impl_->never_cancelled;
  // Opening the watch is an idempotent GET: retried like one. The stream itself is not retried
  // here; its end is reported so the caller resumes from the version it last saw.
  KubeResult<std::unique_ptr<internal::HttpStream>> stream =
      impl_->WithRetries<std::unique_ptr<internal::HttpStream>>(
          "WATCH " + request.path_and_query, true, cancel, [&](const std::string& token) {
            return impl_->transport->OpenStream(request, token, options.stall_timeout);
          });
  if (!stream.ok()) {
    if (cancel.cancelled()) {
      WatchResult r;
      r.end = WatchEnd::kCancelled;
      r.detail = "cancelled before the stream opened";
      return r;
    }
    return stream.error();
  }
  if (options.on_open) options.on_open();
  return internal::RunWatchStream(*stream.value(), options, handler);
}

}  // namespace cronledger::kube
