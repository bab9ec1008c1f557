#include "emit/metrics.h"

#include <cstdio>

namespace cronledger::emit {
namespace {

std::string FormatValue(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

void ControllerMetrics::ObserveCreationSkew(double seconds) {
  std::lock_guard lock(mu_);
  size_t i = 0;
  while (i < kCreationSkewBuckets.size() && seconds > kCreationSkewBuckets[i]) ++i;
  ++buckets_[i];
  sum_ += seconds;
  ++count_;
}

HistogramSnapshot ControllerMetrics::CreationSkew() const {
  std::lock_guard lock(mu_);
  HistogramSnapshot s;
  uint64_t running = 0;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    running += buckets_[i];
    s.cumulative[i] = running;
  }
  s.sum = sum_;
  s.count = count_;
  return s;
}

std::string ControllerMetrics::RenderPrometheus() const {
  const HistogramSnapshot s = CreationSkew();
  const std::string name = kCreationSkewName;
  std::string out = "# HELP " + name +
                    " [STABLE] Time between when a cronjob is scheduled to be run, and when the "
                    "corresponding job is created\n# TYPE " +
                    name + " histogram\n";
  for (size_t i = 0; i < kCreationSkewBuckets.size(); ++i) {
    out += name + "_bucket{le=\"" + FormatValue(kCreationSkewBuckets[i]) + "\"} " +
           std::to_string(s.cumulative[i]) + "\n";
  }
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(s.cumulative.back()) + "\n";
  out += name + "_sum " + FormatValue(s.sum) + "\n";
  out += name + "_count " + std::to_string(s.count) + "\n";
  return out;
}

}  // namespace cronledger::emit
