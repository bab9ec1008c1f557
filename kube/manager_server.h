#pragma once

// The two small HTTP listeners a controller-runtime manager runs beside its controllers
// (docs/run.md "Metrics and probes"):
//   * metrics (`--metrics-bind-address`): GET /metrics, the Prometheus text format (0.0.4);
//   * health probes (`--health-probe-bind-address`): GET /healthz and /readyz, each the AND of
//     named checks, answered like controller-runtime's healthz handler — 200 "ok", or 500 with
//     one "[+]name ok" / "[-]name failed: reason withheld" line per check and "healthz check
//     failed" (controller-runtime's wording, for /readyz too); `?verbose` lists the checks on
//     success too; /healthz/<name> runs one check; `?exclude=<name>` skips one. With no checks a
//     probe has controller-runtime's default "ping" check.
// Bind addresses are controller-runtime's: ":8080" (every interface), "127.0.0.1:8080",
// "[::1]:8080"; "0" disables the listener; port 0 picks a free one (see port()).
// The server is plain HTTP (put TLS in front, as kube-rbac-proxy does) on kube::HttpServer, with
// its limits: an idle, dribbling or non-reading client is dropped after a few seconds and cannot
// keep a probe from being answered (kube/http_server.h).
//
// Thread safety: handlers and checks run on the server's threads, concurrently.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kube/http_server.h"
#include "model/result.h"

namespace cronledger::kube {

// "" or "0" → nullopt (disabled); ":8080" → "0.0.0.0:8080"; "host:port" as given.
// InvalidArgument for anything else (a missing or out-of-range port).
Result<std::optional<std::string>> ParseBindAddress(std::string_view flag);

struct HealthCheck {
  std::string name;
  // OK when healthy; the message of a failure is logged by the caller, never served.
  std::function<Status()> check;
};

struct ManagerServerOptions {
  // A ParseBindAddress() result ("host:port").
  std::string listen;
  // GET /metrics → the exposition text. Unset: no /metrics route.
  std::function<std::string()> metrics;
  // /healthz and /readyz checks. Both routes exist when `probes` is set, even with no checks.
  bool probes = false;
  std::vector<HealthCheck> healthz;
  std::vector<HealthCheck> readyz;
  // Timeouts and connection limits (kube/http_server.h for the defaults).
  HttpServerLimits limits;
};

class ManagerServer {
 public:
  // Binds and starts serving. InvalidArgument for a bad address, IoError when it cannot be bound.
  static Result<std::unique_ptr<ManagerServer>> Start(const ManagerServerOptions& options);
  ~ManagerServer();  // Stop()

  uint16_t port() const;
  // Stops accepting and waits for running requests.
  void Stop();

  struct Impl;

 private:
  explicit ManagerServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The response to one request (method, path, raw query), without a socket: what the server
// answers, exposed for tests.
HttpReply HandleManagerRequest(const ManagerServerOptions& options, std::string_view method,
                               std::string_view path, std::string_view query);

}  // namespace cronledger::kube
