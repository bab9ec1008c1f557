#include "reconciler/schedule_memo.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/decision.h"
#include "model/json.h"
#include "reconciler/decide.h"
#include "reconciler/decide_test_util.h"

namespace cronledger::reconciler {
namespace {

using testing::T;
using testing::Tzdb;

// Next() over a run of instants, as text, or the parse error.
std::string Trace(const Result<std::shared_ptr<const Schedule>>& s) {
  if (!s.ok()) return "error: " + s.status().message();
  std::string out;
  std::optional<Time> t = T("2024-03-09T22:17:00Z");
  for (int i = 0; i < 12 && t; ++i) {
    t = (*s)->Next(*t);
    out += t ? FormatRfc3339(*t) : "none";
    out += ' ';
  }
  return out;
}

Result<std::shared_ptr<const Schedule>> Direct(const std::string& text,
                                               const model::TimeZoneDb& db) {
  CL_ASSIGN_OR_RETURN(std::unique_ptr<Schedule> s, ParseStandard(text, db));
  return std::shared_ptr<const Schedule>(std::move(s));
}

const std::vector<std::string> kSpecs = {"*/5 * * * *",
                                         "30 1 * * *",
                                         "TZ=America/New_York 30 1 * * *",
                                         "0 9 * * 1-5",
                                         "@hourly",
                                         "@every 90m",
                                         "CRON_TZ=Europe/Berlin 0 2 * 3 0",
                                         "bad spec",
                                         "61 * * * *",
                                         "TZ=Nowhere/Atlantis 0 * * * *",
                                         ""};

TEST(ScheduleMemo, GivesWhatParseStandardGivesAndParsesEachTextOnce) {
  ScheduleMemo memo;
  for (int round = 0; round < 3; ++round) {
    for (const auto& spec : kSpecs) {
      EXPECT_EQ(Trace(memo.Get(spec, Tzdb())), Trace(Direct(spec, Tzdb()))) << spec;
    }
  }
  size_t ok = 0;
  for (const auto& spec : kSpecs) ok += ParseStandard(spec, Tzdb()).ok() ? 1 : 0;
  EXPECT_EQ(memo.size(), ok);  // errors are not kept
  EXPECT_EQ(memo.misses(), ok + 3 * (kSpecs.size() - ok));
  auto a = memo.Get("*/5 * * * *", Tzdb());
  auto b = memo.Get("*/5 * * * *", Tzdb());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->get(), b->get());  // shared, not parsed again
}

TEST(ScheduleMemo, AnotherTextOrDatabaseIsAnotherSchedule) {
  model::SystemTimeZoneDbOptions ny_local;
  ny_local.local_zone = "America/New_York";
  auto ny = model::OpenSystemTimeZoneDb(ny_local);
  ASSERT_TRUE(ny.ok()) << ny.status().ToString();
  ScheduleMemo memo;
  const std::string spec = "0 9 * * *";
  auto utc = memo.Get(spec, Tzdb());
  auto local = memo.Get(spec, **ny);
  EXPECT_EQ(Trace(utc), Trace(Direct(spec, Tzdb())));
  EXPECT_EQ(Trace(local), Trace(Direct(spec, **ny)));
  EXPECT_NE(Trace(utc), Trace(local));
  EXPECT_NE(Trace(memo.Get("0 10 * * *", Tzdb())), Trace(utc));
  EXPECT_EQ(memo.size(), 3u);
}

TEST(ScheduleMemo, StaysWithinItsCapacity) {
  ScheduleMemo memo(2);
  for (int m = 0; m < 10; ++m) {
    const std::string spec = std::to_string(m) + " * * * *";
    EXPECT_EQ(Trace(memo.Get(spec, Tzdb())), Trace(Direct(spec, Tzdb()))) << spec;
    EXPECT_LE(memo.size(), 2u);
  }
}

// The memo's schedules keep Next's answers per thread: asked again and again, interleaved over
// more schedules and seconds than the cache holds, they answer what ParseStandard's schedules
// compute; schedules of a memo that started over (freed, their memory reused) keep their own.
TEST(ScheduleMemo, CachedAnswersAreTheComputedOnes) {
  const std::vector<std::string> specs = {"*/7 * * * *",
                                          "0 0 * * *",
                                          "30 1,2 * * *",
                                          "0 */3 * * 0",
                                          "@every 1h30m",
                                          "TZ=America/New_York 15 2 * * *",
                                          "TZ=Australia/Lord_Howe 0,30 * * * *"};
  ScheduleMemo memo;
  std::vector<std::shared_ptr<const Schedule>> cached;
  std::vector<std::unique_ptr<Schedule>> direct;
  for (const auto& spec : specs) {
    auto c = memo.Get(spec, Tzdb());
    auto d = ParseStandard(spec, Tzdb());
    ASSERT_TRUE(c.ok() && d.ok()) << spec;
    cached.push_back(*c);
    direct.push_back(std::move(*d));
  }
  const Time start = T("2019-03-09T23:00:00Z");  // spans a New York DST change
  constexpr int kSeconds = 300;                  // x 7 schedules: more than the cache holds
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < kSeconds; ++i) {
      const Time t = start.AddSeconds(i * 397);
      for (size_t k = 0; k < specs.size(); ++k) {
        ASSERT_EQ(cached[k]->Next(t), direct[k]->Next(t))
            << specs[k] << " at " << FormatRfc3339(t) << ", round " << round;
      }
    }
  }
  ScheduleMemo small(1);  // starts over at every new text: the previous schedule is freed
  for (int i = 0; i < 50; ++i) {
    const Time t = start.AddSeconds(i * 3600);
    const std::optional<Time> hourly = (*small.Get("0 * * * *", Tzdb()))->Next(t);
    const std::optional<Time> half_past = (*small.Get("30 * * * *", Tzdb()))->Next(t);
    ASSERT_TRUE(hourly && half_past);
    EXPECT_EQ(hourly->unix_seconds() % 3600, 0);
    EXPECT_EQ(half_past->unix_seconds() % 3600, 1800);
  }
}

