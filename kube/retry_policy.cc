#include "kube/retry_policy.h"

#include <algorithm>

namespace cronledger::kube {

double JitterFraction(std::string_view key, int attempt) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a offset basis
  auto mix_byte = [&h](unsigned char c) {
    h ^= c;
    h *= 1099511628211ull;
  };
  for (char c : key) mix_byte(static_cast<unsigned char>(c));
  for (int i = 0; i < 4; ++i) mix_byte(static_cast<unsigned char>(attempt >> (8 * i)));
  // splitmix64 finalizer: spreads FNV's weak low bits over the whole word.
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return static_cast<double>(h >> 11) / static_cast<double>(1ull << 53);
}

Duration JitteredBackoff(Duration initial, Duration max, double jitter, std::string_view key,
                         int attempt) {
  Duration d = initial;
  for (int i = 1; i < attempt && d < max; ++i) d *= 2;
  d = std::min(d, max);
  const double stretch = 1.0 + std::max(0.0, jitter) * JitterFraction(key, attempt);
  const auto stretched = Duration(static_cast<int64_t>(static_cast<double>(d.count()) * stretch));
  return std::min(stretched, max);
}

std::optional<Duration> RetryDelay(const RetryOptions& options, const ApiError& error,
                                   bool idempotent, std::string_view key, int attempt) {
  if (attempt > options.max_retries) return std::nullopt;
  const bool retryable =
      error.IsTooManyRequests() || (idempotent && (error.IsServerError() || error.IsTransport()));
  if (!retryable) return std::nullopt;
  // 501 Not Implemented and 505 are permanent.
  if (error.code == 501 || error.code == 505) return std::nullopt;
  if (error.retry_after.has_value()) {
    const Duration server_wait = std::chrono::seconds(std::max<int64_t>(0, *error.retry_after));
    return std::min(server_wait, options.max_backoff);
  }
  return JitteredBackoff(options.initial_backoff, options.max_backoff, options.jitter, key,
                         attempt);
}

}  // namespace cronledger::kube
