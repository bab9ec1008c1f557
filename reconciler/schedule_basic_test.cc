#include <gtest/gtest.h>

#include "model/time.h"
#include "reconciler/schedule.h"

namespace cronledger::reconciler {
namespace {

const model::TimeZoneDb& Db() {
  static auto* db = [] {
    auto r = model::OpenSystemTimeZoneDb({});
    CL_CHECK(r.ok());
    return std::move(r).value().release();
  }();
  return *db;
}

std::string NextOf(const std::string& spec, const std::string& from) {
  auto s = ParseStandard(spec, Db());
  if (!s.ok()) return "error: " + s.status().message();
  auto n = (*s)->Next(*ParseRfc3339(from));
  return n ? FormatRfc3339(*n) : "none";
}

TEST(ScheduleBasicTest, Utc) {
  EXPECT_EQ(NextOf("*/5 * * * *", "2021-01-01T00:00:00Z"), "2021-01-01T00:05:00Z");
  EXPECT_EQ(NextOf("0 0 * * *", "2021-01-01T00:00:00Z"), "2021-01-02T00:00:00Z");
  EXPECT_EQ(NextOf("59 23 31 2 *", "2021-01-01T00:00:00Z"), "none");
  EXPECT_EQ(NextOf("@every 90s", "2021-01-01T00:00:00.5Z"), "2021-01-01T00:01:30Z");
  EXPECT_EQ(NextOf("TZ=America/New_York 30 2 * * *", "2021-03-13T12:00:00Z"),
            "2021-03-15T06:30:00Z");
}

}  // namespace
}  // namespace cronledger::reconciler