std::string Encode(const Step& s) {
  std::string out;
  for (const auto& d : s.result.decisions) out += model::CanonicalDecisionBytes(d) + "\n";
  for (const auto& e : s.result.events) out += e.type + " " + e.reason + " " + e.message + "\n";
  out += model::DumpJson(model::EncodeCronJobStatus(s.result.status));
  out += s.result.requeue_after ? std::to_string(s.result.requeue_after->count()) : "-";
  out += model::AccountingStateBytes(s.result.accounting);
  if (s.next_call) out += model::DumpJson(model::EncodeApiCall(*s.next_call));
  return out;
}

TEST(ScheduleMemo, DecideGivesTheSameStepWithAndWithoutIt) {
  ScheduleMemo memo;
  const std::vector<std::string> schedules = {"*/5 * * * *", "0 * * * *", "bad spec",
                                              "TZ=UTC 0 * * * *"};
  const std::vector<std::optional<std::string>> zones = {std::nullopt, "Europe/Berlin",
                                                         "Nowhere/Atlantis"};
  size_t steps = 0;
  for (int round = 0; round < 2; ++round) {
    for (const auto& sched : schedules) {
      for (const auto& zone : zones) {
        for (bool suspend : {false, true}) {
          SyncInput in;
          in.cron_job =
              testing::CronJobWith(sched, T("2016-05-19T09:00:00Z"), T("2016-05-19T09:55:00Z"));
          in.cron_job.spec.time_zone = zone;
          in.cron_job.spec.suspend = suspend;
          in.now = T("2016-05-19T10:01:00Z");
          in.tzdb = &Tzdb();
          const std::string without = Encode(Decide(in));
          in.options.schedule_memo = &memo;
          EXPECT_EQ(Encode(Decide(in)), without) << sched << " " << zone.value_or("-");
          ++steps;
        }
      }
    }
  }
  EXPECT_EQ(steps, 2 * schedules.size() * zones.size() * 2);
  EXPECT_GT(memo.size(), 0u);
}

}  // namespace
}  // namespace cronledger::reconciler
