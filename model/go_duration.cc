// Go's time.ParseDuration and Duration.String, reproduced because robfig/cron's `@every <duration>`
// accepts exactly Go's syntax and reports Go's error texts (docs/semantics.md §9).
#include <cstdint>
#include <string>

#include "model/time.h"

namespace cronledger {
namespace {

constexpr uint64_t kOverflowLimit = uint64_t{1} << 63;

std::string Quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xf]);
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  return out;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Consumes leading digits; false on overflow past 2^63.
bool LeadingInt(std::string_view* s, uint64_t* out) {
  uint64_t x = 0;
  size_t i = 0;
  for (; i < s->size() && IsDigit((*s)[i]); ++i) {
    if (x > kOverflowLimit / 10) return false;
    x = x * 10 + static_cast<uint64_t>((*s)[i] - '0');
    if (x > kOverflowLimit) return false;
  }
  s->remove_prefix(i);
  *out = x;
  return true;
}

// Consumes leading digits of a fraction; digits past the precision are dropped, as Go does.
void LeadingFraction(std::string_view* s, uint64_t* out, double* scale) {
  uint64_t x = 0;
  *scale = 1;
  bool overflow = false;
  size_t i = 0;
  for (; i < s->size() && IsDigit((*s)[i]); ++i) {
    if (overflow) continue;
    if (x > (kOverflowLimit - 1) / 10) {
      overflow = true;
      continue;
    }
    const uint64_t y = x * 10 + static_cast<uint64_t>((*s)[i] - '0');
    if (y > kOverflowLimit) {
      overflow = true;
      continue;
    }
    x = y;
    *scale *= 10;
  }
  s->remove_prefix(i);
  *out = x;
}

uint64_t UnitNanos(std::string_view u) {
  if (u == "ns") return 1;
  if (u == "us" || u == "\xC2\xB5s" || u == "\xCE\xBCs") return 1'000;
  if (u == "ms") return 1'000'000;
  if (u == "s") return 1'000'000'000;
  if (u == "m") return 60'000'000'000;
  if (u == "h") return 3'600'000'000'000;
  return 0;
}

// Go's fmtFrac/fmtInt for Duration.String.
void AppendFrac(std::string* out, uint64_t* v, int prec) {
  std::string digits;
  bool print = false;
  for (int i = 0; i < prec; ++i) {
    const uint64_t digit = *v % 10;
    print = print || digit != 0;
    if (print) digits.insert(digits.begin(), static_cast<char>('0' + digit));
    *v /= 10;
  }
  if (print) *out = "." + digits + *out;
}

}  // namespace

Result<Duration> ParseGoDuration(std::string_view text) {
  const std::string_view orig = text;
  std::string_view s = text;
  auto invalid = [&] { return Status::InvalidArgument("time: invalid duration " + Quote(orig)); };
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return Duration(0);
  if (s.empty()) return invalid();
  uint64_t d = 0;
  while (!s.empty()) {
    if (!(s[0] == '.' || IsDigit(s[0]))) return invalid();
    size_t before = s.size();
    uint64_t v = 0;
    if (!LeadingInt(&s, &v)) return invalid();
    const bool pre = before != s.size();
    bool post = false;
    uint64_t f = 0;
    double scale = 1;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      before = s.size();
      LeadingFraction(&s, &f, &scale);
      post = before != s.size();
    }
    if (!pre && !post) return invalid();
    size_t i = 0;
    while (i < s.size() && (s[i] == '.' || !IsDigit(s[i]))) ++i;
    if (i == 0) {
      return Status::InvalidArgument("time: missing unit in duration " + Quote(orig));
    }
    const std::string_view u = s.substr(0, i);
    s.remove_prefix(i);
    const uint64_t unit = UnitNanos(u);
    if (unit == 0) {
      return Status::InvalidArgument("time: unknown unit " + Quote(u) + " in duration " +
                                     Quote(orig));
    }
    if (v > kOverflowLimit / unit) return invalid();
    v *= unit;
    if (f > 0) {
      v += static_cast<uint64_t>(static_cast<double>(f) * (static_cast<double>(unit) / scale));
      if (v > kOverflowLimit) return invalid();
    }
    d += v;
    if (d > kOverflowLimit) return invalid();
  }
  if (neg) {
    return Duration(static_cast<int64_t>(~d + 1));  // two's complement of d <= 2^63
  }
  if (d > kOverflowLimit - 1) return invalid();
  return Duration(static_cast<int64_t>(d));
}

std::string FormatGoDuration(Duration dur) {
  const int64_t d = dur.count();
  if (d == 0) return "0s";
  const bool neg = d < 0;
  uint64_t u = neg ? ~static_cast<uint64_t>(d) + 1 : static_cast<uint64_t>(d);
  std::string out;
  if (u < 1'000'000'000) {
    int prec = 0;
    if (u < 1'000) {
      out = "ns";
    } else if (u < 1'000'000) {
      prec = 3;
      out = "\xC2\xB5s";
    } else {
      prec = 6;
      out = "ms";
    }
    AppendFrac(&out, &u, prec);
    out = std::to_string(u) + out;
  } else {
    out = "s";
    AppendFrac(&out, &u, 9);
    out = std::to_string(u % 60) + out;
    u /= 60;
    if (u > 0) {
      out = std::to_string(u % 60) + "m" + out;
      u /= 60;
      if (u > 0) out = std::to_string(u) + "h" + out;
    }
  }
  return neg ? "-" + out : out;
}

}  // namespace cronledger
