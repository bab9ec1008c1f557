// SpecSchedule.Next, robfig/cron v3.0.1 (spec.go), with Go's time arithmetic.
//
// robfig walks month -> day -> hour -> minute -> second, resetting lower fields the first time a
// field has to move and re-checking from the month after any wrap-around ("goto WRAP"). Its moves
// are Go calls with different DST behaviour: month and day steps are wall-clock (time.Date /
// AddDate, which resolve gaps and folds Go's way, see TimeZone::UnixFromWall); hour, minute and
// second steps are absolute (Time.Add); after a day step a wall hour other than 0 (midnight fell
// into a gap) is pushed to the nearer midnight with Add. Its five-year limit is checked only on a
// wrap: the result's year is at most the start year + 5.
//
// Speed (this is the controller's hottest loop): when every instant robfig could visit lies in one
// offset period of the zone, robfig's walk is exactly "the first matching wall-clock second", which
// NextMatchingWall finds with bit scans (FastNext). Otherwise robfig is emulated step by step, with
// runs of steps that stay inside one offset period collapsed into a single jump (EmulateRobfig).
//
// Deviation (docs/schedule.md, "Deviations from robfig"): where robfig's answer is not after the
// input, or does not match the schedule (e.g. Australia/Lord_Howe's 30-minute DST shift, or
// Pacific/Chatham's 02:45 transitions), Next returns CorrectNext instead: the first matching
// instant after the input.
#include "reconciler/cron_spec.h"

#include <algorithm>
#include <bit>

namespace cronledger::reconciler {
namespace {

constexpr int64_t kDay = 86400;
// Bound on emulated robfig steps; robfig itself needs at most a few thousand within five years.
// Beyond this robfig would be looping pathologically, and the correct answer is returned instead.
constexpr int kMaxSteps = 200000;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

int Weekday(int64_t days_since_epoch) {
  return static_cast<int>(days_since_epoch - FloorDiv(days_since_epoch + 4, 7) * 7 + 4);
}

std::optional<int64_t> GiveUp(bool* runaway) {
  *runaway = true;
  return std::nullopt;
}

bool Has(uint64_t bits, int64_t v) { return ((bits >> v) & 1) != 0; }

// A Go time.Time in the schedule's zone: the instant, the Period Go's lookup gives for it, and the
// wall-clock fields at that offset (what t.Year(), t.Hour() ... return).
class Cursor {
 public:
  explicit Cursor(const model::TimeZone& zone) : zone_(zone) {}

  void Set(int64_t unix) {
    unix_ = unix;
    period_ = zone_.Lookup(unix);
    c_ = CivilFromUnix(unix, period_.offset);
  }
  // time.Date(y, mo, d, h, mi, s, 0, loc), fields out of range carrying over as in Go.
  void SetWall(int64_t y, int mo, int64_t d, int64_t h, int64_t mi, int64_t s) {
    Set(zone_.UnixFromWall(WallSecondsFromCivil(y, mo, d, h, mi, s)));
  }
  // True when Date() maps every wall reading in [first, last] to reading - offset of the current
  // period: both the reading taken as UTC (Go's first lookup) and the implied instant lie inside
  // the period, so Go finds this period and keeps its offset.
  bool WallsStayInPeriod(int64_t first, int64_t last) const {
    const int64_t o = period_.offset;
    return InPeriod(unix_) && period_.start <= std::min(first, first - o) &&
           std::max(last, last - o) < period_.end;
  }
  bool InPeriod(int64_t u) const { return u >= period_.start && u < period_.end; }
  int64_t Wall(int64_t y, int mo, int64_t d, int64_t h, int64_t mi, int64_t s) const {
    return WallSecondsFromCivil(y, mo, d, h, mi, s);
  }
  // Jumps to a wall reading known to lie in the current period.
  void SetWallInPeriod(int64_t wall) { Set(wall - period_.offset); }

  int64_t unix() const { return unix_; }
  const Civil& c() const { return c_; }
  const model::TimeZone::Period& period() const { return period_; }

