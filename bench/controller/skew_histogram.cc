#include "bench/controller/skew_histogram.h"

#include <algorithm>
#include <cmath>

namespace cronledger::bench {

SkewHistogram::SkewHistogram() : buckets_(kFineBuckets + kCoarseBuckets + 1, 0) {}

size_t SkewHistogram::Bucket(int64_t skew_nanos) {
  const int64_t ms = std::max<int64_t>(0, skew_nanos / 1'000'000);
  if (ms < kFineBuckets) return static_cast<size_t>(ms);
  const int64_t s = ms / 1000 - kFineBuckets / 1000;
  return static_cast<size_t>(kFineBuckets + std::min(s, kCoarseBuckets));
}

double SkewHistogram::BucketUpperSeconds(size_t bucket) {
  const auto b = static_cast<int64_t>(bucket);
  if (b < kFineBuckets) return static_cast<double>(b + 1) / 1000.0;
  return static_cast<double>(b - kFineBuckets + 1 + kFineBuckets / 1000);
}

void SkewHistogram::Add(int64_t skew_nanos) {
  std::lock_guard lock(mu_);
  ++buckets_[Bucket(skew_nanos)];
  ++count_;
  max_nanos_ = std::max(max_nanos_, skew_nanos);
}

uint64_t SkewHistogram::count() const {
  std::lock_guard lock(mu_);
  return count_;
}

std::optional<double> SkewHistogram::Percentile(double p, uint64_t censored) const {
  std::lock_guard lock(mu_);
  const uint64_t total = count_ + censored;
  if (total == 0) return std::nullopt;
  const auto rank = std::max<uint64_t>(
      1, static_cast<uint64_t>(std::ceil(p / 100.0 * static_cast<double>(total))));
  if (rank > count_) return std::nullopt;
  uint64_t seen = 0;
  for (size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen >= rank) {
      // The bucket's upper edge, but never more than the true maximum.
      return std::min(BucketUpperSeconds(b), static_cast<double>(max_nanos_) / 1e9);
    }
  }
  return static_cast<double>(max_nanos_) / 1e9;
}

double SkewHistogram::MaxSeconds() const {
  std::lock_guard lock(mu_);
  return static_cast<double>(max_nanos_) / 1e9;
}

}  // namespace cronledger::bench
