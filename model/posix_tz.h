#pragma once

// The POSIX TZ string of a TZif footer ("CET-1CEST,M3.5.0,M10.5.0/3"), evaluated exactly as Go's
// time.tzset does, because Go extends a zone past its last transition with it and robfig/cron's
// DST behaviour after that point is Go's.

#include <cstdint>
#include <optional>
#include <string_view>

#include "model/timezone.h"

namespace cronledger::model {

class PosixTz {
 public:
  // std::nullopt when Go's tzset would report !ok for this string (then Go keeps the zone of the
  // last transition).
  static std::optional<PosixTz> Parse(std::string_view text);

  // Go's tzset(s, last_tx, sec): the period containing `sec`. Without DST the period is
  // [last_tx, +inf). With DST it is computed for the UTC calendar year of `sec`, with Go's
  // approximations (the year ends at start + 365 days).
  TimeZone::Period At(int64_t last_tx, int64_t sec) const;

  struct Rule {
    enum class Kind { kJulian, kDayOfYear, kMonthWeekDay };
    Kind kind = Kind::kJulian;
    int day = 0;
    int week = 0;
    int month = 0;
    int time = 2 * 3600;  // seconds after local midnight; default 02:00
  };

 private:
  int std_offset_ = 0;  // seconds east of UTC
  int dst_offset_ = 0;
  bool has_dst_ = false;
  Rule start_;
  Rule end_;
};

}  // namespace cronledger::model
