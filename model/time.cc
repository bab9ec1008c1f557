#include "model/time.h"

#include <array>
#include <cstdio>
#include <limits>

namespace cronledger {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

// Civil-from-days and days-from-civil after H. Hinnant's public-domain derivation
// ("chrono-compatible low-level date algorithms"), written out for int64 years.
void CivilFromDays(int64_t z, int64_t* y, int* m, int* d) {
  z += 719468;
  const int64_t era = FloorDiv(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2 ? 1 : 0);
}

// What snprintf("%0*lld", width, v) writes after the sign, without snprintf (it is called for
// every field of every time the canonical encodings write).
void AppendPadded(std::string* out, int64_t v, int width) {
  char buf[32];
  uint64_t u = static_cast<uint64_t>(v);
  if (v < 0) {
    out->push_back('-');
    u = 0 - u;
  }
  // Digits from the end of buf backwards, then one append (not a push_back per digit).
  int n = 0;
  do {
    buf[sizeof(buf) - 1 - n++] = static_cast<char>('0' + u % 10);
    u /= 10;
  } while (u != 0);
  while (n < width && n < static_cast<int>(sizeof(buf))) buf[sizeof(buf) - 1 - n++] = '0';
  out->append(buf + sizeof(buf) - n, static_cast<size_t>(n));
}

// "2006-01-02T15:04:05" of `t` at the offset, appended to *out.
void AppendCore(Time t, int offset_seconds, std::string* out) {
  const Civil c = CivilFromUnix(t.unix_seconds(), offset_seconds);
  AppendPadded(out, c.year, 4);
  out->push_back('-');
  AppendPadded(out, c.month, 2);
  out->push_back('-');
  AppendPadded(out, c.day, 2);
  out->push_back('T');
  AppendPadded(out, c.hour, 2);
  out->push_back(':');
  AppendPadded(out, c.minute, 2);
  out->push_back(':');
  AppendPadded(out, c.second, 2);
}

std::string FormatCore(Time t, int offset_seconds) {
  std::string out;
  out.reserve(25);
  AppendCore(t, offset_seconds, &out);
  return out;
}

void AppendOffset(std::string* out, int offset_seconds, bool colon) {
  const char sign = offset_seconds < 0 ? '-' : '+';
  const int abs = offset_seconds < 0 ? -offset_seconds : offset_seconds;
  out->push_back(sign);
  AppendPadded(out, abs / 3600, 2);
  if (colon) out->push_back(':');
  AppendPadded(out, (abs / 60) % 60, 2);
}

bool ParseDigits(std::string_view s, size_t pos, size_t n, int* out) {
  if (pos + n > s.size()) return false;
  int v = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

std::string Quote(std::string_view s) {
  std::string out = "\"";
  out.append(s);
  out.push_back('"');
  return out;
}

}  // namespace

int64_t Time::UnixNanosSaturated() const {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (sec_ > kMax / kNanosPerSecond - 1) return kMax;
  if (sec_ < std::numeric_limits<int64_t>::min() / kNanosPerSecond + 1) {
    return std::numeric_limits<int64_t>::min();
  }
  return sec_ * kNanosPerSecond + nsec_;
}

Time Time::Add(Duration d) const {
  const int64_t ns = d.count();
  int64_t s = sec_ + ns / kNanosPerSecond;
  int64_t n = nsec_ + ns % kNanosPerSecond;
  if (n >= kNanosPerSecond) {
    ++s;
    n -= kNanosPerSecond;
  } else if (n < 0) {
    --s;
    n += kNanosPerSecond;
  }
  return Time(s, static_cast<int32_t>(n));
}

Duration Time::Sub(Time other) const {
  // Go: d = (t.sec-u.sec)*1e9 + (t.nsec-u.nsec), saturating when the true value does not fit.
  int64_t secs = 0;
  int64_t ns = 0;
  int64_t d = 0;
  const bool overflow = __builtin_sub_overflow(sec_, other.sec_, &secs) ||
                        __builtin_mul_overflow(secs, kNanosPerSecond, &ns) ||
                        __builtin_add_overflow(ns, int64_t{nsec_} - other.nsec_, &d);
  if (overflow)
    return (sec_ > other.sec_ || (sec_ == other.sec_ && nsec_ > other.nsec_)) ? kMaxDuration
                                                                              : kMinDuration;
  return Duration(d);
}

bool IsLeapYear(int64_t year) { return (year % 4 == 0) && (year % 100 != 0 || year % 400 == 0); }

int DaysInMonth(int64_t year, int month) {
  static constexpr std::array<int, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month == 2 && IsLeapYear(year)) return 29;
  return kDays[static_cast<size_t>(month - 1)];
}

