// The metrics and health-probe listeners (kube/manager_server.h) on kube::HttpServer.
#include "kube/manager_server.h"

#include <Poco/Exception.h>
#include <Poco/URI.h>

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
  std::unique_ptr<HttpServer> http;
};

ManagerServer::ManagerServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ManagerServer::~ManagerServer() { Stop(); }

uint16_t ManagerServer::port() const { return impl_->http->port(); }

void ManagerServer::Stop() { impl_->http->Stop(); }

Result<std::unique_ptr<ManagerServer>> ManagerServer::Start(const ManagerServerOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  HttpServerOptions http;
  http.listen = options.listen;
  http.limits = options.limits;
  const ManagerServerOptions& served = impl->options;
  auto started = HttpServer::Start(http, [&served](const HttpRequestHead& head) {
    const size_t q = head.target.find('?');
    const std::string path = head.target.substr(0, q);
    const std::string query = q == std::string::npos ? "" : head.target.substr(q + 1);
    return HandleManagerRequest(served, head.method, path, query);
  });
  if (!started.ok()) return started.status();
  impl->http = std::move(started).value();
  return std::unique_ptr<ManagerServer>(new ManagerServer(std::move(impl)));
}

}  // namespace cronledger::kube
