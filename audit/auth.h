#pragma once

// Bearer-token authentication and per-client rate limiting for the HTTP API (docs/audit.md
// "Authentication"). Thread safety: all methods may be called concurrently.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>

namespace cronledger::audit {

// The token lives in a file (e.g. a mounted Kubernetes Secret). It is re-read whenever the file's
// modification time, size or inode changes, so a rotated Secret takes effect without a restart.
// Surrounding whitespace is ignored. An unreadable or empty file authenticates nobody.
class TokenFile {
 public:
  explicit TokenFile(std::string path) : path_(std::move(path)) {}
  // True when `authorization` is "Bearer <token>" with the current token.
  bool Verify(std::string_view authorization);
  // Whether a non-empty token could be read now (readiness).
  bool Loaded();

 private:
  void Refresh();  // requires mu_

  const std::string path_;
  std::mutex mu_;
  std::string token_;
  bool have_stamp_ = false;
  int64_t mtime_ns_ = 0;
  int64_t size_ = -1;
  uint64_t inode_ = 0;
};

// Compares in time that depends only on the lengths, never on where the strings differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// A token bucket per client (the peer address): `rate` requests per second, bursts of `burst`.
class RateLimiter {
 public:
  // `monotonic_nanos` is the clock (injected; tests drive it by hand).
  RateLimiter(double rate, double burst, std::function<int64_t()> monotonic_nanos);
  // False when the client must wait; then *retry_after_seconds says how long (rounded up).
  bool Allow(const std::string& client, int* retry_after_seconds);

 private:
  struct Bucket {
    double tokens;
    int64_t at;
  };
  const double rate_;
  const double burst_;
  const std::function<int64_t()> now_;
  std::mutex mu_;
  std::map<std::string, Bucket> buckets_;
};

}  // namespace cronledger::audit