int64_t DaysFromCivil(int64_t year, int month, int day) {
  const int64_t y = year - (month <= 2 ? 1 : 0);
  const int64_t era = FloorDiv(y, 400);
  const int64_t yoe = y - era * 400;
  const int64_t mp = month > 2 ? month - 3 : month + 9;
  const int64_t doy = (153 * mp + 2) / 5 + day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

Civil CivilFromUnix(int64_t unix_seconds, int offset_seconds) {
  const int64_t local = unix_seconds + offset_seconds;
  const int64_t days = FloorDiv(local, 86400);
  const int64_t secs = local - days * 86400;
  Civil c;
  CivilFromDays(days, &c.year, &c.month, &c.day);
  c.hour = static_cast<int>(secs / 3600);
  c.minute = static_cast<int>((secs / 60) % 60);
  c.second = static_cast<int>(secs % 60);
  // 1970-01-01 was a Thursday (4).
  c.weekday = static_cast<int>(FloorDiv(days + 4, 7) * -7 + days + 4);
  c.yearday = static_cast<int>(days - DaysFromCivil(c.year, 1, 1) + 1);
  return c;
}

int64_t WallSecondsFromCivil(int64_t year, int month, int64_t day, int64_t hour, int64_t minute,
                             int64_t second) {
  // Go normalizes the month into the year first; the remaining fields carry linearly.
  int64_t m0 = month - 1;
  year += FloorDiv(m0, 12);
  m0 -= FloorDiv(m0, 12) * 12;
  const int64_t days = DaysFromCivil(year, static_cast<int>(m0 + 1), 1) + (day - 1);
  return days * 86400 + hour * 3600 + minute * 60 + second;
}

Result<Time> ParseRfc3339(std::string_view s) {
  auto bad = [&](std::string_view why) {
    return Status::InvalidArgument("invalid RFC 3339 time " + Quote(s) + ": " + std::string(why));
  };
  int year, month, day, hour, minute, second;
  if (!ParseDigits(s, 0, 4, &year) || s.size() < 20 || s[4] != '-' ||
      !ParseDigits(s, 5, 2, &month) || s[7] != '-' || !ParseDigits(s, 8, 2, &day) ||
      (s[10] != 'T' && s[10] != 't') || !ParseDigits(s, 11, 2, &hour) || s[13] != ':' ||
      !ParseDigits(s, 14, 2, &minute) || s[16] != ':' || !ParseDigits(s, 17, 2, &second)) {
    return bad("want YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM)");
  }
  if (month < 1 || month > 12) return bad("month out of range");
  if (day < 1 || day > DaysInMonth(year, month)) return bad("day out of range");
  if (hour > 23) return bad("hour out of range");
  if (minute > 59) return bad("minute out of range");
  if (second > 59) return bad("second out of range");
  size_t pos = 19;
  int32_t nanos = 0;
  if (pos < s.size() && (s[pos] == '.' || s[pos] == ',')) {
    ++pos;
    size_t digits = 0;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') {
      if (digits < 9) nanos = nanos * 10 + (s[pos] - '0');
      ++digits;
      ++pos;
    }
    if (digits == 0) return bad("empty fraction");
    for (size_t i = digits; i < 9; ++i) nanos *= 10;
  }
  int offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    int oh, om;
    if (!ParseDigits(s, pos + 1, 2, &oh) || pos + 3 >= s.size() || s[pos + 3] != ':' ||
        !ParseDigits(s, pos + 4, 2, &om)) {
      return bad("malformed UTC offset");
    }
    if (oh > 23 || om > 59) return bad("UTC offset out of range");
    offset = (oh * 3600 + om * 60) * (s[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return bad("missing time zone designator");
  }
  if (pos != s.size()) return bad("trailing characters");
  const int64_t wall = WallSecondsFromCivil(year, month, day, hour, minute, second);
  return Time::FromUnix(wall - offset, nanos);
}

std::string FormatRfc3339(Time t) { return FormatCore(t, 0) + "Z"; }

std::string FormatRfc3339(Time t, int offset_seconds) {
  std::string out = FormatCore(t, offset_seconds);
  if (offset_seconds == 0) {
    out.push_back('Z');
  } else {
    AppendOffset(&out, offset_seconds, /*colon=*/true);
  }
  return out;
}

std::string FormatRfc3339Nano(Time t) {
  std::string out;
  out.reserve(31);
  AppendRfc3339Nano(t, &out);
  return out;
}

void AppendRfc3339Nano(Time t, std::string* out) {
  AppendCore(t, 0, out);
  if (t.nanos() != 0) {  // ".%09d" without its trailing zeros
    char frac[10];
    int64_t v = t.nanos();
    for (int i = 9; i >= 1; --i) {
      frac[i] = static_cast<char>('0' + v % 10);
      v /= 10;
    }
    frac[0] = '.';
    size_t n = 10;
    while (frac[n - 1] == '0') --n;
    out->append(frac, n);
  }
  out->push_back('Z');
}

std::string FormatRfc1123Z(Time t, int offset_seconds) {
  static constexpr std::array<const char*, 7> kDays = {"Sun", "Mon", "Tue", "Wed",
                                                       "Thu", "Fri", "Sat"};
  static constexpr std::array<const char*, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                          "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const Civil c = CivilFromUnix(t.unix_seconds(), offset_seconds);
  std::string out = kDays[static_cast<size_t>(c.weekday)];
  out += ", ";
  AppendPadded(&out, c.day, 2);
  out += ' ';
  out += kMonths[static_cast<size_t>(c.month - 1)];
  out += ' ';
  AppendPadded(&out, c.year, 4);
  out += ' ';
  AppendPadded(&out, c.hour, 2);
  out += ':';
  AppendPadded(&out, c.minute, 2);
  out += ':';
  AppendPadded(&out, c.second, 2);
  out += ' ';
  AppendOffset(&out, offset_seconds, /*colon=*/false);
  return out;
}

}  // namespace cronledger
