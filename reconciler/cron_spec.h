#pragma once

// The two schedule kinds robfig/cron v3.0.1 ParseStandard produces: SpecSchedule (five fields or a
// descriptor such as @daily) and ConstantDelaySchedule (@every). Internal to the reconciler; the
// public surface is reconciler/schedule.h.

#include <array>
#include <cstdint>
#include <memory>
#include <optional>

#include "model/time.h"
#include "model/timezone.h"
#include "reconciler/schedule.h"

namespace cronledger::reconciler {

// robfig's SpecSchedule bit sets: bit n set = value n allowed; bit 63 ("star bit") marks a field
// written as `*`, `?` or `*/1`, which switches day matching from OR to AND (docs/semantics.md §9).
struct CronFields {
  static constexpr uint64_t kStarBit = uint64_t{1} << 63;
  uint64_t second = 1;  // ParseStandard has no seconds field: always second 0
  uint64_t minute = 0;
  uint64_t hour = 0;
  uint64_t dom = 0;
  uint64_t month = 0;
  uint64_t dow = 0;
};

class SpecSchedule final : public Schedule {
 public:
  SpecSchedule(const CronFields& fields, std::shared_ptr<const model::TimeZone> zone);

  std::optional<Time> Next(Time t) const override;
  const model::TimeZone& zone() const override { return *zone_; }

  const CronFields& fields() const { return raw_; }
  // robfig's dayMatches plus the other fields, on a wall-clock reading.
  bool Matches(const Civil& c) const;

  // What robfig v3.0.1 itself returns, bugs included (exposed for tests and the deviation report):
  // std::nullopt for the zero time. `runaway` is set when the emulation exceeded its step bound
  // (robfig would loop for a very long time; the result is then std::nullopt).
  std::optional<int64_t> RobfigNext(int64_t unix_seconds, bool* runaway) const;
  // The first instant after `unix_seconds` whose wall-clock reading in the zone matches, searched
  // up to the end of robfig's five-year window (year of the start + 5).
  std::optional<int64_t> CorrectNext(int64_t unix_seconds) const;

 private:
  // Days of (year, month) that satisfy robfig's dayMatches, as bits 1..31.
  uint64_t DayMask(int64_t year, int month) const;
  // The smallest wall-clock second >= wall that matches, with year <= max_year.
  std::optional<int64_t> NextMatchingWall(int64_t wall, int64_t max_year) const;
  std::optional<int64_t> NextMatchingCivil(const Civil& c, int64_t max_year) const;
  std::optional<std::optional<int64_t>> FastNext(int64_t start) const;
  std::optional<int64_t> EmulateRobfig(int64_t start, bool* runaway) const;

  CronFields raw_;
  uint64_t minute_ = 0;
  uint64_t hour_ = 0;
  uint64_t month_ = 0;
  uint64_t dom_ = 0;
  bool day_and_ = false;
  // dow_by_first_[f]: days 1..31 whose weekday is allowed when day 1 of the month is weekday f.
  std::array<uint64_t, 7> dow_by_first_{};
  std::shared_ptr<const model::TimeZone> zone_;
};

// robfig's ConstantDelaySchedule (@every): next(t) = t truncated to the second + delay, in any
// zone.
class ConstantDelaySchedule final : public Schedule {
 public:
  // `delay` is Go's Every(): at least one second, whole seconds.
  ConstantDelaySchedule(Duration delay, std::shared_ptr<const model::TimeZone> zone);
  std::optional<Time> Next(Time t) const override;
  const model::TimeZone& zone() const override { return *zone_; }
  int64_t delay_seconds() const { return delay_seconds_; }

 private:
  int64_t delay_seconds_;
  std::shared_ptr<const model::TimeZone> zone_;
};

}  // namespace cronledger::reconciler
