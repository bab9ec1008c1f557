#pragma once

// Time sources, injected (docs/dev/conventions.md "Time"). Wall time (what `now` a reconcile pass
// records) and monotonic time (timeouts, back-off, rate limits) are separate interfaces. Production
// clocks live in app/; tests and virtual-time simulation use ManualClock, which never sleeps.

#include <atomic>
#include <cstdint>

#include "model/time.h"

namespace cronledger {

class WallClock {
 public:
  virtual ~WallClock() = default;
  virtual Time Now() const = 0;
};

// Monotonic nanoseconds since an arbitrary origin.
class MonotonicClock {
 public:
  virtual ~MonotonicClock() = default;
  virtual int64_t NowNanos() const = 0;
};

// A clock that moves only when told to. Both readings advance together, so virtual-time runs see a
// consistent world. Thread-safe.
class ManualClock : public WallClock, public MonotonicClock {
 public:
  explicit ManualClock(Time start) : wall_nanos_(ToNanos(start)) {}

  Time Now() const override { return FromNanos(wall_nanos_.load(std::memory_order_acquire)); }
  int64_t NowNanos() const override { return mono_nanos_.load(std::memory_order_acquire); }

  void Advance(Duration d) {
    wall_nanos_.fetch_add(d.count(), std::memory_order_acq_rel);
    mono_nanos_.fetch_add(d.count(), std::memory_order_acq_rel);
  }
  // Moves forward to `t` (never backwards).
  void AdvanceTo(Time t) {
    const Duration d = t.Sub(Now());
    if (d.count() > 0) Advance(d);
  }

 private:
  static int64_t ToNanos(Time t) { return t.UnixNanosSaturated(); }
  static Time FromNanos(int64_t ns) {
    int64_t s = ns / 1'000'000'000;
    int64_t n = ns % 1'000'000'000;
    if (n < 0) {
      --s;
      n += 1'000'000'000;
    }
    return Time::FromUnix(s, static_cast<int32_t>(n));
  }

  std::atomic<int64_t> wall_nanos_;
  std::atomic<int64_t> mono_nanos_{0};
};

}  // namespace cronledger
