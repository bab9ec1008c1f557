#include "kube/testing/fake_api_server.h"

#include <Poco/Crypto/EVPPKey.h>
#include <Poco/Crypto/X509Certificate.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequestImpl.h>
#include <Poco/Net/SecureServerSocket.h>
#include <Poco/Net/SecureStreamSocket.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/StreamCopier.h>
#include <Poco/URI.h>

#include <csignal>
#include <sstream>

#include "kube/api_error.h"
#include "kube/testing/fake_api_impl.h"
#include "kube/testing/fake_objects.h"
#include "kube/testing/wire_json.h"

namespace cronledger::kube::testing {
namespace {

std::vector<std::string> Split(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = path.find('/', start);
    const std::string part = path.substr(start, end == std::string::npos ? end : end - start);
    if (!part.empty()) out.push_back(part);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

// /api/v1/..., /apis/<group>/<version>/[namespaces/<ns>/]<resource>[/<name>[/<subresource>]]
std::optional<Route> ParseRoute(const std::string& path) {
  const std::vector<std::string> s = Split(path);
  std::string group, version;
  size_t i = 0;
  if (s.size() >= 3 && s[0] == "api") {
    version = s[1];
    i = 2;
  } else if (s.size() >= 4 && s[0] == "apis") {
    group = s[1];
    version = s[2];
    i = 3;
  } else {
    return std::nullopt;
  }
  Route r;
  if (s.size() >= i + 3 && s[i] == "namespaces") {
    r.ns = s[i + 1];
    i += 2;
  }
  const std::string resource = s[i++];
  bool found = false;
  for (const ResourceType& t : KnownResources()) {
    if (t.group == group && t.version == version && t.resource == resource) {
      r.type = t;
      found = true;
    }
  }
  if (!found || s.size() > i + 2) return std::nullopt;
  if (i < s.size()) r.name = s[i++];
  if (i < s.size()) r.subresource = s[i++];
  return r;
}

void Send(Poco::Net::HTTPServerResponse& response, const Reply& reply) {
  response.setStatus(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(reply.code));
  response.setContentType("application/json");
  if (reply.retry_after) response.set("Retry-After", std::to_string(*reply.retry_after));
  const std::string text = WireJson(reply.body);
  response.setContentLength(static_cast<std::streamsize>(text.size()));
  response.send() << text;
}

Reply FaultReply(int code, std::optional<int> retry_after) {
  std::string reason = ReasonForCode(code);
  std::string message;
  Json details;
  switch (code) {
    case 429:
      message = "Too many requests, please try again later.";
      break;
    case 500:
      message = "Internal error occurred: injected by the fixture";
      details = {{"causes", Json::array({{{"message", "injected by the fixture"}}})}};
      break;
    case 503:
      message = "the server is currently unable to handle the request";
      break;
    default:
      message = "injected by the fixture";
  }
  if (retry_after) {
    if (details.is_null()) details = Json::object();
    details["retryAfterSeconds"] = *retry_after;
  }
  return {code, FailureStatus(code, reason, message, details), retry_after};
}

class Handler : public Poco::Net::HTTPRequestHandler {
 public:
  explicit Handler(FakeApiServer::Impl& impl) : impl_(impl) {}
  void handleRequest(Poco::Net::HTTPServerRequest& request,
                     Poco::Net::HTTPServerResponse& response) override;

 private:
  FakeApiServer::Impl& impl_;
};

class Factory : public Poco::Net::HTTPRequestHandlerFactory {
 public:
  explicit Factory(FakeApiServer::Impl& impl) : impl_(impl) {}
  Poco::Net::HTTPRequestHandler* createRequestHandler(
      const Poco::Net::HTTPServerRequest&) override {
    return new Handler(impl_);
  }

 private:
  FakeApiServer::Impl& impl_;
};

void Handler::handleRequest(Poco::Net::HTTPServerRequest& request,
                            Poco::Net::HTTPServerResponse& response) {
  const Poco::URI uri(request.getURI());
  std::string body;
  Poco::StreamCopier::copyToString(request.stream(), body);
  RecordedRequest record;
  record.method = request.getMethod();
  record.path = uri.getPath();
  record.query = uri.getRawQuery();
  record.authorization = request.get("Authorization", "");
  record.content_type = request.get("Content-Type", "");
  record.user_agent = request.get("User-Agent", "");
  record.body = body;
  if (impl_.tls) {
    try {
      Poco::Net::SecureStreamSocket secure(
          static_cast<Poco::Net::HTTPServerRequestImpl&>(request).socket());
      if (secure.havePeerCertificate())
        record.client_cert_cn = secure.peerCertificate().commonName();
    } catch (const Poco::Exception&) {
    }
  }
  Params params;
  for (const auto& [k, v] : uri.getQueryParameters()) params[k] = v;
  const std::string method = record.method;
  size_t index = 0;
  std::optional<Reply> early;
  {
    std::lock_guard<std::mutex> lock(impl_.mu);
    index = impl_.requests_dropped + impl_.requests.size();
    impl_.requests.push_back(record);
    const auto& tokens = impl_.options.bearer_tokens;
    if (!tokens.empty()) {
      const std::string auth = record.authorization;
      bool ok = false;
      for (const std::string& t : tokens) ok = ok || auth == "Bearer " + t;
      if (!ok) early = Reply{401, FailureStatus(401, "Unauthorized", "Unauthorized")};
    }
    if (!early) {
      for (auto it = impl_.faults.begin(); it != impl_.faults.end(); ++it) {
        if (!it->method.empty() && it->method != method) continue;
        early = FaultReply(it->code, it->retry_after);
        if (--it->remaining == 0) impl_.faults.erase(it);
        break;
      }
    }
  }
  if (!early) {
    // HoldRequests(): wait here, before anything is read or changed, until released.
    const bool watch =
        params.count("watch") != 0 && (params["watch"] == "1" || params["watch"] == "true");
    std::unique_lock<std::mutex> lock(impl_.mu);
    auto held = [&] {
      const auto& h = impl_.hold;
      return h && !impl_.stopping && !watch && h->method == method &&
             record.user_agent.compare(0, h->user_agent_prefix.size(), h->user_agent_prefix) == 0;
    };
    if (held()) {
      if (index >= impl_.requests_dropped &&
          index - impl_.requests_dropped < impl_.requests.size()) {
        impl_.requests[index - impl_.requests_dropped].held = true;
      }
      ++impl_.held;
      impl_.changed.notify_all();
      impl_.changed.wait(lock, [&] { return !held(); });
      --impl_.held;
    }
  }
  const std::optional<Route> route = ParseRoute(record.path);
  if (!early && !route) {
    early = Reply{
        404, FailureStatus(404, "NotFound", "the server could not find the requested resource")};
  }
  // The first segment of the User-Agent names the field manager, as the real server does.
  const std::string manager = record.user_agent.substr(0, record.user_agent.find('/'));
  Reply reply;
  if (early) {
    reply = *early;
  } else if (method == "GET" && route->name.empty()) {
    const std::string watch = params.count("watch") ? params["watch"] : "";
    if (watch == "1" || watch == "true") {
      impl_.Watch(*route, params, request, response, index);
      return;
    }
    reply = impl_.List(*route, params);
  } else if (method == "GET") {
    reply = impl_.Get(*route);
  } else if (method == "POST" && route->name.empty()) {
    reply = impl_.Create(*route, body, manager);
  } else if (method == "PUT" && !route->name.empty()) {
    reply = impl_.Update(*route, body, manager);
  } else if (method == "PATCH" && !route->name.empty()) {
    reply = impl_.Patch(*route, request.getContentType(), body, manager);
  } else if (method == "DELETE" && !route->name.empty()) {
    reply = impl_.Delete(*route, body);
  } else {
    reply = {405, FailureStatus(405, "MethodNotAllowed",
                                "the server does not allow this method on the requested resource")};
  }
  std::optional<Duration> delay;
  {
    std::lock_guard<std::mutex> lock(impl_.mu);
    impl_.SetRequestStatusLocked(index, reply.code);
    if (method == "POST" && route && route->name.empty() && !early) {
      std::string name =
          reply.body.is_object() && reply.code == 201 ? Meta(reply.body, "name") : "";
      if (reply.code == 409 && reply.body.value("reason", "") == "AlreadyExists" &&
          reply.body.contains("details") && reply.body["details"].is_object()) {
        name = reply.body["details"].value("name", "");
      }
      if (!name.empty()) {
        CreateTally& t = impl_.creates[route->type.GroupResource()][route->ns + "/" + name];
        if (reply.code == 201) ++t.created;
        if (reply.code == 409) ++t.already_exists;
      }
    }
    for (auto it = impl_.slow.begin(); it != impl_.slow.end(); ++it) {
      if (!it->method.empty() && it->method != method) continue;
      if (!it->path.empty() && it->path != record.path) continue;
      delay = it->delay;
      if (--it->remaining == 0) impl_.slow.erase(it);
      if (index >= impl_.requests_dropped &&
          index - impl_.requests_dropped < impl_.requests.size()) {
        impl_.requests[index - impl_.requests_dropped].delayed = true;
      }
      break;
    }
  }
  if (delay) {
    // Hold the answer back (the fixture stopping ends the wait early).
    std::unique_lock<std::mutex> lock(impl_.mu);
    impl_.changed.wait_for(lock, *delay, [&] { return impl_.stopping; });
  }
  try {
    Send(response, reply);
  } catch (const std::exception&) {
    // The client gave up waiting and closed the connection.
  }
}

Status ReplyToStatus(const Reply& reply) {
  const std::string message = reply.body.value("message", "");
  const std::string reason = reply.body.value("reason", "");
  if (reason == "NotFound") return Status::NotFound(message);
  if (reason == "AlreadyExists") return Status::AlreadyExists(message);
  if (reason == "Conflict") return Status::Conflict(message);
  if (reply.code == 400 || reply.code == 422) return Status::InvalidArgument(message);
  return Status::FailedPrecondition(reason + ": " + message);
}

}  // namespace

FakeApiServer::FakeApiServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FakeApiServer::~FakeApiServer() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->changed.notify_all();
  impl_->server->stopAll(true);
  impl_->pool->joinAll();
}

Result<std::unique_ptr<FakeApiServer>> FakeApiServer::Start(const FakeApiServerOptions& options) {
  // A client that disappears mid-write must not kill the test process.
  std::signal(SIGPIPE, SIG_IGN);
  auto impl = std::make_unique<Impl>(options);
  if (options.tls_cert_pem.empty() != options.tls_key_pem.empty()) {
    return Status::InvalidArgument("fixture API server: TLS needs a certificate and a key");
  }
  impl->tls = !options.tls_cert_pem.empty();
  try {
    std::unique_ptr<Poco::Net::ServerSocket> listener;
    if (impl->tls) {
      Poco::Net::Context::Params params;
      params.verificationMode = options.client_ca_pem.empty() ? Poco::Net::Context::VERIFY_NONE
                                                              : Poco::Net::Context::VERIFY_RELAXED;
      params.loadDefaultCAs = false;
      Poco::Net::Context::Ptr ctx =
          new Poco::Net::Context(Poco::Net::Context::TLS_SERVER_USE, params);
      ctx->requireMinimumProtocol(Poco::Net::Context::PROTO_TLSV1_2);
      std::istringstream cert(options.tls_cert_pem), key(options.tls_key_pem);
      ctx->useCertificate(Poco::Crypto::X509Certificate(cert));
      ctx->usePrivateKey(Poco::Crypto::EVPPKey(nullptr, &key));
      if (!options.client_ca_pem.empty()) {
        std::istringstream ca(options.client_ca_pem);
        ctx->addCertificateAuthority(Poco::Crypto::X509Certificate(ca));
      }
      listener = std::make_unique<Poco::Net::SecureServerSocket>(
          Poco::Net::SocketAddress("127.0.0.1", 0), 64, ctx);
    } else {
      listener =
          std::make_unique<Poco::Net::ServerSocket>(Poco::Net::SocketAddress("127.0.0.1", 0));
    }
    Poco::Net::ServerSocket& socket = *listener;
    impl->port = socket.address().port();
    auto* params = new Poco::Net::HTTPServerParams;
    params->setMaxThreads(64);
    params->setMaxQueued(64);
    params->setKeepAlive(true);
    impl->pool = std::make_unique<Poco::ThreadPool>(2, 64);
    impl->server =
        std::make_unique<Poco::Net::HTTPServer>(new Factory(*impl), *impl->pool, socket, params);
    impl->server->start();
  } catch (const Poco::Exception& e) {
    return Status::IoError("fixture API server: " + e.displayText());
  }
  return std::unique_ptr<FakeApiServer>(new FakeApiServer(std::move(impl)));
}

std::string FakeApiServer::url() const {
  return std::string(impl_->tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port());
}
uint16_t FakeApiServer::port() const { return impl_->port; }

Result<Json> FakeApiServer::Create(const ResourceType& type, const Json& object) {
  Route r{type, Meta(object, "namespace"), "", ""};
  std::lock_guard<std::mutex> lock(impl_->mu);
  Reply reply = impl_->CreateLocked(r, object, "fixture");
  if (reply.code >= 300) return ReplyToStatus(reply);
  return reply.body;
}

Result<Json> FakeApiServer::Update(const ResourceType& type, const Json& object) {
  Route r{type, Meta(object, "namespace"), Meta(object, "name"), ""};
  std::lock_guard<std::mutex> lock(impl_->mu);
  Reply reply = impl_->UpdateLocked(r, object, "fixture");
  if (reply.code >= 300) return ReplyToStatus(reply);
  return reply.body;
}

Result<Json> FakeApiServer::Delete(const ResourceType& type, const std::string& ns,
                                   const std::string& name) {
  Route r{type, ns, name, ""};
  std::lock_guard<std::mutex> lock(impl_->mu);
  Reply reply = impl_->DeleteLocked(r, {{"propagationPolicy", "Background"}});
  if (reply.code >= 300) return ReplyToStatus(reply);
  return reply.body;
}

std::optional<Json> FakeApiServer::Get(const ResourceType& type, const std::string& ns,
                                       const std::string& name) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  const Json* object = impl_->store.Get(StoreKey(type.GroupResource(), ns, name));
  if (object == nullptr) return std::nullopt;
  return *object;
}

