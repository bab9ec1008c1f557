#pragma once

// The HTTP/1.1 server under every listener of the process: the audit API (`serve`, `run
// --listen`) and the manager's metrics and health-probe listeners (kube/manager_server.h).
// No Poco type appears here.
//
// A client cannot hold the server hostage (docs/run.md "Listener limits"):
//   * every open connection has a thread of its own (threads = max_connections), so a new
//     connection is never queued behind a busy or idle one;
//   * a connection must deliver a complete request head within read_timeout of opening or of its
//     previous response, and a request must be answered (handled and sent) within write_timeout;
//     past its deadline the connection is shut down — a silent or dribbling client, and one that
//     does not read its answer, is dropped;
//   * at most max_connections_per_client connections per client address and max_connections in
//     total: a connection over a limit takes the place of the oldest connection still waiting
//     for its request (of the same client for the per-client limit), or is closed at once when
//     every connection is busy answering. A client that sends its request right away (a kubelet
//     probe) is therefore answered however many idle connections others hold.
// Request bodies are never read: a request that declares one is answered and its connection
// closed, so the body is never parsed as the next request.
//
// Thread safety: the handler runs on the server's threads, concurrently.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "model/result.h"
#include "model/time.h"

namespace cronledger::kube {

struct HttpRequestHead {
  std::string method;
  std::string target;         // path and query, as on the request line
  std::string authorization;  // the Authorization header; "" when absent
  std::string peer;           // the client's address
  bool chunked = false;       // Transfer-Encoding: chunked
  std::optional<int64_t> content_length;
};

struct HttpReply {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
};

using HttpHandler = std::function<HttpReply(const HttpRequestHead&)>;

struct HttpServerLimits {
  // From a connection's opening, or its previous response, to the end of the next request head.
  // Default: 5 s.
  Duration read_timeout = std::chrono::seconds(5);
  // From the end of a request head to the last byte of its response. Default: 30 s.
  Duration write_timeout = std::chrono::seconds(30);
  // Open connections, and threads serving them. Default: 64.
  int max_connections = 64;
  // Open connections from one client address. Default: 16.
  int max_connections_per_client = 16;
};

struct HttpServerOptions {
  // "HOST:PORT"; port 0 picks a free port (see HttpServer::port()).
  std::string listen;
  // PEM certificate chain and private key; both set = HTTPS, both empty = plain HTTP.
  std::string tls_cert;
  std::string tls_key;
  HttpServerLimits limits;
};

class HttpServer {
 public:
  // Binds and starts serving `handler`. InvalidArgument for a bad address, limits or TLS
  // configuration, IoError when the address cannot be bound.
  static Result<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options,
                                                   HttpHandler handler);
  ~HttpServer();  // Stop()

  uint16_t port() const;
  // Stops accepting, shuts the open connections and waits for their threads.
  void Stop();

  // Connections open now (admitted and not yet finished); for tests and metrics.
  int open_connections() const;

  struct Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronledger::kube
