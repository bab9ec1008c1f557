#pragma once

// The real clocks (model/clock.h interfaces). Only app/ reads the system clock
// (docs/dev/conventions.md "Time"); everything below it gets a WallClock / MonotonicClock injected.

#include "model/clock.h"

namespace cronledger::app {

class SystemClock final : public WallClock, public MonotonicClock {
 public:
  Time Now() const override;          // std::chrono::system_clock
  int64_t NowNanos() const override;  // std::chrono::steady_clock
};

// A process-wide instance (stateless, thread-safe).
const SystemClock& RealClock();

}  // namespace cronledger::app