int64_t FakeApiServer::resource_version() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->store.revision();
}

void FakeApiServer::Compact() { CompactTo(resource_version()); }

void FakeApiServer::CompactTo(int64_t revision) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->store.CompactTo(revision);
  impl_->changed.notify_all();
}

void FakeApiServer::FailNext(int n, int code, std::optional<int> retry_after_seconds,
                             const std::string& method) {
  if (n <= 0) return;
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->faults.push_back({n, code, retry_after_seconds, method});
}

namespace {
void Bump(FakeApiServer::Impl& impl, uint64_t FakeApiServer::Impl::*epoch) {
  std::lock_guard<std::mutex> lock(impl.mu);
  ++(impl.*epoch);
  impl.changed.notify_all();
}
}  // namespace

void FakeApiServer::DropWatches() { Bump(*impl_, &Impl::drop_epoch); }
void FakeApiServer::ExpireWatches() { Bump(*impl_, &Impl::expire_epoch); }
void FakeApiServer::CloseWatches() { Bump(*impl_, &Impl::close_epoch); }
void FakeApiServer::SendBookmarks() { Bump(*impl_, &Impl::bookmark_epoch); }

void FakeApiServer::SetWatchesStalled(bool stalled) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->stalled = stalled;
  impl_->changed.notify_all();
}

