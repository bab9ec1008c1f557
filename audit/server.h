#pragma once

// The embeddable HTTP server of the audit API (docs/audit.md "Serving"): audit::Api behind the
// process's HTTP server (kube/http_server.h: its timeouts and connection limits), with optional
// TLS. `cronledger serve` runs one over a store; `cronledger run` can start one beside the
// controller over the same Ledger. No Poco type appears here.

#include <cstdint>
#include <memory>
#include <string>

#include "audit/api.h"
#include "kube/http_server.h"
#include "model/result.h"
#include "model/timezone.h"
#include "store/ledger.h"

namespace cronledger::audit {

struct ServerOptions {
  // "HOST:PORT"; port 0 picks a free port (see Server::port()). Default: 127.0.0.1:8080.
  std::string listen = "127.0.0.1:8080";
  // PEM certificate chain and private key; both set = HTTPS, both empty = plain HTTP.
  std::string tls_cert;
  std::string tls_key;
  // Largest request body accepted (GET and HEAD carry none). Default: 0 bytes.
  size_t max_body_bytes = 0;
  // Timeouts and connection limits (kube/http_server.h for the defaults).
  kube::HttpServerLimits limits;
  ApiOptions api;
};

class Server {
 public:
  virtual ~Server() = default;
  // Binds, starts accepting, and returns. InvalidArgument for a bad listen address or TLS
  // configuration, IoError when the address cannot be bound. `ledger` and `tzdb` are not owned
  // and must outlive the server.
  static Result<std::unique_ptr<Server>> Start(store::Ledger& ledger, const model::TimeZoneDb& tzdb,
                                               const ServerOptions& options);
  // The same over an audit store's sources (audit/api.h).
  static Result<std::unique_ptr<Server>> Start(std::vector<SourceLedger> sources,
                                               const model::TimeZoneDb& tzdb,
                                               const ServerOptions& options);
  // The bound port.
  virtual uint16_t port() const = 0;
  // Stops accepting and waits for running requests (also done by the destructor).
  virtual void Stop() = 0;
};

}  // namespace cronledger::audit
