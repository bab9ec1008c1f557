#pragma once

// The simulated cluster's Job lifecycle model (docs/simulate.md, "Lifecycle model"). Every Job's
// fate — when it starts, how long it runs, whether it fails — is a pure function of the
// simulation seed and the Job's uid (docs/dev/conventions.md "Time": seeded, hash-derived, never an
// ambient RNG), so a simulation replays identically and a Job's plan can be recomputed after a
// restart.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/result.h"
#include "model/time.h"

namespace cronledger::controller {

struct JobLifecycleOptions {
  // Delay from creation to the Job's start (status.startTime, active=1): uniform in [min, max],
  // millisecond granularity. Default: 1 s .. 3 s (pod scheduling + image pull of a warm node).
  Duration start_delay_min = std::chrono::seconds(1);
  Duration start_delay_max = std::chrono::seconds(3);
  // Run time from start to finish: log-normal, median * exp(sigma * Z) with Z standard normal,
  // clamped to [run_min, run_max], millisecond granularity. Defaults: median 20 s, sigma 0.5
  // (p5 ≈ 8.8 s, p95 ≈ 45 s), min 1 s, max 1 h.
  Duration run_median = std::chrono::seconds(20);
  double run_sigma = 0.5;
  Duration run_min = std::chrono::seconds(1);
  Duration run_max = std::chrono::hours(1);
  // Probability that a Job ends Failed (BackoffLimitExceeded) instead of Complete. Default: 0.02.
  double failure_rate = 0.02;
};

// InvalidArgument naming the field when an option is out of range (negative delays, min > max,
// sigma < 0, failure rate outside [0, 1]).
Status ValidateLifecycleOptions(const JobLifecycleOptions& options);

// What happens to one Job, relative to its creation.
struct JobPlan {
  Duration start_delay{0};  // creation -> startTime
  Duration run_time{0};     // startTime -> finish
  bool failed = false;
  std::string failure_reason;   // "BackoffLimitExceeded" | "DeadlineExceeded" when failed
  std::string failure_message;  // the condition message the Job controller writes
};

// The plan of the Job with `uid` under `seed`. `active_deadline_seconds` is the Job's
// spec.activeDeadlineSeconds: a Job that would run longer fails with DeadlineExceeded after that
// long (the Job controller's behaviour), and its run_time is cut to the deadline.
JobPlan PlanJob(const JobLifecycleOptions& options, uint64_t seed, std::string_view uid,
                std::optional<int64_t> active_deadline_seconds);

// A 64-bit hash of (seed, parts...) — FNV-1a over the parts with separators, then the splitmix64
// finalizer. Stable across platforms and releases: simulations and uids depend on it.
uint64_t SimHash(uint64_t seed, std::string_view a, std::string_view b = {},
                 std::string_view c = {}, uint64_t n = 0);
// A uniform double in [0, 1) from a hash.
double UnitInterval(uint64_t h);
// A uid in the shape the API server assigns (RFC 4122 version 4 layout) from two hashes.
std::string FormatUid(uint64_t hi, uint64_t lo);

}  // namespace cronledger::controller