void FakeApiServer::StallOpenWatches() { Bump(*impl_, &Impl::stall_open_epoch); }

void FakeApiServer::SlowNext(int n, Duration delay, const std::string& method,
                             const std::string& path) {
  if (n <= 0) return;
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->slow.push_back({n, delay, method, path});
}

std::map<std::string, CreateTally> FakeApiServer::creates(const ResourceType& type) const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  auto it = impl_->creates.find(type.GroupResource());
  return it == impl_->creates.end() ? std::map<std::string, CreateTally>() : it->second;
}

void FakeApiServer::HoldRequests(const std::string& method, const std::string& user_agent_prefix) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->hold = Impl::Hold{method, user_agent_prefix};
}

void FakeApiServer::ReleaseHeld() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->hold.reset();
  }
  impl_->changed.notify_all();
}

int FakeApiServer::held_requests() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->held;
}

void FakeApiServer::SetNamespaceTerminating(const std::string& ns, bool terminating) {
  std::lock_guard<std::mutex> lock(impl_->mu);
  if (terminating) {
    impl_->terminating.insert(ns);
  } else {
    impl_->terminating.erase(ns);
  }
}

std::vector<RecordedRequest> FakeApiServer::requests() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->requests;
}

size_t FakeApiServer::request_count() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->requests.size();
}

void FakeApiServer::ClearRequests() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->requests_dropped += impl_->requests.size();
  impl_->requests.clear();
}

int FakeApiServer::open_watches() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->open_watches;
}

bool FakeApiServer::WaitForWatches(int n, Duration timeout) const {
  std::unique_lock<std::mutex> lock(impl_->mu);
  return impl_->changed.wait_for(lock, timeout, [&] { return impl_->open_watches >= n; });
}

}  // namespace cronledger::kube::testing
