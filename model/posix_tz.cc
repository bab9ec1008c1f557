#include "model/posix_tz.h"

#include "model/time.h"

namespace cronledger::model {
namespace {

constexpr int kSecondsPerDay = 86400;

// Go's tzsetName: "<...>" quoted, or at least three characters up to a digit, ',', '-' or '+'.
bool ParseName(std::string_view* s) {
  if (s->empty()) return false;
  if ((*s)[0] != '<') {
    for (size_t i = 0; i < s->size(); ++i) {
      const char c = (*s)[i];
      if ((c >= '0' && c <= '9') || c == ',' || c == '-' || c == '+') {
        if (i < 3) return false;
        s->remove_prefix(i);
        return true;
      }
    }
    if (s->size() < 3) return false;
    s->remove_prefix(s->size());
    return true;
  }
  const size_t close = s->find('>');
  if (close == std::string_view::npos) return false;
  s->remove_prefix(close + 1);
  return true;
}

// Go's tzsetNum: digits in [min, max]; fails as soon as the running value exceeds max.
bool ParseNum(std::string_view* s, int min, int max, int* out) {
  if (s->empty()) return false;
  int num = 0;
  size_t i = 0;
  for (; i < s->size(); ++i) {
    const char c = (*s)[i];
    if (c < '0' || c > '9') {
      if (i == 0 || num < min) return false;
      break;
    }
    num = num * 10 + (c - '0');
    if (num > max) return false;
  }
  if (i == s->size() && num < min) return false;
  s->remove_prefix(i);
  *out = num;
  return true;
}

// Go's tzsetOffset: [+-]hh[:mm[:ss]], hours up to 24*7 as tzcode allows.
bool ParseOffset(std::string_view* s, int* out) {
  if (s->empty()) return false;
  bool neg = false;
  if ((*s)[0] == '+' || (*s)[0] == '-') {
    neg = (*s)[0] == '-';
    s->remove_prefix(1);
  }
  int hours = 0;
  if (!ParseNum(s, 0, 24 * 7, &hours)) return false;
  int off = hours * 3600;
  for (int mult : {60, 1}) {
    if (s->empty() || (*s)[0] != ':') break;
    s->remove_prefix(1);
    int v = 0;
    if (!ParseNum(s, 0, 59, &v)) return false;
    off += v * mult;
  }
  *out = neg ? -off : off;
  return true;
}

bool ParseRule(std::string_view* s, PosixTz::Rule* r) {
  if (s->empty()) return false;
  using Kind = PosixTz::Rule::Kind;
  if ((*s)[0] == 'J') {
    s->remove_prefix(1);
    if (!ParseNum(s, 1, 365, &r->day)) return false;
    r->kind = Kind::kJulian;
  } else if ((*s)[0] == 'M') {
    s->remove_prefix(1);
    if (!ParseNum(s, 1, 12, &r->month) || s->empty() || (*s)[0] != '.') return false;
    s->remove_prefix(1);
    if (!ParseNum(s, 1, 5, &r->week) || s->empty() || (*s)[0] != '.') return false;
    s->remove_prefix(1);
    if (!ParseNum(s, 0, 6, &r->day)) return false;
    r->kind = Kind::kMonthWeekDay;
  } else {
    if (!ParseNum(s, 0, 365, &r->day)) return false;
    r->kind = Kind::kDayOfYear;
  }
  if (s->empty() || (*s)[0] != '/') {
    r->time = 2 * 3600;
    return true;
  }
  s->remove_prefix(1);
  return ParseOffset(s, &r->time);
}

// Go's tzruleTime: seconds from the start of the UTC year to the rule's instant, for a rule given
// in local time at offset `off`. Zeller's congruence finds the weekday of the month's first day.
int64_t RuleTime(int64_t year, const PosixTz::Rule& r, int off) {
  using Kind = PosixTz::Rule::Kind;
  int64_t s = 0;
  switch (r.kind) {
    case Kind::kJulian:
      s = int64_t{r.day - 1} * kSecondsPerDay;
      if (IsLeapYear(year) && r.day >= 60) s += kSecondsPerDay;
      break;
    case Kind::kDayOfYear:
      s = int64_t{r.day} * kSecondsPerDay;
      break;
    case Kind::kMonthWeekDay: {
      const int64_t m1 = (r.month + 9) % 12 + 1;
      int64_t yy0 = year;
      if (r.month <= 2) --yy0;
      const int64_t yy1 = yy0 / 100;
      const int64_t yy2 = yy0 % 100;
      int64_t dow = ((26 * m1 - 2) / 10 + 1 + yy2 + yy2 / 4 + yy1 / 4 - 2 * yy1) % 7;
      if (dow < 0) dow += 7;
      int64_t d = r.day - dow;
      if (d < 0) d += 7;
      for (int i = 1; i < r.week; ++i) {
        if (d + 7 >= DaysInMonth(year, r.month)) break;
        d += 7;
      }
      d += DaysFromCivil(year, r.month, 1) - DaysFromCivil(year, 1, 1);
      s = d * kSecondsPerDay;
      break;
    }
  }
  return s + r.time - off;
}

}  // namespace

std::optional<PosixTz> PosixTz::Parse(std::string_view s) {
  PosixTz tz;
  int std_off = 0;
  if (!ParseName(&s) || !ParseOffset(&s, &std_off)) return std::nullopt;
  // POSIX offsets are added to local time to get UTC; ours are added to UTC.
  tz.std_offset_ = -std_off;
  if (s.empty() || s[0] == ',') return tz;
  if (!ParseName(&s)) return std::nullopt;
  if (s.empty() || s[0] == ',') {
    tz.dst_offset_ = tz.std_offset_ + 3600;
  } else {
    int dst_off = 0;
    if (!ParseOffset(&s, &dst_off)) return std::nullopt;
    tz.dst_offset_ = -dst_off;
  }
  tz.has_dst_ = true;
  if (s.empty()) s = ",M3.2.0,M11.1.0";  // tzcode's default rules
  if (s[0] != ',' && s[0] != ';') return std::nullopt;
  s.remove_prefix(1);
  if (!ParseRule(&s, &tz.start_) || s.empty() || s[0] != ',') return std::nullopt;
  s.remove_prefix(1);
  if (!ParseRule(&s, &tz.end_) || !s.empty()) return std::nullopt;
  return tz;
}

TimeZone::Period PosixTz::At(int64_t last_tx, int64_t sec) const {
  if (!has_dst_) return {std_offset_, last_tx, INT64_MAX, false};
  const Civil c = CivilFromUnix(sec);
  // Go: ysec = yday*86400 + sec%86400 with a truncating remainder.
  const int64_t ysec = int64_t{c.yearday - 1} * kSecondsPerDay + sec % kSecondsPerDay;
  const int64_t year_start = DaysFromCivil(c.year, 1, 1) * kSecondsPerDay;
  int64_t start_sec = RuleTime(c.year, start_, std_offset_);
  int64_t end_sec = RuleTime(c.year, end_, dst_offset_);
  int std_off = std_offset_;
  int dst_off = dst_offset_;
  bool std_is_dst = false;
  bool dst_is_dst = true;
  // Southern hemisphere: DST spans the new year, so the roles swap (Go keeps the swapped labels).
  if (end_sec < start_sec) {
    std::swap(start_sec, end_sec);
    std::swap(std_off, dst_off);
    std::swap(std_is_dst, dst_is_dst);
  }
  if (ysec < start_sec) return {std_off, year_start, start_sec + year_start, std_is_dst};
  if (ysec >= end_sec) {
    return {std_off, end_sec + year_start, year_start + 365 * kSecondsPerDay, std_is_dst};
  }
  return {dst_off, start_sec + year_start, end_sec + year_start, dst_is_dst};
}

}  // namespace cronledger::model
