#pragma once

// The read-only HTTP API as a pure request -> response function over a ledger (docs/audit.md
// "API reference"). audit/server.h puts it behind an HTTP server; tests call it directly.
//
// Order of checks: URI length (414), method (only GET and HEAD; 405), health (/healthz, /readyz
// need no token) and the page assets, rate limit (429), bearer token (401), then the route
// (404 unknown, 400 malformed parameters). Error bodies are {"error": "..."} and never carry
// internal details: a store failure is logged and answered 500 "internal error".
//
// Thread safety: Handle may be called concurrently (the ledger is thread-safe).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "audit/auth.h"
#include "audit/metrics.h"
#include "audit/query.h"
#include "model/timezone.h"
#include "store/ledger.h"

namespace cronledger::audit {

struct ApiOptions {
  // File holding the bearer token. Required.
  std::string token_file;
  // Data directory, measured for the disk-size metric; empty leaves that metric out.
  std::string data_dir;
  // The tz database directory for schedules and `why`. Default: /usr/share/zoneinfo.
  std::string zoneinfo_dir = "/usr/share/zoneinfo";
  // Requests per second per client and the burst allowed. Default: 20 and 40.
  double rate_per_second = 20;
  double rate_burst = 40;
  // Longest request target accepted (path + query). Default: 4096 bytes.
  size_t max_uri_bytes = 4096;
  // Largest page a client may ask for (`limit`). Default: 1000; the default page is 100.
  size_t max_page = 1000;
  // Monotonic clock for the rate limiter. Default: std::chrono::steady_clock.
  std::function<int64_t()> monotonic_nanos;
  // Where internal errors are reported (never to the client). Default: stderr.
  std::function<void(const std::string&)> log;
};

struct ApiRequest {
  std::string method;
  std::string target;  // path and query, as on the request line
  std::string authorization;
  std::string peer;  // client address, the rate-limit key
};

struct ApiResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct ReadSet;

class Api {
 public:
  // `ledger` and `tzdb` are not owned and must outlive the Api.
  Api(store::Ledger& ledger, const model::TimeZoneDb& tzdb, ApiOptions options);
  // An audit store (`cronledger audit-store`): every route answers over all its sources, merged
  // as the commands merge them (docs/audit.md "Serving an audit store"). The ledgers are not
  // owned and must outlive the Api.
  Api(std::vector<SourceLedger> sources, const model::TimeZoneDb& tzdb, ApiOptions options);
  ~Api();
  ApiResponse Handle(const ApiRequest& request);

 private:
  Api(ReadSet read, const model::TimeZoneDb& tzdb, ApiOptions options);
  ApiResponse Route(const std::string& path, const std::string& query);
  bool Ready();

  std::unique_ptr<ReadSet> read_;
  const model::TimeZoneDb& tzdb_;
  const ApiOptions options_;
  TokenFile token_;
  RateLimiter limiter_;
  LedgerMetrics metrics_;
};

}  // namespace cronledger::audit
