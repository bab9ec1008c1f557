#include "model/time.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace cronledger {
namespace {

TEST(Rfc3339, ParsesAndFormatsAtSecondPrecision) {
  struct Case {
    const char* in;
    int64_t unix;
    int32_t nanos;
    const char* out;
  };
  const Case cases[] = {
      {"2016-05-19T10:00:00Z", 1463652000, 0, "2016-05-19T10:00:00Z"},
      {"2016-05-19t10:00:00z", 1463652000, 0, "2016-05-19T10:00:00Z"},
      {"2016-05-19T12:00:00+02:00", 1463652000, 0, "2016-05-19T10:00:00Z"},
      {"2016-05-19T05:30:00-04:30", 1463652000, 0, "2016-05-19T10:00:00Z"},
      {"2016-05-19T10:00:00.5Z", 1463652000, 500000000, "2016-05-19T10:00:00Z"},
      {"2016-05-19T10:00:00.123456789Z", 1463652000, 123456789, "2016-05-19T10:00:00Z"},
      {"0001-01-01T00:00:00Z", -62135596800, 0, "0001-01-01T00:00:00Z"},
      {"1969-12-31T23:59:59Z", -1, 0, "1969-12-31T23:59:59Z"},
      {"2024-02-29T23:59:59Z", 1709251199, 0, "2024-02-29T23:59:59Z"},
  };
  for (const auto& c : cases) {
    auto t = ParseRfc3339(c.in);
    ASSERT_TRUE(t.ok()) << c.in << ": " << t.status().ToString();
    EXPECT_EQ(t->unix_seconds(), c.unix) << c.in;
    EXPECT_EQ(t->nanos(), c.nanos) << c.in;
    EXPECT_EQ(FormatRfc3339(*t), c.out) << c.in;
  }
}

TEST(Rfc3339, RejectsMalformed) {
  for (const char* bad :
       {"", "2016-05-19", "2016-05-19T10:00:00", "2016-13-19T10:00:00Z", "2016-02-30T10:00:00Z",
        "2016-05-19T24:00:00Z", "2016-05-19T10:60:00Z", "2016-05-19T10:00:60Z",
        "2016-05-19T10:00:00.Z", "2016-05-19T10:00:00+0200", "2016-05-19T10:00:00Zjunk",
        "2016-05-19 10:00:00Z", "x016-05-19T10:00:00Z"}) {
    auto t = ParseRfc3339(bad);
    EXPECT_FALSE(t.ok()) << bad;
    if (!t.ok()) {
      EXPECT_TRUE(t.status().IsInvalidArgument()) << bad;
    }
  }
}

TEST(Rfc3339, FormatsWithOffsetsAndNanos) {
  const Time t = Time::FromUnix(1463652000, 120000000);
  EXPECT_EQ(FormatRfc3339(t, 2 * 3600), "2016-05-19T12:00:00+02:00");
  EXPECT_EQ(FormatRfc3339(t, -4 * 3600), "2016-05-19T06:00:00-04:00");
  EXPECT_EQ(FormatRfc3339(t, 0), "2016-05-19T10:00:00Z");
  EXPECT_EQ(FormatRfc3339(t, 5 * 3600 + 45 * 60), "2016-05-19T15:45:00+05:45");
  EXPECT_EQ(FormatRfc3339Nano(t), "2016-05-19T10:00:00.12Z");
  EXPECT_EQ(FormatRfc3339Nano(t.TruncateToSecond()), "2016-05-19T10:00:00Z");
  std::string appended = "at ";
  AppendRfc3339Nano(t, &appended);
  EXPECT_EQ(appended, "at 2016-05-19T10:00:00.12Z");
  EXPECT_EQ(FormatRfc1123Z(t), "Thu, 19 May 2016 10:00:00 +0000");
  EXPECT_EQ(FormatRfc1123Z(t, -7 * 3600), "Thu, 19 May 2016 03:00:00 -0700");
}

// The fields are written without snprintf: the same text as "%04lld-%02lld-..." and ".%09d"
// (trailing zeros dropped) over years 0..9999+, both signs of offsets and every nanosecond digit.
TEST(Rfc3339, FormatsAsSnprintfDoes) {
  auto reference = [](Time t, int offset) {
    const Civil c = CivilFromUnix(t.unix_seconds(), offset);
    char buf[96];
    std::snprintf(buf, sizeof(buf), "%04lld-%02d-%02dT%02d:%02d:%02d",
                  static_cast<long long>(c.year), c.month, c.day, c.hour, c.minute, c.second);
    std::string out = buf;
    if (offset == 0) return out + "Z";
    const int abs = offset < 0 ? -offset : offset;
    std::snprintf(buf, sizeof(buf), "%c%02d:%02d", offset < 0 ? '-' : '+', abs / 3600,
                  (abs / 60) % 60);
    return out + buf;
  };
  uint64_t x = 88172645463325252ull;
  for (int i = 0; i < 20000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    const int64_t secs = static_cast<int64_t>(x % 320000000000ull) - 62135596800LL;  // 0001..10100
    const int32_t nanos = static_cast<int32_t>((x >> 20) % 1000000000);
    const int offset = static_cast<int>((x >> 40) % 100800) - 50400;
    const Time t = Time::FromUnix(secs, i % 3 == 0 ? 0 : nanos);
    EXPECT_EQ(FormatRfc3339(t, offset), reference(t, offset));
    char frac[16];
    std::snprintf(frac, sizeof(frac), ".%09d", t.nanos());
    std::string want = reference(t, 0);
    want.pop_back();
    if (t.nanos() != 0) {
      std::string f = frac;
      while (f.back() == '0') f.pop_back();
      want += f;
    }
    EXPECT_EQ(FormatRfc3339Nano(t), want + "Z");
  }
}

TEST(Time, SubSaturatesLikeGo) {
  const Time zero = Time::GoZero();
  const Time now = Time::FromUnix(1463652000);
  EXPECT_EQ(now.Sub(zero), kMaxDuration);
  EXPECT_EQ(zero.Sub(now), kMinDuration);
  EXPECT_EQ(now.Sub(now.AddSeconds(-90)), std::chrono::seconds(90));
  const Time a = Time::FromUnix(10, 900000000);
  EXPECT_EQ(a.Add(std::chrono::milliseconds(200)), Time::FromUnix(11, 100000000));
  EXPECT_EQ(a.Add(std::chrono::milliseconds(-1000)), Time::FromUnix(9, 900000000));
  EXPECT_EQ(Time::FromUnix(-1, 500000000).Add(std::chrono::milliseconds(-600)),
            Time::FromUnix(-2, 900000000));
}

TEST(Civil, WeekdayYeardayAndNormalization) {
  const Civil c = CivilFromUnix(1463652000);
  EXPECT_EQ(c.weekday, 4);  // Thursday
  EXPECT_EQ(c.yearday, 140);
  const Civil z = CivilFromUnix(Time::GoZero().unix_seconds());
  EXPECT_EQ(z.year, 1);
  EXPECT_EQ(z.weekday, 1);  // Go: January 1, year 1 is a Monday
  // Go's time.Date(2016, 1, 32, 25, 0, 0) == 2016-02-02T01:00:00.
  EXPECT_EQ(WallSecondsFromCivil(2016, 1, 32, 25, 0, 0),
            ParseRfc3339("2016-02-02T01:00:00Z")->unix_seconds());
  // Month 13 is January of the next year; month 0 is December of the previous.
  EXPECT_EQ(WallSecondsFromCivil(2016, 13, 1, 0, 0, 0),
            ParseRfc3339("2017-01-01T00:00:00Z")->unix_seconds());
  EXPECT_EQ(WallSecondsFromCivil(2016, 0, 1, 0, 0, 0),
            ParseRfc3339("2015-12-01T00:00:00Z")->unix_seconds());
}

TEST(GoDuration, ParsesGoSyntax) {
  struct Case {
    const char* in;
    int64_t ns;
  };
  const Case cases[] = {
      {"0", 0},
      {"5s", 5'000'000'000},
      {"30s", 30'000'000'000},
      {"1478s", 1'478'000'000'000},
      {"-5s", -5'000'000'000},
      {"+5s", 5'000'000'000},
      {"-0", 0},
      {"5.0s", 5'000'000'000},
      {"5.6s", 5'600'000'000},
      {".5s", 500'000'000},
      {"1.s", 1'000'000'000},
      {"1.004s", 1'004'000'000},
      {"100.00100s", 100'001'000'000},
      {"10ns", 10},
      {"11us", 11'000},
      {"12\xC2\xB5s", 12'000},
      {"12\xCE\xBCs", 12'000},
      {"13ms", 13'000'000},
      {"14s", 14'000'000'000},
      {"15m", 900'000'000'000},
      {"16h", 57'600'000'000'000},
      {"3h30m", 12'600'000'000'000},
      {"10.5s4m", 250'500'000'000},
      {"-2m3.4s", -123'400'000'000},
      {"1h2m3s4ms5us6ns", 3'723'004'005'006},
      {"39h9m14.425s", 140'954'425'000'000},
      {"52763797000ns", 52'763'797'000},
      {"0.3333333333333333333h", 1'200'000'000'000},
      {"9007199254740993ns", 9'007'199'254'740'993},
      {"9223372036854775807ns", 9'223'372'036'854'775'807},
      {"-9223372036854775808ns", INT64_MIN},
      {"0.100000000000000000000h", 360'000'000'000},
  };
  for (const auto& c : cases) {
    auto d = ParseGoDuration(c.in);
    ASSERT_TRUE(d.ok()) << c.in << ": " << d.status().ToString();
    EXPECT_EQ(d->count(), c.ns) << c.in;
  }
}

TEST(GoDuration, RejectsWithGoMessages) {
  struct Case {
    const char* in;
    const char* msg;
  };
  const Case cases[] = {
      {"", "time: invalid duration \"\""},
      {"3", "time: missing unit in duration \"3\""},
      {"-", "time: invalid duration \"-\""},
      {"s", "time: invalid duration \"s\""},
      {".", "time: invalid duration \".\""},
      {"-.", "time: invalid duration \"-.\""},
      {".s", "time: invalid duration \".s\""},
      {"+.s", "time: invalid duration \"+.s\""},
      {"1d", "time: unknown unit \"d\" in duration \"1d\""},
      {"9223372036854775808ns", "time: invalid duration \"9223372036854775808ns\""},
      {"9223372036854775.808us", "time: invalid duration \"9223372036854775.808us\""},
      {"-9223372036854775809ns", "time: invalid duration \"-9223372036854775809ns\""},
  };
  for (const auto& c : cases) {
    auto d = ParseGoDuration(c.in);
    ASSERT_FALSE(d.ok()) << c.in;
    EXPECT_EQ(d.status().message(), c.msg) << c.in;
  }
}

TEST(GoDuration, FormatsLikeGo) {
  using std::chrono::nanoseconds;
  EXPECT_EQ(FormatGoDuration(nanoseconds(0)), "0s");
  EXPECT_EQ(FormatGoDuration(nanoseconds(1)), "1ns");
  EXPECT_EQ(FormatGoDuration(nanoseconds(1100)), "1.1\xC2\xB5s");
  EXPECT_EQ(FormatGoDuration(nanoseconds(2'200'000)), "2.2ms");
  EXPECT_EQ(FormatGoDuration(nanoseconds(3'300'000'000)), "3.3s");
  EXPECT_EQ(FormatGoDuration(nanoseconds(4LL * 60'000'000'000 + 5'000'000'000)), "4m5s");
  EXPECT_EQ(FormatGoDuration(nanoseconds(4LL * 60'000'000'000 + 5'001'000'000)), "4m5.001s");
  EXPECT_EQ(
      FormatGoDuration(nanoseconds(5LL * 3'600'000'000'000 + 6LL * 60'000'000'000 + 7'001'000'000)),
      "5h6m7.001s");
  EXPECT_EQ(FormatGoDuration(nanoseconds(8LL * 60'000'000'000 + 1)), "8m0.000000001s");
  EXPECT_EQ(FormatGoDuration(kMaxDuration), "2562047h47m16.854775807s");
  EXPECT_EQ(FormatGoDuration(kMinDuration), "-2562047h47m16.854775808s");
}

}  // namespace
}  // namespace cronledger