 private:
  const model::TimeZone& zone_;
  int64_t unix_ = 0;
  model::TimeZone::Period period_;
  Civil c_;
};

}  // namespace

SpecSchedule::SpecSchedule(const CronFields& fields, std::shared_ptr<const model::TimeZone> zone)
    : raw_(fields), zone_(std::move(zone)) {
  constexpr uint64_t kNoStar = ~CronFields::kStarBit;
  minute_ = fields.minute & kNoStar;
  hour_ = fields.hour & kNoStar;
  month_ = fields.month & kNoStar;
  dom_ = fields.dom & kNoStar & 0xFFFFFFFEull;
  day_and_ = ((fields.dom | fields.dow) & CronFields::kStarBit) != 0;
  for (int first = 0; first < 7; ++first) {
    uint64_t days = 0;
    for (int d = 1; d <= 31; ++d) {
      if (Has(fields.dow, (first + d - 1) % 7)) days |= uint64_t{1} << d;
    }
    dow_by_first_[static_cast<size_t>(first)] = days;
  }
}

bool SpecSchedule::Matches(const Civil& c) const {
  const bool dom_match = Has(raw_.dom, c.day);
  const bool dow_match = Has(raw_.dow, c.weekday);
  const bool day = day_and_ ? (dom_match && dow_match) : (dom_match || dow_match);
  return day && Has(raw_.month, c.month) && Has(raw_.hour, c.hour) && Has(raw_.minute, c.minute) &&
         Has(raw_.second, c.second);
}

uint64_t SpecSchedule::DayMask(int64_t year, int month) const {
  const int64_t first_day = DaysFromCivil(year, month, 1);
  const uint64_t dow = dow_by_first_[static_cast<size_t>(Weekday(first_day))];
  const uint64_t days = day_and_ ? (dom_ & dow) : (dom_ | dow);
  const uint64_t valid = (uint64_t{1} << (DaysInMonth(year, month) + 1)) - 2;
  return days & valid;
}

std::optional<int64_t> SpecSchedule::NextMatchingWall(int64_t wall, int64_t max_year) const {
  return NextMatchingCivil(CivilFromUnix(wall), max_year);
}

std::optional<int64_t> SpecSchedule::NextMatchingCivil(const Civil& c, int64_t max_year) const {
  int64_t y = c.year;
  int mo = c.month;
  int d = c.day;
  int h = c.hour;
  int mi = c.minute;
  int s = c.second;
  // Each step either accepts the current field or moves it forward and zeroes the lower ones;
  // overflow of a field carries into the next higher one on the following pass.
  for (;;) {
    if (y > max_year) return std::nullopt;
    const uint64_t months = month_ & (~uint64_t{0} << mo);
    if (months == 0) {
      ++y, mo = 1, d = 1, h = mi = s = 0;
      continue;
    }
    if (const int m2 = std::countr_zero(months); m2 != mo) mo = m2, d = 1, h = mi = s = 0;
    const uint64_t days = DayMask(y, mo) & (~uint64_t{0} << d);
    if (days == 0) {
      ++mo, d = 1, h = mi = s = 0;
      if (mo > 12) ++y, mo = 1;
      continue;
    }
    if (const int d2 = std::countr_zero(days); d2 != d) d = d2, h = mi = s = 0;
    const uint64_t hours = hour_ & (~uint64_t{0} << h);
    if (hours == 0) {
      ++d, h = mi = s = 0;  // d may exceed the month: DayMask's validity mask carries it over
      if (d > DaysInMonth(y, mo)) {
        ++mo, d = 1;
        if (mo > 12) ++y, mo = 1;
      }
      continue;
    }
    if (const int h2 = std::countr_zero(hours); h2 != h) h = h2, mi = s = 0;
    const uint64_t minutes = minute_ & (~uint64_t{0} << mi);
    if (minutes == 0) {
      ++h, mi = s = 0;
      if (h > 23) {
        h = 0, ++d;
        if (d > DaysInMonth(y, mo)) {
          ++mo, d = 1;
          if (mo > 12) ++y, mo = 1;
        }
      }
      continue;
    }
    if (const int m2 = std::countr_zero(minutes); m2 != mi) mi = m2, s = 0;
    if (s != 0) {  // only second 0 matches
      ++mi, s = 0;
      if (mi > 59) {
        mi = 0, ++h;
        if (h > 23) {
          h = 0, ++d;
          if (d > DaysInMonth(y, mo)) {
            ++mo, d = 1;
            if (mo > 12) ++y, mo = 1;
          }
        }
      }
      continue;
    }
    return WallSecondsFromCivil(y, mo, d, h, mi, 0);
  }
}

std::optional<std::optional<int64_t>> SpecSchedule::FastNext(int64_t start) const {
  const model::TimeZone::Period p = zone_->Lookup(start);
  if (start < p.start || start >= p.end) return std::nullopt;
  // Offsets with seconds (local mean time before ~1900): robfig's Truncate(time.Minute) is
  // absolute, so its minute steps are not wall-clock minute boundaries; emulate instead.
  if (p.offset % 60 != 0) return std::nullopt;
  const int64_t o = p.offset;
  const int64_t wall0 = start + o;
  const Civil c = CivilFromUnix(wall0);
  const int64_t max_year = c.year + 5;
  const std::optional<int64_t> wall = NextMatchingCivil(c, max_year);
  // A zone with one offset for all time (UTC, the default Local) needs no period checks.
  if (p.start == INT64_MIN && p.end == INT64_MAX) {
    if (!wall) return std::optional<int64_t>();
    return std::optional<int64_t>(*wall - o);
  }
  // The earliest wall reading robfig can visit: where its first reset lands.
  int64_t reset = wall0;
  if (!Has(raw_.month, c.month)) {
    reset = WallSecondsFromCivil(c.year, c.month, 1, 0, 0, 0);
  } else if (!Has(DayMask(c.year, c.month), c.day)) {
    reset = WallSecondsFromCivil(c.year, c.month, c.day, 0, 0, 0);
  } else if (!Has(raw_.hour, c.hour)) {
    reset = WallSecondsFromCivil(c.year, c.month, c.day, c.hour, 0, 0);
  } else if (!Has(raw_.minute, c.minute)) {
    reset = FloorDiv(start, 60) * 60 + o;  // Time.Truncate(time.Minute) is absolute
  }
  const int64_t last = wall ? *wall : WallSecondsFromCivil(max_year + 1, 1, 1, 0, 0, 0);
  if (p.start > std::min(reset, reset - o) || std::max(last, last - o) >= p.end) {
    return std::nullopt;
  }
  if (!wall) return std::optional<int64_t>();
  return std::optional<int64_t>(*wall - o);
}

std::optional<int64_t> SpecSchedule::EmulateRobfig(int64_t start, bool* runaway) const {
  *runaway = false;
  Cursor t(*zone_);
  t.Set(start);
  bool added = false;
  const int64_t year_limit = t.c().year + 5;
  int steps = 0;
wrap:
  if (t.c().year > year_limit) return std::nullopt;
  if (++steps > kMaxSteps) return GiveUp(runaway);

  while (!Has(raw_.month, t.c().month)) {
    if (!added) {
      added = true;
      t.SetWall(t.c().year, t.c().month, 1, 0, 0, 0);
    }
    const Civil c = t.c();
    // AddDate(0, 1, 0) repeatedly until a wanted month or January; collapsed when no step can
    // meet a transition and no day-of-month overflow (day > 28) makes Go normalize the date.
    const uint64_t later = month_ & (~uint64_t{0} << (c.month + 1));
    const int target = later ? std::countr_zero(later) : 13;
    if (target > c.month + 1 && c.day <= 28) {
      const int64_t first = t.Wall(c.year, c.month + 1, c.day, c.hour, c.minute, c.second);
      const int64_t last = t.Wall(c.year, target, c.day, c.hour, c.minute, c.second);
      if (t.WallsStayInPeriod(first, last)) {
        t.SetWallInPeriod(last);
        if (t.c().month == 1) goto wrap;
        continue;
      }
    }
    t.SetWall(c.year, c.month + 1, c.day, c.hour, c.minute, c.second);
    if (++steps > kMaxSteps) return GiveUp(runaway);
    if (t.c().month == 1) goto wrap;
  }

  while (!Has(DayMask(t.c().year, t.c().month), t.c().day)) {
    if (!added) {
      added = true;
      t.SetWall(t.c().year, t.c().month, t.c().day, 0, 0, 0);
    }
    const Civil c = t.c();
    // AddDate(0, 0, 1) repeatedly; collapsed when the wall hour is already 0 (so robfig's
    // midnight correction cannot fire) and no step meets a transition.
    if (c.hour == 0) {
      const uint64_t later = DayMask(c.year, c.month) & (~uint64_t{0} << (c.day + 1));
      const int target = later ? std::countr_zero(later) : DaysInMonth(c.year, c.month) + 1;
      if (target > c.day + 1) {
        const int64_t first = t.Wall(c.year, c.month, c.day + 1, 0, c.minute, c.second);
        const int64_t last = t.Wall(c.year, c.month, target, 0, c.minute, c.second);
        if (t.WallsStayInPeriod(first, last)) {
          t.SetWallInPeriod(last);
          if (t.c().day == 1) goto wrap;
          continue;
        }
      }
    }
    t.SetWall(c.year, c.month, c.day + 1, c.hour, c.minute, c.second);
    // robfig: "Notice if the hour is no longer midnight due to DST. Add an hour if it's 23,
    // subtract an hour if it's 1" -- in fact it moves by whole hours toward the nearer midnight.
    if (const int h = t.c().hour; h != 0) {
      t.Set(t.unix() + (h > 12 ? int64_t{24 - h} : int64_t{-h}) * 3600);
    }
    if (++steps > kMaxSteps) return GiveUp(runaway);
    if (t.c().day == 1) goto wrap;
  }

  while (!Has(raw_.hour, t.c().hour)) {
    if (!added) {
      added = true;
      t.SetWall(t.c().year, t.c().month, t.c().day, t.c().hour, 0, 0);
    }
    // Add(time.Hour) until a wanted hour or hour 0.
    const int h = t.c().hour;
    const uint64_t later = hour_ & (~uint64_t{0} << (h + 1));
    const int target = later ? std::countr_zero(later) : 24;
    const int64_t jump = t.unix() + int64_t{target - h} * 3600;
    if (t.InPeriod(t.unix()) && t.InPeriod(jump)) {
      t.Set(jump);
    } else {
      t.Set(t.unix() + 3600);
      if (++steps > kMaxSteps) return GiveUp(runaway);
    }
    if (t.c().hour == 0) goto wrap;
  }

  while (!Has(raw_.minute, t.c().minute)) {
    if (!added) {
      added = true;
      t.Set(FloorDiv(t.unix(), 60) * 60);
    }
    const int mi = t.c().minute;
    const uint64_t later = minute_ & (~uint64_t{0} << (mi + 1));
    const int target = later ? std::countr_zero(later) : 60;
    const int64_t jump = t.unix() + int64_t{target - mi} * 60;
    if (t.InPeriod(t.unix()) && t.InPeriod(jump)) {
      t.Set(jump);
    } else {
      t.Set(t.unix() + 60);
      if (++steps > kMaxSteps) return GiveUp(runaway);
    }
    if (t.c().minute == 0) goto wrap;
  }

  while (!Has(raw_.second, t.c().second)) {
    // Truncate(time.Second) is a no-op here: the cursor is always on a whole second.
    added = true;
    const int64_t jump = t.unix() + (60 - t.c().second);
    if (t.InPeriod(t.unix()) && t.InPeriod(jump)) {
      t.Set(jump);
    } else {
      t.Set(t.unix() + 1);
      if (++steps > kMaxSteps) return GiveUp(runaway);
    }
    if (t.c().second == 0) goto wrap;
  }
  return t.unix();
}

std::optional<int64_t> SpecSchedule::RobfigNext(int64_t unix_seconds, bool* runaway) const {
  const int64_t start = unix_seconds + 1;
  *runaway = false;
  if (auto fast = FastNext(start)) return *fast;
  return EmulateRobfig(start, runaway);
}

std::optional<int64_t> SpecSchedule::CorrectNext(int64_t unix_seconds) const {
  int64_t u = unix_seconds + 1;
  const int64_t max_year = CivilFromUnix(u, zone_->OffsetAt(u)).year + 5;
  // Walk the zone's offset periods in order; the first period holding a matching reading holds
  // the answer.
  for (;;) {
    const model::TimeZone::Period p = zone_->Lookup(u);
    const int64_t end = p.end > u ? p.end : u + kDay;  // Go's approximate footer periods
    const std::optional<int64_t> wall = NextMatchingWall(u + p.offset, max_year);
    if (!wall) return std::nullopt;
    if (*wall - p.offset < end && *wall - p.offset >= u) return *wall - p.offset;
    if (end == INT64_MAX) return std::nullopt;
    u = end;
    if (CivilFromUnix(u, p.offset).year > max_year + 1) return std::nullopt;
  }
}

std::optional<Time> SpecSchedule::Next(Time t) const {
  const int64_t from = t.unix_seconds();
  // The fast path's answer matches by construction; only emulated walks need checking.
  if (auto fast = FastNext(from + 1)) {
    if (!*fast) return std::nullopt;
    return Time::FromUnix(**fast);
  }
  bool runaway = false;
  std::optional<int64_t> next = EmulateRobfig(from + 1, &runaway);
  if (runaway ||
      (next && (*next <= from || !Matches(CivilFromUnix(*next, zone_->OffsetAt(*next)))))) {
    next = CorrectNext(from);
  }
  if (!next) return std::nullopt;
  return Time::FromUnix(*next);
}

ConstantDelaySchedule::ConstantDelaySchedule(Duration delay,
                                             std::shared_ptr<const model::TimeZone> zone)
    : zone_(std::move(zone)) {
  // Go's Every: at least a second; anything below a second truncated away.
  const int64_t ns = std::max<int64_t>(delay.count(), 1'000'000'000);
  delay_seconds_ = ns / 1'000'000'000;
}

std::optional<Time> ConstantDelaySchedule::Next(Time t) const {
  return Time::FromUnix(t.unix_seconds() + delay_seconds_);
}

}  // namespace cronledger::reconciler
