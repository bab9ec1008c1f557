#pragma once

// The controller process's own Prometheus metrics (docs/run.md "Metrics"). Upstream's v2 CronJob
// controller registers exactly one metric (docs/semantics.md §11): the histogram
// `cronjob_controller_job_creation_skew_duration_seconds`, observed once per successful Job create
// (never on the AlreadyExists path) with (creationTimestamp of the response − scheduled time).
// KubeActuator observes it; RenderPrometheus() prints the text exposition format (0.0.4) that a
// `/metrics` handler serves. The audit server (audit/metrics.h) derives the same histogram from
// the decision log for a store without a controller; this one is what the live process saw.
//
// Thread safety: all methods may be called concurrently.

#include <array>
#include <cstdint>
#include <mutex>
#include <string>

namespace cronledger::emit {

// metrics.ExponentialBuckets(1, 2, 10): 1, 2, 4, ..., 512 seconds.
inline constexpr std::array<double, 10> kCreationSkewBuckets = {1,  2,  4,   8,   16,
                                                                32, 64, 128, 256, 512};
inline constexpr const char* kCreationSkewName =
    "cronjob_controller_job_creation_skew_duration_seconds";

struct HistogramSnapshot {
  std::array<uint64_t, kCreationSkewBuckets.size() + 1> cumulative{};  // le buckets, then +Inf
  double sum = 0;
  uint64_t count = 0;
};

class ControllerMetrics {
 public:
  void ObserveCreationSkew(double seconds);
  HistogramSnapshot CreationSkew() const;
  // The exposition text: HELP, TYPE, the buckets, _sum and _count.
  std::string RenderPrometheus() const;

 private:
  mutable std::mutex mu_;
  std::array<uint64_t, kCreationSkewBuckets.size() + 1> buckets_{};  // non-cumulative
  double sum_ = 0;
  uint64_t count_ = 0;
};

}  // namespace cronledger::emit
