// Differential conformance against robfig/cron v3.0.1 itself: data/robfig_golden.jsonl holds the
// answers of the Go library (oracle/main.go) for thousands of schedules, zones and start times,
// mostly next to DST transitions. Every result must equal robfig's, except the results the
// oracle flagged as robfig bugs (not after the input, or not matching the schedule), where the
// engine must give the correct answer instead (docs/schedule.md, "Deviations from robfig").
// The zones are read from the tz database release the corpus was made with
// (tests/schedule/tzdata.h).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include "model/json.h"
#include "model/time.h"
#include "model/timezone_version.h"
#include "reconciler/cron_spec.h"
#include "reconciler/schedule.h"
#include "tests/schedule/tzdata.h"

namespace cronledger::reconciler {
namespace {

std::string GoldenPath() {
  const char* root = std::getenv("CRONLEDGER_SOURCE_DIR");
  return std::string(root ? root : ".") + "/tests/schedule/golden/robfig_golden.jsonl";
}

// The database the vectors are computed with; Local = UTC, as the oracle runs with TZ=UTC.
const model::SystemTimeZoneDbOptions& DbOptions() {
  static const auto* options = new model::SystemTimeZoneDbOptions(tzdata_test::TestTzdataOptions());
  return *options;
}

const model::TimeZoneDb& Db() {
  static auto* db = [] {
    auto r = model::OpenSystemTimeZoneDb(DbOptions());
    CL_CHECK(r.ok());
    return std::move(r).value().release();
  }();
  return *db;
}

// True when some instant in (from, until) has a matching wall-clock reading: a brute-force scan
// over every wall-clock minute, independent of the engine's search.
bool SkipsAMatch(const SpecSchedule& s, int64_t from, int64_t until) {
  int64_t u = from + 1;
  while (u < until) {
    const int o = s.zone().OffsetAt(u);
    const int64_t w = u + o;
    const int64_t rem = ((w % 60) + 60) % 60;
    if (rem != 0) {
      u += 60 - rem;
      continue;
    }
    if (s.Matches(CivilFromUnix(u, o))) return true;
    u += 60;
  }
  return false;
}

struct Totals {
  int cases = 0;
  int errors = 0;
  int results = 0;
  int deviations = 0;
};

// The golden answers hold for one tz database release: the vectors must read that release, not
// the host's (whose updates revise future rules, e.g. Africa/Casablanca's from 2026f on).
TEST(ScheduleConformanceTest, ReadsTheCorpusTzdataRelease) {
  auto version = model::ReadTzdataVersion(DbOptions().zoneinfo_dir);
  ASSERT_TRUE(version.ok()) << version.status().ToString();
  EXPECT_EQ(*version, tzdata_test::kTestTzdataRelease);
}

TEST(ScheduleConformanceTest, MatchesRobfigV301) {
  std::ifstream in(GoldenPath());
  ASSERT_TRUE(in.is_open()) << GoldenPath();
  Totals totals;
  std::string line;
  while (std::getline(in, line)) {
    auto parsed = model::ParseJson(line);
    ASSERT_TRUE(parsed.ok()) << line;
    const model::Json& c = *parsed;
    const std::string spec = c.at("spec").get<std::string>();
    ++totals.cases;
    auto sched = ParseStandard(spec, Db());
    if (c.contains("error")) {
      ++totals.errors;
      ASSERT_FALSE(sched.ok()) << spec;
      EXPECT_EQ(sched.status().message(), c.at("error").get<std::string>()) << spec;
      continue;
    }
    ASSERT_TRUE(sched.ok()) << spec << ": " << sched.status().message();
    std::set<size_t> bugs;
    if (c.contains("bug")) {
      for (const auto& b : c.at("bug")) bugs.insert(b.get<size_t>());
    }
    const auto next = c.value("next", model::Json::array());
    Time input = *ParseRfc3339(c.at("from").get<std::string>());
    for (size_t i = 0; i < next.size(); ++i) {
      ++totals.results;
      const Time robfig = *ParseRfc3339(next[i].get<std::string>());
      const std::optional<Time> ours = (*sched)->Next(input);
      const std::string where = spec + " from " + FormatRfc3339Nano(input);
      if (bugs.count(i) == 0) {
        ASSERT_TRUE(ours.has_value()) << where;
        EXPECT_EQ(FormatRfc3339(*ours), FormatRfc3339(robfig)) << where;
      } else {
        ++totals.deviations;
        const auto* s = dynamic_cast<const SpecSchedule*>(sched->get());
        ASSERT_NE(s, nullptr) << where;
        ASSERT_TRUE(ours.has_value()) << where;
        EXPECT_GT(*ours, input) << where;
        const int64_t u = ours->unix_seconds();
        EXPECT_TRUE(s->Matches(CivilFromUnix(u, s->zone().OffsetAt(u)))) << where;
        EXPECT_FALSE(SkipsAMatch(*s, input.unix_seconds(), u)) << where;
        EXPECT_NE(FormatRfc3339(*ours), FormatRfc3339(robfig)) << where;
      }
      // Chains follow robfig's answers so that one deviation does not shift the rest.
      input = robfig;
    }
    if (next.size() < 6 && (next.empty() || bugs.count(next.size() - 1) == 0)) {
      // robfig gave up (zero time) on the next step: so must we.
      EXPECT_FALSE((*sched)->Next(input).has_value()) << spec << " from " << FormatRfc3339(input);
    }
  }
  std::printf("golden cases: %d (parse errors %d), results compared: %d, robfig deviations: %d\n",
              totals.cases, totals.errors, totals.results, totals.deviations);
  EXPECT_GT(totals.cases, 7000);
  EXPECT_GT(totals.deviations, 0);
}

}  // namespace
}  // namespace cronledger::reconciler
