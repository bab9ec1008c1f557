// audit::Api behind a Poco HTTPServer (audit/server.h). Poco exceptions end here.
#include "audit/server.h"

#include <Poco/Exception.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/SSLException.h>
#include <Poco/Net/SecureServerSocket.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>

#include <mutex>

namespace cronledger::audit {
namespace {

using Poco::Net::HTTPRequestHandler;
using Poco::Net::HTTPResponse;
using Poco::Net::HTTPServerRequest;
using Poco::Net::HTTPServerResponse;

class Handler final : public HTTPRequestHandler {
 public:
  Handler(Api& api, size_t max_body) : api_(api), max_body_(max_body) {}

  void handleRequest(HTTPServerRequest& req, HTTPServerResponse& resp) override {
    ApiResponse r;
    const bool chunked = req.getChunkedTransferEncoding();
    const bool has_length = req.hasContentLength();
    if (chunked || (has_length && req.getContentLength64() > static_cast<int64_t>(max_body_))) {
      r.status = 413;
      r.body = "{\"error\":\"request body too large\"}\n";
      resp.setKeepAlive(false);  // the unread body must not be parsed as the next request
    } else {
      ApiRequest in;
      in.method = req.getMethod();
      in.target = req.getURI();
      in.authorization = req.get("Authorization", "");
      in.peer = req.clientAddress().host().toString();
      r = api_.Handle(in);
    }
    resp.setStatusAndReason(static_cast<HTTPResponse::HTTPStatus>(r.status));
    resp.setContentType(r.content_type);
    resp.set("Cache-Control", "no-store");
    resp.set("X-Content-Type-Options", "nosniff");
    for (const auto& [k, v] : r.headers) resp.set(k, v);
    resp.setContentLength64(static_cast<Poco::Int64>(r.body.size()));
    if (req.getMethod() == "HEAD") {
      resp.send();
    } else {
      resp.sendBuffer(r.body.data(), r.body.size());
    }
  }

 private:
  Api& api_;
  const size_t max_body_;
};

class Factory final : public Poco::Net::HTTPRequestHandlerFactory {
 public:
  Factory(Api& api, size_t max_body) : api_(api), max_body_(max_body) {}
  HTTPRequestHandler* createRequestHandler(const HTTPServerRequest&) override {
    return new Handler(api_, max_body_);
  }

 private:
  Api& api_;
  const size_t max_body_;
};

class PocoServer final : public Server {
 public:
  PocoServer(std::unique_ptr<Api> api, std::unique_ptr<Poco::Net::HTTPServer> http, uint16_t port)
      : api_(std::move(api)), http_(std::move(http)), port_(port) {}
  ~PocoServer() override { Stop(); }
  uint16_t port() const override { return port_; }
  void Stop() override {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    stopped_ = true;
    http_->stopAll(true);
  }

 private:
  std::unique_ptr<Api> api_;
  std::unique_ptr<Poco::Net::HTTPServer> http_;
  const uint16_t port_;
  std::mutex mu_;
  bool stopped_ = false;
};

}  // namespace

Result<std::unique_ptr<Server>> Server::Start(store::Ledger& ledger, const model::TimeZoneDb& tzdb,
                                              const ServerOptions& options) {
  if (options.api.token_file.empty()) return Status::InvalidArgument("a token file is required");
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together");
  }
  Poco::Net::SocketAddress addr;
  try {
    addr = Poco::Net::SocketAddress(options.listen);
  } catch (const Poco::Exception& e) {
    return Status::InvalidArgument("listen address \"" + options.listen + "\": " + e.displayText());
  }
  try {
    std::unique_ptr<Poco::Net::ServerSocket> socket;
    if (!options.tls_cert.empty()) {
      Poco::Net::Context::Ptr ctx =
          new Poco::Net::Context(Poco::Net::Context::TLS_SERVER_USE, options.tls_key,
                                 options.tls_cert, "", Poco::Net::Context::VERIFY_NONE);
      ctx->disableProtocols(Poco::Net::Context::PROTO_SSLV2 | Poco::Net::Context::PROTO_SSLV3 |
                            Poco::Net::Context::PROTO_TLSV1 | Poco::Net::Context::PROTO_TLSV1_1);
      socket = std::make_unique<Poco::Net::SecureServerSocket>(addr, 64, ctx);
    } else {
      socket = std::make_unique<Poco::Net::ServerSocket>(addr, 64);
    }
    const uint16_t port = socket->address().port();
    auto params = new Poco::Net::HTTPServerParams;
    params->setMaxThreads(options.max_threads);
    params->setMaxQueued(options.max_queued);
    params->setKeepAlive(true);
    params->setMaxKeepAliveRequests(100);
    auto api = std::make_unique<Api>(ledger, tzdb, options.api);
    auto http = std::make_unique<Poco::Net::HTTPServer>(new Factory(*api, options.max_body_bytes),
                                                        *socket, params);
    http->start();
    return std::unique_ptr<Server>(new PocoServer(std::move(api), std::move(http), port));
  } catch (const Poco::Net::SSLException& e) {
    return Status::InvalidArgument("TLS: " + e.displayText());
  } catch (const Poco::Exception& e) {
    return Status::IoError("listen on " + options.listen + ": " + e.displayText());
  }
}

}  // namespace cronledger::audit
