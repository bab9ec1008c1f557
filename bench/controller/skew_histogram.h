#pragma once

// A fixed-size latency histogram for creation skew: 1 ms buckets up to 60 s, then 1 s buckets up
// to 1 h, then one overflow bucket; the exact maximum is kept. Its memory is allocated up front so
// that it does not grow with the number of samples (the benchmark measures RSS per CronJob).
// Thread-safe.

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace cronledger::bench {

class SkewHistogram {
 public:
  SkewHistogram();
  void Add(int64_t skew_nanos);
  uint64_t count() const;
  // Nearest-rank percentile in seconds over `count() + censored` samples, where `censored`
  // samples are known to be larger than everything recorded (fire times not created by the end of
  // the run). nullopt when the rank falls among the censored ones.
  std::optional<double> Percentile(double p, uint64_t censored) const;
  double MaxSeconds() const;

 private:
  static constexpr int64_t kFineBuckets = 60'000;   // 1 ms each
  static constexpr int64_t kCoarseBuckets = 3'540;  // 1 s each, 60 s .. 3600 s
  static size_t Bucket(int64_t skew_nanos);
  static double BucketUpperSeconds(size_t bucket);

  mutable std::mutex mu_;
  std::vector<uint64_t> buckets_;
  uint64_t count_ = 0;
  int64_t max_nanos_ = 0;
};

}  // namespace cronledger::bench
