#include "controller/sim_lifecycle.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>

namespace cronledger::controller {
namespace {

using std::chrono::milliseconds;

constexpr uint64_t kFnvOffset = 1469598103934665603ull;
constexpr uint64_t kFnvPrime = 1099511628211ull;

uint64_t FnvBytes(uint64_t h, std::string_view s) {
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= kFnvPrime;
  }
  // A separator byte that cannot be confused with a shifted boundary ("ab","c" vs "a","bc").
  h ^= 0xff;
  h *= kFnvPrime;
  return h;
}

uint64_t Mix64(uint64_t h) {
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h;
}

// Rounds to whole milliseconds so that plans do not depend on the last bits of libm results.
Duration RoundToMillis(double nanos) {
  return std::chrono::duration_cast<Duration>(milliseconds(std::llround(nanos / 1e6)));
}

}  // namespace

uint64_t SimHash(uint64_t seed, std::string_view a, std::string_view b, std::string_view c,
                 uint64_t n) {
  uint64_t h = kFnvOffset;
  for (int i = 0; i < 8; ++i) {
    h ^= (seed >> (8 * i)) & 0xff;
    h *= kFnvPrime;
  }
  h = FnvBytes(FnvBytes(FnvBytes(h, a), b), c);
  for (int i = 0; i < 8; ++i) {
    h ^= (n >> (8 * i)) & 0xff;
    h *= kFnvPrime;
  }
  return Mix64(h);
}

double UnitInterval(uint64_t h) {
  return static_cast<double>(h >> 11) / static_cast<double>(1ull << 53);
}

std::string FormatUid(uint64_t hi, uint64_t lo) {
  // Version 4 and variant bits set as in a random UUID, so the shape is what clients expect.
  hi = (hi & ~0xf000ull) | 0x4000ull;
  lo = (lo & ~(0xc000ull << 48)) | (0x8000ull << 48);
  char buf[37];
  std::snprintf(buf, sizeof buf, "%08x-%04x-%04x-%04x-%012llx", static_cast<unsigned>(hi >> 32),
                static_cast<unsigned>((hi >> 16) & 0xffff), static_cast<unsigned>(hi & 0xffff),
                static_cast<unsigned>(lo >> 48),
                static_cast<unsigned long long>(lo & 0xffffffffffffull));
  return buf;
}

Status ValidateLifecycleOptions(const JobLifecycleOptions& o) {
  if (o.start_delay_min.count() < 0 || o.start_delay_max < o.start_delay_min) {
    return Status::InvalidArgument("start delay: need 0 <= min <= max");
  }
  if (o.run_median.count() <= 0) return Status::InvalidArgument("run median must be positive");
  if (!(o.run_sigma >= 0) || o.run_sigma > 10) {
    return Status::InvalidArgument("run sigma must be in [0, 10]");
  }
  if (o.run_min.count() < 0 || o.run_max < o.run_min) {
    return Status::InvalidArgument("run time bounds: need 0 <= min <= max");
  }
  if (!(o.failure_rate >= 0 && o.failure_rate <= 1)) {
    return Status::InvalidArgument("failure rate must be in [0, 1]");
  }
  return Status::Ok();
}

JobPlan PlanJob(const JobLifecycleOptions& o, uint64_t seed, std::string_view uid,
                std::optional<int64_t> active_deadline_seconds) {
  JobPlan plan;
  const double u_start = UnitInterval(SimHash(seed, "start", uid));
  const double span = static_cast<double>((o.start_delay_max - o.start_delay_min).count());
  plan.start_delay = o.start_delay_min + RoundToMillis(u_start * span);

  // Box-Muller with u1 in (0, 1] so that log(u1) is finite.
  const double u1 = 1.0 - UnitInterval(SimHash(seed, "run1", uid));
  const double u2 = UnitInterval(SimHash(seed, "run2", uid));
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  const double run = static_cast<double>(o.run_median.count()) * std::exp(o.run_sigma * z);
  plan.run_time = std::clamp(RoundToMillis(run), o.run_min, o.run_max);

  if (UnitInterval(SimHash(seed, "fail", uid)) < o.failure_rate) {
    plan.failed = true;
    plan.failure_reason = "BackoffLimitExceeded";
    plan.failure_message = "Job has reached the specified backoff limit";
  }
  if (active_deadline_seconds && *active_deadline_seconds >= 0 &&
      plan.run_time > std::chrono::seconds(*active_deadline_seconds)) {
    plan.run_time = std::chrono::seconds(*active_deadline_seconds);
    plan.failed = true;
    plan.failure_reason = "DeadlineExceeded";
    plan.failure_message = "Job was active longer than specified deadline";
  }
  return plan;
}

}  // namespace cronledger::controller
