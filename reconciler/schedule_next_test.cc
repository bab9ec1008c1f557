// SpecSchedule.Next / ConstantDelaySchedule.Next: robfig/cron v3.0.1 spec_test.go (TestActivation
// and TestNext, rewritten for the five-field standard parser), Kubernetes cases, and DST tables.
// DST expectations were produced by Go 1.19 + robfig v3.0.1 on the same tzdata.
#include <gtest/gtest.h>

#include "reconciler/cron_spec.h"
#include "reconciler/schedule_test_util.h"

namespace cronledger::reconciler {
namespace {

using testing::Db;
using testing::NextOf;

struct NextCase {
  const char* spec;
  const char* from;
  const char* want;
};

void ExpectAll(const NextCase* cases, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const NextCase& c = cases[i];
    EXPECT_EQ(NextOf(c.spec, c.from), c.want) << c.spec << " from " << c.from;
  }
}

// spec_test.go TestActivation: the schedule fires at `at` exactly when `fires`.
TEST(ScheduleNextTest, RobfigActivation) {
  struct Case {
    const char* at;
    const char* spec;
    bool fires;
  };
  const Case cases[] = {
      {"2012-07-09T15:00:00Z", "0/15 * * * *", true},
      {"2012-07-09T15:45:00Z", "0/15 * * * *", true},
      {"2012-07-09T15:40:00Z", "0/15 * * * *", false},
      {"2012-07-09T15:05:00Z", "5/15 * * * *", true},
      {"2012-07-09T15:20:00Z", "5/15 * * * *", true},
      {"2012-07-09T15:50:00Z", "5/15 * * * *", true},
      {"2012-07-15T15:00:00Z", "0/15 * * Jul *", true},
      {"2012-07-15T15:00:00Z", "0/15 * * Jun *", false},
      {"2012-07-15T08:30:00Z", "30 08 ? Jul Sun", true},
      {"2012-07-15T08:30:00Z", "30 08 15 Jul ?", true},
      {"2012-07-16T08:30:00Z", "30 08 ? Jul Sun", false},
      {"2012-07-16T08:30:00Z", "30 08 15 Jul ?", false},
      {"2012-07-09T15:00:00Z", "@hourly", true},
      {"2012-07-09T15:04:00Z", "@hourly", false},
      {"2012-07-09T15:00:00Z", "@daily", false},
      {"2012-07-09T00:00:00Z", "@daily", true},
      {"2012-07-09T00:00:00Z", "@weekly", false},
      {"2012-07-08T00:00:00Z", "@weekly", true},
      {"2012-07-08T01:00:00Z", "@weekly", false},
      {"2012-07-08T00:00:00Z", "@monthly", false},
      {"2012-07-01T00:00:00Z", "@monthly", true},
      // Both day fields restricted: either may match.
      {"2012-07-15T00:00:00Z", "* * 1,15 * Sun", true},
      {"2012-06-15T00:00:00Z", "* * 1,15 * Sun", true},
      {"2012-08-01T00:00:00Z", "* * 1,15 * Sun", true},
      {"2012-07-15T00:00:00Z", "* * */10 * Sun", true},
      // One day field starred: both must match.
      {"2012-07-15T00:00:00Z", "* * * * Mon", false},
      {"2012-07-09T00:00:00Z", "* * 1,15 * *", false},
      {"2012-07-15T00:00:00Z", "* * 1,15 * *", true},
      {"2012-07-15T00:00:00Z", "* * */2 * Sun", true},
  };
  for (const auto& c : cases) {
    auto s = ParseStandard(c.spec, Db());
    ASSERT_TRUE(s.ok()) << c.spec;
    const Time at = *ParseRfc3339(c.at);
    const auto next = (*s)->Next(at.AddSeconds(-1));
    EXPECT_EQ(next.has_value() && *next == at, c.fires) << c.spec << " at " << c.at;
  }
}

// spec_test.go TestNext, five-field forms (the seconds field of the originals was 0).
TEST(ScheduleNextTest, RobfigNext) {
  const NextCase cases[] = {
      {"0/15 * * * *", "2012-07-09T14:45:00Z", "2012-07-09T15:00:00Z"},
      {"0/15 * * * *", "2012-07-09T14:59:00Z", "2012-07-09T15:00:00Z"},
      {"0/15 * * * *", "2012-07-09T14:59:59Z", "2012-07-09T15:00:00Z"},
      {"20-35/15 * * * *", "2012-07-09T15:45:00Z", "2012-07-09T16:20:00Z"},
      {"*/15 * * * *", "2012-07-09T23:46:00Z", "2012-07-10T00:00:00Z"},
      {"20-35/15 * * * *", "2012-07-09T23:45:00Z", "2012-07-10T00:20:00Z"},
      {"20-35/15 1/2 * * *", "2012-07-09T23:35:51Z", "2012-07-10T01:20:00Z"},
      {"20-35/15 10-12 * * *", "2012-07-09T23:35:51Z", "2012-07-10T10:20:00Z"},
      {"20-35/15 1/2 */2 * *", "2012-07-09T23:35:51Z", "2012-07-11T01:20:00Z"},
      {"20-35/15 * 9-20 * *", "2012-07-09T23:35:51Z", "2012-07-10T00:20:00Z"},
      {"20-35/15 * 9-20 Jul *", "2012-07-09T23:35:51Z", "2012-07-10T00:20:00Z"},
      {"0 0 9 Apr-Oct ?", "2012-07-09T23:35:00Z", "2012-08-09T00:00:00Z"},
      {"0 0 */5 Apr,Aug,Oct Mon", "2012-07-09T23:35:00Z", "2012-08-01T00:00:00Z"},
      {"0 0 */5 Oct Mon", "2012-07-09T23:35:00Z", "2012-10-01T00:00:00Z"},
      {"0 0 * Feb Mon", "2012-07-09T23:35:00Z", "2013-02-04T00:00:00Z"},
      {"0 0 * Feb Mon/2", "2012-07-09T23:35:00Z", "2013-02-01T00:00:00Z"},
      {"* * * * *", "2012-12-31T23:59:45Z", "2013-01-01T00:00:00Z"},
      {"0 0 29 Feb ?", "2012-07-09T23:35:00Z", "2016-02-29T00:00:00Z"},
      // Daylight saving time in New York (EST -5 -> EDT -4 on 2012-03-11 at 02:00).
      {"TZ=America/New_York 30 2 11 Mar ?", "2012-03-11T05:00:00Z", "2013-03-11T06:30:00Z"},
      {"TZ=America/New_York 0 * * * ?", "2012-03-11T05:00:00Z", "2012-03-11T06:00:00Z"},
      {"TZ=America/New_York 0 * * * ?", "2012-03-11T06:00:00Z", "2012-03-11T07:00:00Z"},
      {"TZ=America/New_York 0 * * * ?", "2012-03-11T07:00:00Z", "2012-03-11T08:00:00Z"},
      {"CRON_TZ=America/New_York 0 * * * ?", "2012-03-11T06:00:00Z", "2012-03-11T07:00:00Z"},
      {"TZ=America/New_York 0 1 * * ?", "2012-03-11T05:00:00Z", "2012-03-11T06:00:00Z"},
      {"TZ=America/New_York 0 1 * * ?", "2012-03-11T06:00:00Z", "2012-03-12T05:00:00Z"},
      {"TZ=America/New_York 0 2 * * ?", "2012-03-11T05:00:00Z", "2012-03-12T06:00:00Z"},
      // EDT -> EST on 2012-11-04 at 02:00: the 01:xx hour happens twice.
      {"TZ=America/New_York 30 2 04 Nov ?", "2012-11-04T04:00:00Z", "2012-11-04T07:30:00Z"},
      {"TZ=America/New_York 30 1 04 Nov ?", "2012-11-04T05:45:00Z", "2012-11-04T06:30:00Z"},
      {"TZ=America/New_York 0 * * * ?", "2012-11-04T04:00:00Z", "2012-11-04T05:00:00Z"},
      {"TZ=America/New_York 0 * * * ?", "2012-11-04T05:00:00Z", "2012-11-04T06:00:00Z"},
      {"TZ=America/New_York 0 * * * ?", "2012-11-04T06:00:00Z", "2012-11-04T07:00:00Z"},
      {"TZ=America/New_York 0 1 * * ?", "2012-11-04T04:00:00Z", "2012-11-04T05:00:00Z"},
      {"TZ=America/New_York 0 1 * * ?", "2012-11-04T05:00:00Z", "2012-11-04T06:00:00Z"},
      {"TZ=America/New_York 0 1 * * ?", "2012-11-04T06:00:00Z", "2012-11-05T06:00:00Z"},
      {"TZ=America/New_York 0 2 * * ?", "2012-11-04T04:00:00Z", "2012-11-04T07:00:00Z"},
      {"TZ=America/New_York 0 3 * * ?", "2012-11-04T04:00:00Z", "2012-11-04T08:00:00Z"},
      // Unsatisfiable: robfig gives up after five years.
      {"0 0 30 Feb ?", "2012-07-09T23:35:00Z", "none"},
      {"0 0 31 Apr ?", "2012-07-09T23:35:00Z", "none"},
  };
  ExpectAll(cases, std::size(cases));
}

// Kubernetes' controller tests and docs/semantics.md §6.6/§9 edge cases.
TEST(ScheduleNextTest, KubernetesCases) {
  const NextCase cases[] = {
      {"59 23 31 2 *", "2016-05-19T10:00:00Z", "none"},
      {"TZ=UTC 0 * * * ?", "2016-05-19T09:30:00Z", "2016-05-19T10:00:00Z"},
      {"TZ=Europe/Rome 0 12 * * *", "2016-05-19T09:00:00Z", "2016-05-19T10:00:00Z"},
      {"30 10,11,12 * * 1-5", "2016-05-20T12:30:00Z", "2016-05-23T10:30:00Z"},
      // @every: t truncated to the second + delay, in any zone (docs/semantics.md §9).
      {"@every 30s", "2016-05-19T10:00:00.9Z", "2016-05-19T10:00:30Z"},
      {"TZ=America/New_York @every 1h", "2012-03-11T06:30:00Z", "2012-03-11T07:30:00Z"},
      // Leap years and year wrap within the five-year window.
      {"0 0 29 2 *", "2021-01-01T00:00:00Z", "2024-02-29T00:00:00Z"},
      {"0 0 29 2 *", "2096-03-01T00:00:00Z", "none"},  // 2100 is not a leap year
  };
  ExpectAll(cases, std::size(cases));
}

TEST(ScheduleNextTest, DstTables) {
  const NextCase cases[] = {
      // America/New_York: 02:30 does not exist on 2021-03-14; the 01:xx hour repeats on 11-07.
      {"TZ=America/New_York 30 2 * * *", "2021-03-13T12:00:00Z", "2021-03-15T06:30:00Z"},
      {"TZ=America/New_York 30 1 * * *", "2021-11-07T05:00:00Z", "2021-11-07T05:30:00Z"},
      {"TZ=America/New_York 30 1 * * *", "2021-11-07T05:30:00Z", "2021-11-07T06:30:00Z"},
      {"TZ=America/New_York 0 * * * *", "2021-03-14T06:00:00Z", "2021-03-14T07:00:00Z"},
      // Europe/London: BST starts at 01:00 GMT, ends at 02:00 BST.
      {"TZ=Europe/London 30 1 * * *", "2021-03-27T12:00:00Z", "2021-03-29T00:30:00Z"},
      {"TZ=Europe/London 30 1 * * *", "2021-10-31T00:00:00Z", "2021-10-31T00:30:00Z"},
      {"TZ=Europe/London 30 1 * * *", "2021-10-31T00:30:00Z", "2021-10-31T01:30:00Z"},
      {"TZ=Europe/London 0 0 * * *", "2021-03-27T12:00:00Z", "2021-03-28T00:00:00Z"},
      // Australia/Lord_Howe: a 30-minute shift (+10:30 <-> +11).
      {"TZ=Australia/Lord_Howe 15 2 * * *", "2021-10-02T12:00:00Z", "2021-10-03T15:15:00Z"},
      {"TZ=Australia/Lord_Howe 45 1 * * *", "2021-04-03T12:00:00Z", "2021-04-03T14:45:00Z"},
      {"TZ=Australia/Lord_Howe 45 1 * * *", "2021-04-03T14:45:00Z", "2021-04-03T15:15:00Z"},
      {"TZ=Australia/Lord_Howe 30 1 * * *", "2021-04-03T14:00:00Z", "2021-04-03T14:30:00Z"},
      {"TZ=Australia/Lord_Howe 0 * * * *", "2021-10-02T15:00:00Z", "2021-10-02T16:00:00Z"},
      // Asia/Kathmandu: +05:45, and the 1986 change from +05:30.
      {"TZ=Asia/Kathmandu 0 0 * * *", "2021-06-01T00:00:00Z", "2021-06-01T18:15:00Z"},
      {"TZ=Asia/Kathmandu */20 * * * *", "1985-12-31T18:00:00Z", "1985-12-31T18:10:00Z"},
      // America/Sao_Paulo 2018-11-04: midnight did not exist; that day has no 00:00 at all.
      {"TZ=America/Sao_Paulo 0 0 * * *", "2018-11-03T12:00:00Z", "2018-11-05T02:00:00Z"},
      {"TZ=America/Sao_Paulo 30 0 4 11 *", "2018-11-01T00:00:00Z", "2019-11-04T03:30:00Z"},
      {"TZ=America/Sao_Paulo 0 0 * * 0", "2018-10-30T00:00:00Z", "2018-11-11T02:00:00Z"},
      // America/Havana and Asia/Beirut change at midnight too.
      {"TZ=America/Havana 0 0 * * *", "2021-03-13T12:00:00Z", "2021-03-15T04:00:00Z"},
      {"TZ=Asia/Beirut 0 0 * * *", "2021-03-27T12:00:00Z", "2021-03-28T21:00:00Z"},
      // Pacific/Apia skipped 2011-12-30 entirely.
      {"TZ=Pacific/Apia 0 12 * * *", "2011-12-29T12:00:00Z", "2011-12-29T22:00:00Z"},
      {"TZ=Pacific/Chatham 0 3 * * *", "2021-09-25T12:00:00Z", "2021-09-26T13:15:00Z"},
  };
  ExpectAll(cases, std::size(cases));
}

// Deviations from robfig (docs/schedule.md): robfig's own answer is kept visible through
// RobfigNext, and Next returns the correct one.
TEST(ScheduleNextTest, RobfigBugsAreCorrected) {
  struct Case {
    const char* spec;
    const char* from;
    const char* robfig;
    const char* want;
  };
  const Case cases[] = {
      // Chatham springs forward at 02:45 (+12:45 -> +13:45): robfig lands on 03:50 for "50 2".
      {"TZ=Pacific/Chatham 50 2 * * *", "2021-09-25T12:00:00Z", "2021-09-25T14:05:00Z",
       "2021-09-26T13:05:00Z"},
      // St. John's ended DST at 00:01 local in 2008 (-02:30 -> -03:30): robfig returns its input.
      {"CRON_TZ=America/St_Johns 54,22,48,6 * 30,8,17,2 9-12 *", "2008-11-02T02:36:00Z",
       "2008-11-02T02:36:00Z", "2008-11-02T03:36:00Z"},
  };
  for (const auto& c : cases) {
    auto s = ParseStandard(c.spec, Db());
    ASSERT_TRUE(s.ok()) << c.spec;
    const auto* spec = dynamic_cast<const SpecSchedule*>(s->get());
    ASSERT_NE(spec, nullptr);
    const Time from = *ParseRfc3339(c.from);
    bool runaway = false;
    const auto robfig = spec->RobfigNext(from.unix_seconds(), &runaway);
    ASSERT_TRUE(robfig.has_value()) << c.spec;
    EXPECT_EQ(FormatRfc3339(Time::FromUnix(*robfig)), c.robfig) << c.spec;
    EXPECT_EQ(NextOf(c.spec, c.from), c.want) << c.spec;
  }
}

// robfig v3.0.1 never returns here (Go's loop does not terminate); cronledger answers correctly.
TEST(ScheduleNextTest, RobfigNonTerminationGetsCorrectAnswer) {
  EXPECT_EQ(NextOf("TZ=Pacific/Apia */43 22 27,31,3 12 */1", "2011-12-30T01:29:33Z"),
            "2011-12-31T08:00:00Z");
}

TEST(ScheduleNextTest, ChainsNeverGoBackwards) {
  const char* specs[] = {"*/7 * * * *", "0 0 * * *", "30 1,2 * * *", "0 */3 * * 0", "@weekly"};
  const char* zones[] = {"America/New_York",  "Australia/Lord_Howe", "Pacific/Chatham",
                         "America/Sao_Paulo", "Europe/London",       "Asia/Gaza"};
  for (const char* zone : zones) {
    for (const char* spec : specs) {
      auto s = ParseStandard(std::string("TZ=") + zone + " " + spec, Db());
      ASSERT_TRUE(s.ok());
      Time t = *ParseRfc3339("2018-01-01T00:00:00Z");
      for (int i = 0; i < 3000; ++i) {
        auto n = (*s)->Next(t);
        ASSERT_TRUE(n.has_value());
        ASSERT_GT(*n, t) << zone << " " << spec;
        t = *n;
      }
    }
  }
}

}  // namespace
}  // namespace cronledger::reconciler
