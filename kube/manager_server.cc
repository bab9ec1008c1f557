// The metrics and health-probe listeners (kube/manager_server.h) on a Poco HTTPServer.
#include "kube/manager_server.h"

#include <Poco/Exception.h>
#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/ThreadPool.h>
#include <Poco/URI.h>

#include <mutex>

namespace cronledger::kube {
namespace {

bool AllDigits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

std::vector<std::pair<std::string, std::string>> QueryParams(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> out;
  try {
    Poco::URI uri("/?" + std::string(query));
    for (auto& kv : uri.getQueryParameters()) out.push_back(kv);
  } catch (const Poco::Exception&) {
  }
  return out;
}

// controller-runtime's pkg/healthz handler.
HttpReply Probe(const std::vector<HealthCheck>& configured, std::string_view sub,
                std::string_view query) {
  std::vector<HealthCheck> checks = configured;
  if (checks.empty()) checks.push_back({"ping", [] { return Status::Ok(); }});
  HttpReply reply;
  if (!sub.empty()) {
    for (const HealthCheck& c : checks) {
      if (c.name != sub) continue;
      Status s = c.check();
      if (s.ok()) {
        reply.body = "ok";
      } else {
        reply.status = 500;
        reply.body = "internal server error: " + c.name + " check failed\n";
      }
      return reply;
    }
    reply.status = 404;
    reply.body = "404 page not found\n";
    return reply;
  }
  bool verbose = false;
  std::vector<std::string> excluded;
  for (const auto& [k, v] : QueryParams(query)) {
    if (k == "verbose") verbose = true;
    if (k == "exclude") excluded.push_back(v);
  }
  std::string lines;
  bool failed = false;
  for (const HealthCheck& c : checks) {
    bool skip = false;
    for (const std::string& e : excluded) skip = skip || e == c.name;
    if (skip) {
      lines += "[+]" + c.name + " excluded: ok\n";
      continue;
    }
    if (c.check().ok()) {
      lines += "[+]" + c.name + " ok\n";
    } else {
      lines += "[-]" + c.name + " failed: reason withheld\n";
      failed = true;
    }
  }
  if (failed) {
    reply.status = 500;
    reply.body = lines + "healthz check failed\n";
  } else if (verbose) {
    reply.body = lines + "healthz check passed\n";
  } else {
    reply.body = "ok";
  }
  return reply;
}

class Handler final : public Poco::Net::HTTPRequestHandler {
 public:
  explicit Handler(const ManagerServerOptions& options) : options_(options) {}
  void handleRequest(Poco::Net::HTTPServerRequest& req,
                     Poco::Net::HTTPServerResponse& resp) override {
    const std::string& target = req.getURI();
    const size_t q = target.find('?');
    const std::string path = target.substr(0, q);
    const std::string query = q == std::string::npos ? "" : target.substr(q + 1);
    HttpReply r = HandleManagerRequest(options_, req.getMethod(), path, query);
    resp.setStatusAndReason(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(r.status));
    resp.setContentType(r.content_type);
    resp.set("X-Content-Type-Options", "nosniff");
    resp.setContentLength64(static_cast<Poco::Int64>(r.body.size()));
    if (req.getMethod() == "HEAD") {
      resp.send();
    } else {
      resp.sendBuffer(r.body.data(), r.body.size());
    }
  }

 private:
  const ManagerServerOptions& options_;
};

class Factory final : public Poco::Net::HTTPRequestHandlerFactory {
 public:
  explicit Factory(const ManagerServerOptions& options) : options_(options) {}
  Poco::Net::HTTPRequestHandler* createRequestHandler(
      const Poco::Net::HTTPServerRequest&) override {
    return new Handler(options_);
  }

 private:
  const ManagerServerOptions& options_;
};

}  // namespace

Result<std::optional<std::string>> ParseBindAddress(std::string_view flag) {
  if (flag.empty() || flag == "0") return std::optional<std::string>();
  const size_t colon = flag.rfind(':');
  if (colon == std::string_view::npos) {
    return Status::InvalidArgument("bind address \"" + std::string(flag) +
                                   "\": want [host]:port, or 0 to disable");
  }
  const std::string_view port = flag.substr(colon + 1);
  if (!AllDigits(port) || port.size() > 5 || std::stoi(std::string(port)) > 65535) {
    return Status::InvalidArgument("bind address \"" + std::string(flag) + "\": bad port");
  }
  std::string host(flag.substr(0, colon));
  if (host.empty()) host = "0.0.0.0";
  return std::optional<std::string>(host + ":" + std::string(port));
}

HttpReply HandleManagerRequest(const ManagerServerOptions& options, std::string_view method,
                               std::string_view path, std::string_view query) {
  HttpReply reply;
  if (method != "GET" && method != "HEAD") {
    reply.status = 405;
    reply.body = "method not allowed\n";
    return reply;
  }
  if (path == "/metrics" && options.metrics) {
    reply.content_type = "text/plain; version=0.0.4; charset=utf-8";
    reply.body = options.metrics();
    return reply;
  }
  if (options.probes) {
    for (const auto& [route, checks] : {std::pair{std::string_view("/healthz"), &options.healthz},
                                        std::pair{std::string_view("/readyz"), &options.readyz}}) {
      if (path == route) return Probe(*checks, "", query);
      if (path.size() > route.size() + 1 && path.substr(0, route.size()) == route &&
          path[route.size()] == '/') {
        return Probe(*checks, path.substr(route.size() + 1), query);
      }
    }
  }
  reply.status = 404;
  reply.body = "404 page not found\n";
  return reply;
}

struct ManagerServer::Impl {
  ManagerServerOptions options;
  std::unique_ptr<Poco::ThreadPool> pool;
  std::unique_ptr<Poco::Net::HTTPServer> http;
  uint16_t port = 0;
  std::mutex mu;
  bool stopped = false;
};

ManagerServer::ManagerServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ManagerServer::~ManagerServer() { Stop(); }

uint16_t ManagerServer::port() const { return impl_->port; }

void ManagerServer::Stop() {
  std::lock_guard lock(impl_->mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->http->stopAll(true);
  impl_->pool->joinAll();
}

Result<std::unique_ptr<ManagerServer>> ManagerServer::Start(const ManagerServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  Poco::Net::SocketAddress addr;
  try {
    addr = Poco::Net::SocketAddress(options.listen);
  } catch (const Poco::Exception& e) {
    return Status::InvalidArgument("bind address \"" + options.listen + "\": " + e.displayText());
  }
  try {
    Poco::Net::ServerSocket socket(addr, 64);
    impl->port = socket.address().port();
    auto* params = new Poco::Net::HTTPServerParams;
    params->setMaxThreads(options.max_threads);
    params->setMaxQueued(16);
    params->setKeepAlive(true);
    impl->pool = std::make_unique<Poco::ThreadPool>(1, std::max(1, options.max_threads));
    impl->http = std::make_unique<Poco::Net::HTTPServer>(new Factory(impl->options), *impl->pool,
                                                         socket, params);
    impl->http->start();
  } catch (const Poco::Exception& e) {
    return Status::IoError("listen on " + options.listen + ": " + e.displayText());
  }
  return std::unique_ptr<ManagerServer>(new ManagerServer(std::move(impl)));
}

}  // namespace cronledger::kube
