#pragma once

// When and how long to wait before retrying a failed request. Mirrors client-go's behaviour: a 429
// is always retried (the API server rejected the request before doing anything), 5xx and transport
// failures only for idempotent requests, and a Retry-After from the server is honoured. Without
// one, waits grow exponentially with jitter; the jitter is a hash of the request and the attempt
// (docs/dev/conventions.md "Time": never an ambient RNG), so a test can predict every wait.

#include <cstdint>
#include <optional>
#include <string_view>

#include "kube/api_error.h"
#include "model/time.h"

namespace cronledger::kube {

struct RetryOptions {
  // Retries after the first attempt. Default: 5. 0 disables retries.
  int max_retries = 5;
  // First back-off without Retry-After; doubles per attempt. Default: 500 ms.
  Duration initial_backoff = std::chrono::milliseconds(500);
  // Cap on any single wait, Retry-After included. Default: 30 s.
  Duration max_backoff = std::chrono::seconds(30);
  // The back-off is stretched by a factor in [1, 1 + jitter). Default: 0.5.
  double jitter = 0.5;
};

// A deterministic fraction in [0, 1) from `key` and `attempt` (FNV-1a, then a 64-bit mix).
double JitterFraction(std::string_view key, int attempt);

// The wait before retry number `attempt` (1-based) of a request identified by `key` (method and
// path) that failed with `error`, or nullopt when it must not be retried.
std::optional<Duration> RetryDelay(const RetryOptions& options, const ApiError& error,
                                   bool idempotent, std::string_view key, int attempt);

// Exponential back-off with deterministic jitter, shared with the reflector: initial * 2^(n-1),
// capped at max, stretched by [1, 1 + jitter).
Duration JitteredBackoff(Duration initial, Duration max, double jitter, std::string_view key,
                         int attempt);

}  // namespace cronledger::kube
