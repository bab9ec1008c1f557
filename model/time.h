#pragma once

#include <chrono>
#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "model/result.h"

namespace cronledger {

// Signed nanoseconds, like Go's time.Duration (the upstream controller's arithmetic is Go's).
using Duration = std::chrono::nanoseconds;

inline constexpr Duration kMaxDuration = Duration::max();
inline constexpr Duration kMinDuration = Duration::min();

// An instant: whole seconds since the Unix epoch plus nanoseconds in [0, 1e9). The range covers
// Go's zero time (year 1), which upstream tests use, and far beyond; arithmetic never wraps.
class Time {
 public:
  constexpr Time() = default;
  static constexpr Time FromUnix(int64_t seconds, int32_t nanos = 0) {
    return Time(seconds, nanos);
  }
  // Go's zero time.Time: 0001-01-01T00:00:00Z.
  static constexpr Time GoZero() { return Time(-62135596800, 0); }

  constexpr int64_t unix_seconds() const { return sec_; }
  constexpr int32_t nanos() const { return nsec_; }
  // Unix time in nanoseconds, saturating outside ±292 years of 1970.
  int64_t UnixNanosSaturated() const;

  // Go's Time.Add: exact.
  Time Add(Duration d) const;
  Time AddSeconds(int64_t s) const { return Time(sec_ + s, nsec_); }
  // Go's Time.Sub: saturates at kMinDuration/kMaxDuration instead of overflowing.
  Duration Sub(Time other) const;
  // Truncates to a whole second (toward the past).
  constexpr Time TruncateToSecond() const { return Time(sec_, 0); }

  friend constexpr auto operator<=>(const Time&, const Time&) = default;

 private:
  constexpr Time(int64_t s, int32_t ns) : sec_(s), nsec_(ns) {}
  int64_t sec_ = 0;
  int32_t nsec_ = 0;
};

// A proleptic-Gregorian calendar reading of an instant at some UTC offset.
struct Civil {
  int64_t year = 1970;
  int month = 1;  // 1..12
  int day = 1;    // 1..31
  int hour = 0;
  int minute = 0;
  int second = 0;
  int32_t nanos = 0;
  int weekday = 4;  // 0 = Sunday
  int yearday = 1;  // 1..366
};

// Days since 1970-01-01 for a proleptic Gregorian date (month 1..12, day 1..31).
int64_t DaysFromCivil(int64_t year, int month, int day);
bool IsLeapYear(int64_t year);
int DaysInMonth(int64_t year, int month);

// Calendar fields of unix_seconds + offset_seconds (the local wall-clock reading at that offset).
Civil CivilFromUnix(int64_t unix_seconds, int offset_seconds = 0);

// Go's time.Date arithmetic in a fixed frame: month is normalized into the year and
// day/hour/minute/ second may be out of range (they carry linearly), e.g. day 32 of January is
// February 1. Returns the number of seconds since 1970-01-01T00:00:00 of that wall-clock reading
// (no zone applied).
int64_t WallSecondsFromCivil(int64_t year, int month, int64_t day, int64_t hour, int64_t minute,
                             int64_t second);

// RFC 3339 as the Kubernetes API accepts it: "2016-05-19T10:00:00Z", fractional seconds
// ("...:00.123456Z") and numeric offsets ("+02:00") accepted, 't'/'z' accepted in lower case.
Result<Time> ParseRfc3339(std::string_view text);

// Second precision in UTC, as the API serves metav1.Time: "2016-05-19T10:00:00Z". Fractions are
// truncated.
std::string FormatRfc3339(Time t);
// Second precision at a UTC offset: "2016-05-19T12:00:00+02:00" ("Z" when the offset is 0).
std::string FormatRfc3339(Time t, int offset_seconds);
// Go's RFC3339Nano in UTC: fraction printed with trailing zeros removed, omitted when zero.
std::string FormatRfc3339Nano(Time t);
// The same appended to `*out`.
void AppendRfc3339Nano(Time t, std::string* out);
// Go's RFC1123Z at a UTC offset: "Thu, 19 May 2016 10:00:00 +0000".
std::string FormatRfc1123Z(Time t, int offset_seconds = 0);

// Go's Duration.String(): "1h2m3.5s", "100ms", "0s".
std::string FormatGoDuration(Duration d);
// Go's time.ParseDuration: "1h30m", "-1.5s", "300ms", "2h45m0.5s"; units ns us µs ms s m h.
Result<Duration> ParseGoDuration(std::string_view text);

}  // namespace cronledger
