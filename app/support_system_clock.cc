#include <chrono>

#include "app/system_clock.h"

namespace cronledger::app {

Time SystemClock::Now() const {
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  return Time::FromUnix(ns / 1'000'000'000, static_cast<int32_t>(ns % 1'000'000'000));
}

int64_t SystemClock::NowNanos() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const SystemClock& RealClock() {
  static const SystemClock clock;
  return clock;
}

}  // namespace cronledger::app
