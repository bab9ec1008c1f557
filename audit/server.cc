// audit::Api behind kube::HttpServer (audit/server.h).
#include "audit/server.h"

namespace cronledger::audit {
namespace {

kube::HttpReply Answer(Api& api, size_t max_body, const kube::HttpRequestHead& head) {
  kube::HttpReply reply;
  if (head.chunked || head.content_length.value_or(0) > static_cast<int64_t>(max_body)) {
    reply.status = 413;
    reply.content_type = "application/json";
    reply.body = "{\"error\":\"request body too large\"}\n";
  } else {
    ApiRequest in;
    in.method = head.method;
    in.target = head.target;
    in.authorization = head.authorization;
    in.peer = head.peer;
    ApiResponse r = api.Handle(in);
    reply.status = r.status;
    reply.content_type = std::move(r.content_type);
    reply.body = std::move(r.body);
    reply.headers = std::move(r.headers);
  }
  reply.headers.emplace_back("Cache-Control", "no-store");
  return reply;
}

class HttpApiServer final : public Server {
 public:
  explicit HttpApiServer(std::unique_ptr<Api> api) : api_(std::move(api)) {}
  ~HttpApiServer() override { Stop(); }
  uint16_t port() const override { return http_->port(); }
  void Stop() override {
    if (http_) http_->Stop();
  }

  Api& api() { return *api_; }
  void Serve(std::unique_ptr<kube::HttpServer> http) { http_ = std::move(http); }

 private:
  std::unique_ptr<Api> api_;
  std::unique_ptr<kube::HttpServer> http_;
};

}  // namespace

namespace {

Result<std::unique_ptr<Server>> StartWith(std::unique_ptr<Api> owned,
                                          const ServerOptions& options) {
  auto server = std::make_unique<HttpApiServer>(std::move(owned));
  kube::HttpServerOptions http;
  http.listen = options.listen;
  http.tls_cert = options.tls_cert;
  http.tls_key = options.tls_key;
  http.limits = options.limits;
  Api& api = server->api();
  const size_t max_body = options.max_body_bytes;
  auto started = kube::HttpServer::Start(
      http, [&api, max_body](const kube::HttpRequestHead& h) { return Answer(api, max_body, h); });
  if (!started.ok()) return started.status();
  server->Serve(std::move(started).value());
  return std::unique_ptr<Server>(std::move(server));
}

}  // namespace

Result<std::unique_ptr<Server>> Server::Start(store::Ledger& ledger, const model::TimeZoneDb& tzdb,
                                              const ServerOptions& options) {
  if (options.api.token_file.empty()) return Status::InvalidArgument("a token file is required");
  return StartWith(std::make_unique<Api>(ledger, tzdb, options.api), options);
}

Result<std::unique_ptr<Server>> Server::Start(std::vector<SourceLedger> sources,
                                              const model::TimeZoneDb& tzdb,
                                              const ServerOptions& options) {
  if (options.api.token_file.empty()) return Status::InvalidArgument("a token file is required");
  return StartWith(std::make_unique<Api>(std::move(sources), tzdb, options.api), options);
}

}  // namespace cronledger::audit
