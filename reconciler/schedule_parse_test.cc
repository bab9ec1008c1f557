// ParseStandard: robfig/cron v3.0.1 parser_test.go (the ParseStandard subset) plus the error
// texts of parser.go and the Kubernetes inputs of docs/semantics.md §6.5 / §9.
#include <gtest/gtest.h>

#include "reconciler/cron_spec.h"
#include "reconciler/schedule_test_util.h"

namespace cronledger::reconciler {
namespace {

using testing::Db;

struct ErrorCase {
  const char* spec;
  const char* error;
};

TEST(ScheduleParseTest, ErrorsAreRobfigs) {
  const ErrorCase cases[] = {
      {"", "empty spec string"},
      {"* * * *", "expected exactly 5 fields, found 4: [* * * *]"},
      {"* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]"},
      {"5 j * * *", "failed to parse int from j: strconv.Atoi: parsing \"j\": invalid syntax"},
      {"@every Xm", "failed to parse duration @every Xm: time: invalid duration \"Xm\""},
      {"@unrecognized", "unrecognized descriptor: @unrecognized"},
      {"@every", "unrecognized descriptor: @every"},
      {"@daily ", "unrecognized descriptor: @daily "},
      {"60 * * * *", "end of range (60) above maximum (59): 60"},
      {"* * 0 * *", "beginning of range (0) below minimum (1): 0"},
      {"* * * * 7", "end of range (7) above maximum (6): 7"},
      {"*/0 * * * *", "step of range should be a positive number: */0"},
      {"5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"},
      {"1-2-3 * * * *", "too many hyphens: 1-2-3"},
      {"1/2/3 * * * *", "too many slashes: 1/2/3"},
      {"-1 * * * *", "failed to parse int from : strconv.Atoi: parsing \"\": invalid syntax"},
      {"* * * foo *",
       "failed to parse int from foo: strconv.Atoi: parsing \"foo\": invalid syntax"},
      {"*/-2 * * * *", "negative number (-2) not allowed: -2"},
      {"99999999999999999999 * * * *",
       "failed to parse int from 99999999999999999999: strconv.Atoi: parsing "
       "\"99999999999999999999\": value out of range"},
      {"TZ=Mars/Olympus 0 * * * *",
       "provided bad location Mars/Olympus: unknown time zone Mars/Olympus"},
      {"TZ=../etc 0 * * * *", "provided bad location ../etc: time: invalid location name"},
      // The Go parser panics without a space after the zone; Kubernetes recovers (docs/semantics.md
      // §6.5).
      {"TZ=UTC", "invalid schedule format: runtime error: slice bounds out of range [:-1]"},
      {"TZ=", "invalid schedule format: runtime error: slice bounds out of range [:-1]"},
      {"TZ=0", "invalid schedule format: runtime error: slice bounds out of range [:-1]"},
      {"CRON_TZ=UTC", "invalid schedule format: runtime error: slice bounds out of range [:-1]"},
      {"TZ=Invalid/Timezone",
       "invalid schedule format: runtime error: slice bounds out of range [:-1]"},
      {"TZ=UTC ", "expected exactly 5 fields, found 0: []"},
  };
  for (const auto& c : cases) {
    auto s = ParseStandard(c.spec, Db());
    ASSERT_FALSE(s.ok()) << c.spec;
    EXPECT_EQ(s.status().message(), c.error) << c.spec;
  }
}

struct BitsCase {
  const char* spec;
  CronFields want;
};

constexpr uint64_t kStar = CronFields::kStarBit;
constexpr uint64_t Bits(int lo, int hi, int step = 1) {
  uint64_t b = 0;
  for (int i = lo; i <= hi; i += step) b |= uint64_t{1} << i;
  return b;
}

TEST(ScheduleParseTest, FieldBitsAreRobfigs) {
  const uint64_t all_hours = Bits(0, 23) | kStar;
  const uint64_t all_dom = Bits(1, 31) | kStar;
  const uint64_t all_months = Bits(1, 12) | kStar;
  const uint64_t all_dow = Bits(0, 6) | kStar;
  const BitsCase cases[] = {
      // parser_test.go TestStandardSpecSchedule.
      {"5 * * * *", {1, uint64_t{1} << 5, all_hours, all_dom, all_months, all_dow}},
      // Descriptors (parser.go parseDescriptor).
      {"@yearly", {1, 1, 1, 2, 2, all_dow}},
      {"@annually", {1, 1, 1, 2, 2, all_dow}},
      {"@monthly", {1, 1, 1, 2, all_months, all_dow}},
      {"@weekly", {1, 1, 1, all_dom, all_months, 1}},
      {"@daily", {1, 1, 1, all_dom, all_months, all_dow}},
      {"@midnight", {1, 1, 1, all_dom, all_months, all_dow}},
      {"@hourly", {1, 1, all_hours, all_dom, all_months, all_dow}},
      // Steps: "*/1" keeps the star bit, larger steps clear it; "a/n" runs to the maximum.
      {"*/1 */2 5/10 ? 1-5/2",
       {1, Bits(0, 59) | kStar, Bits(0, 23, 2), Bits(5, 31, 10), all_months, Bits(1, 5, 2)}},
      // Names in any case, lists, and robfig's leniency: empty list items, "*-5" = "*".
      {"1,,2 *-5 1 JAN,feb,Mar sun-SAT", {1, Bits(1, 2), all_hours, 2, Bits(1, 3), Bits(0, 6)}},
      {", 0 1 1 *", {1, 0, 1, 2, 2, all_dow}},
      {"+5 0 1 1 *", {1, uint64_t{1} << 5, 1, 2, 2, all_dow}},
  };
  for (const auto& c : cases) {
    auto s = ParseStandard(c.spec, Db());
    ASSERT_TRUE(s.ok()) << c.spec << ": " << s.status().message();
    const auto* spec = dynamic_cast<const SpecSchedule*>(s->get());
    ASSERT_NE(spec, nullptr) << c.spec;
    const CronFields& got = spec->fields();
    EXPECT_EQ(got.second, c.want.second) << c.spec;
    EXPECT_EQ(got.minute, c.want.minute) << c.spec;
    EXPECT_EQ(got.hour, c.want.hour) << c.spec;
    EXPECT_EQ(got.dom, c.want.dom) << c.spec;
    EXPECT_EQ(got.month, c.want.month) << c.spec;
    EXPECT_EQ(got.dow, c.want.dow) << c.spec;
  }
}

TEST(ScheduleParseTest, EveryTruncatesToSecondsWithOneSecondMinimum) {
  const std::pair<const char*, int64_t> cases[] = {
      {"@every 5m", 300},      {"@every 1h30m10.9s", 5410}, {"@every 500ms", 1},
      {"@every 0s", 1},        {"@every -5s", 1},           {"TZ=Asia/Tokyo @every 1h", 3600},
      {"@every 26h3m", 93780},
  };
  for (const auto& [spec, seconds] : cases) {
    auto s = ParseStandard(spec, Db());
    ASSERT_TRUE(s.ok()) << spec;
    const auto* every = dynamic_cast<const ConstantDelaySchedule*>(s->get());
    ASSERT_NE(every, nullptr) << spec;
    EXPECT_EQ(every->delay_seconds(), seconds) << spec;
  }
}

TEST(ScheduleParseTest, ZonePrefixes) {
  auto tz = ParseStandard("TZ=Europe/Rome 0 * * * *", Db());
  ASSERT_TRUE(tz.ok());
  EXPECT_EQ((*tz)->zone().name(), "Europe/Rome");
  auto cron_tz = ParseStandard("CRON_TZ=Asia/Tokyo  @daily", Db());
  ASSERT_TRUE(cron_tz.ok());
  EXPECT_EQ((*cron_tz)->zone().name(), "Asia/Tokyo");
  // "TZ= " loads "" which Go treats as UTC.
  auto empty = ParseStandard("TZ= 0 * * * *", Db());
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->zone().name(), "UTC");
  // Without a prefix the schedule runs in the database's Local zone.
  auto local = ParseStandard("0 * * * *", Db());
  ASSERT_TRUE(local.ok());
  EXPECT_EQ((*local)->zone().name(), "Local");
}

// docs/semantics.md §6.5: a schedule containing "TZ" anywhere is used verbatim and timeZone is
// ignored.
TEST(ScheduleParseTest, FormatScheduleIsKubernetes) {
  const std::optional<std::string> none;
  const std::optional<std::string> ny = "America/New_York";
  EXPECT_EQ(FormatSchedule("0 * * * *", none).text, "0 * * * *");
  EXPECT_FALSE(FormatSchedule("0 * * * *", none).contains_tz);
  EXPECT_EQ(FormatSchedule("0 * * * *", ny).text, "TZ=America/New_York 0 * * * *");
  EXPECT_EQ(FormatSchedule("TZ=UTC 0 * * * ?", ny).text, "TZ=UTC 0 * * * ?");
  EXPECT_TRUE(FormatSchedule("TZ=UTC 0 * * * ?", ny).contains_tz);
  EXPECT_TRUE(FormatSchedule("CRON_TZ=UTC 0 * * * *", none).contains_tz);
  EXPECT_TRUE(FormatSchedule("0 * * * * # TZ", none).contains_tz);
  EXPECT_FALSE(FormatSchedule("0 * * * * tz", none).contains_tz);
  EXPECT_EQ(FormatSchedule("@daily", std::optional<std::string>("")).text, "TZ= @daily");
}

}  // namespace
}  // namespace cronledger::reconciler
