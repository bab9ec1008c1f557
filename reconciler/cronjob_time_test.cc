// Ported from upstream utils_test.go (TestMostRecentScheduleTime, TestNextScheduleTime,
// TestNextScheduleTimeDuration), as data.
#include "reconciler/cronjob_time.h"

#include <gtest/gtest.h>

#include "reconciler/decide_test_util.h"

namespace cronledger::reconciler {
namespace {

using namespace std::chrono_literals;
using testing::AfterTop;
using testing::CronJobWith;
using testing::Parse;
using testing::Top;

struct MostRecentRow {
  const char* name;
  const char* schedule;
  Duration created;                       // relative to top of the hour
  std::optional<Duration> last_schedule;  // relative to top of the hour
  std::optional<int64_t> deadline;
  bool include_deadline;
  Duration now;
  Duration want_earliest;
  std::optional<Duration> want_recent;
  Missed want_missed;
  bool want_error;
};

const MostRecentRow kMostRecentRows[] = {
    {"now before next schedule", "0 * * * *", 0s, {}, {}, false, 30s, 0s, {}, Missed::kNone, false},
    {"now just after next schedule",
     "0 * * * *",
     0s,
     {},
     {},
     false,
     61min,
     0s,
     60min,
     Missed::kNone,
     false},
    {"missed 5 schedules",
     "0 * * * *",
     10s,
     {},
     {},
     false,
     301min,
     10s,
     300min,
     Missed::kFew,
     false},
    {"complex schedule",
     "30 6-16/4 * * 1-5",
     0s,
     30min,
     {},
     false,
     24h + 31min,
     30min,
     24h + 30min,
     Missed::kFew,
     false},
    {"another complex schedule",
     "30 10,11,12 * * 1-5",
     0s,
     30min,
     {},
     false,
     30h + 30min,
     30min,
     {},
     Missed::kFew,
     false},
    {"complex schedule with longer diff between executions",
     "30 6-16/4 * * 1-5",
     0s,
     30min,
     {},
     false,
     96h + 31min,
     30min,
     96h + 30min,
     Missed::kFew,
     false},
    {"complex schedule with shorter diff between executions",
     "30 6-16/4 * * 1-5",
     0s,
     {},
     {},
     false,
     24h + 31min,
     0s,
     24h + 30min,
     Missed::kFew,
     false},
    {"@every schedule", "@every 1h", -59min, 1min, 10, false, 7 * 24h, 1min, 6 * 24h + 23h + 1min,
     Missed::kMany, false},
    {"rogue cronjob", "59 23 31 2 *", 10s, {}, {}, false, 1h, 0s, {}, Missed::kNone, true},
    {"earliestTime being CreationTimestamp and LastScheduleTime",
     "0 * * * *",
     0s,
     0s,
     {},
     false,
     30s,
     0s,
     {},
     Missed::kNone,
     false},
    {"earliestTime being LastScheduleTime",
     "*/5 * * * *",
     0s,
     30min,
     {},
     false,
     31min,
     30min,
     {},
     Missed::kNone,
     false},
    {"earliestTime being LastScheduleTime (within StartingDeadlineSeconds)",
     "*/5 * * * *",
     0s,
     30min,
     60,
     false,
     31min,
     30min,
     {},
     Missed::kNone,
     false},
    {"earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)",
     "*/5 * * * *",
     0s,
     30min,
     60,
     true,
     32min,
     31min,
     {},
     Missed::kNone,
     false},
};

TEST(UpstreamMostRecentScheduleTime, AllRows) {
  for (const auto& row : kMostRecentRows) {
    SCOPED_TRACE(row.name);
    auto cj = CronJobWith(row.schedule, AfterTop(row.created), std::nullopt);
    if (row.last_schedule) cj.status.last_schedule_time = AfterTop(*row.last_schedule);
    cj.spec.starting_deadline_seconds = row.deadline;
    auto sched = Parse(row.schedule);
    ASSERT_NE(sched, nullptr);
    auto got = MostRecentScheduleTime(cj, AfterTop(row.now), *sched, row.include_deadline);
    if (row.want_error) {
      ASSERT_FALSE(got.ok());
      EXPECT_EQ(got.status().message(),
                "time difference between two schedules is less than 1 second");
      continue;
    }
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    EXPECT_EQ(got->earliest, AfterTop(row.want_earliest));
    EXPECT_EQ(got->most_recent.has_value(), row.want_recent.has_value());
    if (got->most_recent && row.want_recent) {
      EXPECT_EQ(*got->most_recent, AfterTop(*row.want_recent));
    }
    EXPECT_EQ(got->missed, row.want_missed);
  }
}

struct DurationRow {
  const char* name;
  const char* schedule;
  std::optional<Duration> last_schedule;
  Duration now;
  Duration want;
};

const DurationRow kDurationRows[] = {
    {"complex schedule skipping weekend", "30 6-16/4 * * 1-5", 30min, 24h + 31min,
     3h + 59min + kNextScheduleDelta},
    {"another complex schedule skipping weekend", "30 10,11,12 * * 1-5", 30min, 30h + 30min,
     66h + kNextScheduleDelta},
    {"once a week cronjob, missed two runs", "0 12 * * 4", 2h, 19 * 24h + 1h + 30min,
     48h + 30min + kNextScheduleDelta},
    {"no previous run of a cronjob", "0 12 * * 5", {}, 6h, 20h + kNextScheduleDelta},
};

TEST(UpstreamNextScheduleTimeDuration, AllRows) {
  for (const auto& row : kDurationRows) {
    SCOPED_TRACE(row.name);
    auto cj = CronJobWith(row.schedule, Top(), std::nullopt);
    if (row.last_schedule) cj.status.last_schedule_time = AfterTop(*row.last_schedule);
    auto sched = Parse(row.schedule);
    ASSERT_NE(sched, nullptr);
    const Duration got = NextScheduleTimeDuration(cj, AfterTop(row.now), *sched);
    EXPECT_GE(got, Duration(0));
    EXPECT_EQ(got, row.want);
  }
}

TEST(NextScheduleTimeDuration, YearOneSaturatesInsteadOfOverflowing) {
  auto cj = CronJobWith("0 * * * ?", testing::T("2016-05-19T08:59:00Z"),
                        testing::T("2016-05-19T09:01:00Z"));
  cj.spec.starting_deadline_seconds = 0;
  auto sched = Parse("0 * * * ?");
  ASSERT_NE(sched, nullptr);
  EXPECT_EQ(NextScheduleTimeDuration(cj, Time::GoZero(), *sched), kMaxDuration);
}

// upstream TestNextScheduleTime, cases 1-8 (hourly schedule; T1 = top of the hour, T2 = T1+1h).
TEST(UpstreamNextScheduleTime, Cases) {
  auto sched = Parse("0 * * * ?");
  ASSERT_NE(sched, nullptr);
  const Time t1 = Top();
  const Time t2 = AfterTop(1h);
  auto cj = CronJobWith("0 * * * ?", t1.Add(-10min), std::nullopt);
  // Case 1: no known start times, and none needed yet.
  EXPECT_FALSE(NextScheduleTime(cj, t1.Add(-7min), *sched)->scheduled);
  // Case 2: no known start times, and one needed.
  EXPECT_EQ(NextScheduleTime(cj, t1.Add(2s), *sched)->scheduled, t1);
  // Case 3: known LastScheduleTime, no start needed.
  cj.status.last_schedule_time = t1;
  EXPECT_FALSE(NextScheduleTime(cj, t1.Add(2min), *sched)->scheduled);
  // Case 4: known LastScheduleTime, a start needed.
  EXPECT_EQ(NextScheduleTime(cj, t2.Add(5min), *sched)->scheduled, t2);
  // Case 5: known LastScheduleTime, two starts needed.
  cj.metadata.creation_timestamp = t1.Add(-2h);
  cj.status.last_schedule_time = t1.Add(-1h);
  EXPECT_EQ(NextScheduleTime(cj, t2.Add(5min), *sched)->scheduled, t2);
  // Case 6: now is way way ahead of last start time, and there is no deadline.
  auto far = NextScheduleTime(cj, t2.Add(10 * 24h), *sched);
  ASSERT_TRUE(far.ok());
  EXPECT_TRUE(far->scheduled);
  EXPECT_TRUE(far->too_many_missed);
  // Case 7: way ahead, but there is a short deadline.
  cj.spec.starting_deadline_seconds = 2 * 60 * 60;
  auto bounded = NextScheduleTime(cj, t2.Add(10 * 24h), *sched);
  ASSERT_TRUE(bounded.ok());
  EXPECT_TRUE(bounded->scheduled);
  EXPECT_FALSE(bounded->too_many_missed);
  // Case 8: the error from mostRecentScheduleTime gets populated up.
  cj.metadata.creation_timestamp = t1.Add(10s);
  cj.status.last_schedule_time.reset();
  cj.spec.starting_deadline_seconds.reset();
  auto rogue = Parse("59 23 31 2 *");
  ASSERT_NE(rogue, nullptr);
  EXPECT_FALSE(NextScheduleTime(cj, AfterTop(1h), *rogue).ok());
}

// Without a creationTimestamp earliest is Go's zero time: the estimate leaves a walk of millions of
// steps, which is shortcut without changing the answer.
TEST(MostRecentScheduleTime, ZeroCreationTimeIsCheapAndExact) {
  const Time now = testing::T("2016-05-22T13:14:55Z");
  auto cron = CronJobWith("@hourly", std::nullopt, std::nullopt);
  auto hourly = Parse("@hourly");
  ASSERT_NE(hourly, nullptr);
  auto got = MostRecentScheduleTime(cron, now, *hourly, false);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->earliest, Time::GoZero());
  EXPECT_EQ(got->most_recent, testing::T("2016-05-22T13:00:00Z"));
  EXPECT_EQ(got->missed, Missed::kMany);
  // @every anchors at Go's zero time + k * delay; 2016-05-22T13:00:00Z is such an instant for 1h.
  auto every = CronJobWith("@every 1h", std::nullopt, std::nullopt);
  auto delay = Parse("@every 1h");
  ASSERT_NE(delay, nullptr);
  got = MostRecentScheduleTime(every, now, *delay, false);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->most_recent, testing::T("2016-05-22T13:00:00Z"));
  // 7 minutes does not divide the span evenly: the anchor shows through.
  auto every7 = CronJobWith("@every 7m", std::nullopt, std::nullopt);
  auto delay7 = Parse("@every 7m");
  ASSERT_NE(delay7, nullptr);
  got = MostRecentScheduleTime(every7, now, *delay7, false);
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(got->most_recent.has_value());
  EXPECT_EQ((got->most_recent->unix_seconds() - Time::GoZero().unix_seconds()) % 420, 0);
  EXPECT_LE(*got->most_recent, now);
  EXPECT_GT(got->most_recent->AddSeconds(420), now);
}

TEST(GoArithmetic, RoundAndWholeSeconds) {
  EXPECT_EQ(GoRound(1500ms, 1s), 2s);
  EXPECT_EQ(GoRound(1499ms, 1s), 1s);
  EXPECT_EQ(GoRound(-1500ms, 1s), -2s);
  EXPECT_EQ(GoRound(kMaxDuration, 1s), kMaxDuration);
  EXPECT_EQ(GoWholeSeconds(3599999ms), 3599);
  EXPECT_EQ(GoWholeSeconds(-1500ms), -1);
  EXPECT_EQ(GoSeconds(60), 60s);
  // Go's time.Duration(x) * time.Second wraps; so does ours (no UB, same value).
  EXPECT_EQ(GoSeconds(INT64_MAX).count(), static_cast<int64_t>(UINT64_C(0xFFFFFFFFC4653600)));
}

}  // namespace
}  // namespace cronledger::reconciler
