// `cronledger schedule` end to end: runs the built binary (docs/design.md §4 contract).
#include "tests/testing/cli.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "tests/schedule/tzdata.h"

#ifndef CRONLEDGER_BINARY
#error "CRONLEDGER_BINARY must name the cronledger executable"
#endif

namespace {

using cronledger::cli_test::CliResult;

// Runs `cronledger schedule ARGS` with `stdin_text` on standard input; stderr is discarded. The
// zones come from the tz database shipped with the tests, whose answers the expectations hold.
CliResult Schedule(const std::string& args, const std::string& stdin_text = "") {
  cronledger::cli_test::CliOptions options;
  options.stdin_text = stdin_text;
  return cronledger::cli_test::RunShell(
      CRONLEDGER_BINARY,
      "schedule --zoneinfo-dir " +
          cronledger::cli_test::ShellQuote(cronledger::tzdata_test::TestZoneinfoDir()) + " " + args,
      options);
}

TEST(ScheduleCliTest, JsonNextTimes) {
  const CliResult r = Schedule(
      "--schedule '30 2 * * *' --time-zone America/New_York --from 2021-03-13T12:00:00Z -n 3 "
      "--output json");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "{\"next\":[\"2021-03-15T06:30:00Z\",\"2021-03-16T06:30:00Z\","
            "\"2021-03-17T06:30:00Z\"]}\n");
}

TEST(ScheduleCliTest, ShortOutputFlagAndDefaultCount) {
  const CliResult r = Schedule("--schedule '@hourly' --from 2021-01-01T00:00:00Z -o json");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "{\"next\":[\"2021-01-01T01:00:00Z\",\"2021-01-01T02:00:00Z\","
            "\"2021-01-01T03:00:00Z\",\"2021-01-01T04:00:00Z\",\"2021-01-01T05:00:00Z\"]}\n");
}

TEST(ScheduleCliTest, TzInScheduleIgnoresTimeZone) {
  // docs/semantics.md §6.5: the schedule's own TZ= wins; timeZone is ignored.
  const CliResult r = Schedule(
      "--schedule 'TZ=UTC 0 * * * ?' --time-zone America/New_York --from 2016-05-19T09:30:00Z "
      "-n 1 -o json");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "{\"next\":[\"2016-05-19T10:00:00Z\"]}\n");
}

TEST(ScheduleCliTest, GivingUpEndsTheList) {
  const CliResult r = Schedule("--schedule '0 0 29 2 *' --from 2021-01-01T00:00:00Z -n 3 -o json");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out,
            "{\"next\":[\"2024-02-29T00:00:00Z\",\"2028-02-29T00:00:00Z\","
            "\"2032-02-29T00:00:00Z\"]}\n");
  const CliResult never = Schedule("--schedule '59 23 31 2 *' --from 2021-01-01T00:00:00Z -o json");
  EXPECT_EQ(never.exit_code, 0);
  EXPECT_EQ(never.out, "{\"next\":[]}\n");
}

TEST(ScheduleCliTest, InvalidScheduleAndZoneExitTwo) {
  const CliResult bad = Schedule("--schedule '61 * * * *' --from 2021-01-01T00:00:00Z -o json");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.out, "{\"error\":\"end of range (61) above maximum (59): 61\"}\n");
  const CliResult zone = Schedule(
      "--schedule '0 * * * *' --time-zone Mars/Olympus --from 2021-01-01T00:00:00Z "
      "--output json");
  EXPECT_EQ(zone.exit_code, 2);
  // The controller's own UnknownTimeZone message (reconciler::CheckTimeZone).
  EXPECT_EQ(zone.out,
            "{\"error\":\"invalid timeZone: \\\"Mars/Olympus\\\": unknown time zone "
            "Mars/Olympus\"}\n");
  const CliResult panic = Schedule("--schedule 'TZ=UTC' --from 2021-01-01T00:00:00Z --output json");
  EXPECT_EQ(panic.exit_code, 2);
  EXPECT_NE(panic.out.find("invalid schedule format"), std::string::npos);
  const CliResult count = Schedule("--schedule '@daily' --from 2021-01-01T00:00:00Z -n -1 -o json");
  EXPECT_EQ(count.exit_code, 2);
  EXPECT_NE(count.out.find("\"error\""), std::string::npos);
  const CliResult huge =
      Schedule("--schedule '@daily' --from 2021-01-01T00:00:00Z -n 99999999 -o json");
  EXPECT_EQ(huge.exit_code, 2);
}

TEST(ScheduleCliTest, HumanTableShowsBothZones) {
  const CliResult r =
      Schedule("--schedule '0 9 * * *' --time-zone Europe/Rome --from 2016-05-19T00:00:00Z -n 1");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("2016-05-19T07:00:00Z"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2016-05-19T09:00:00+02:00"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Europe/Rome"), std::string::npos) << r.out;
}

TEST(ScheduleCliTest, StdinAnswersEveryLineInOrder) {
  std::string input;
  std::string want;
  for (int i = 0; i < 200; ++i) {
    if (i % 50 == 7) {
      input += "{\"schedule\":\"99 * * * *\",\"from\":\"2021-01-01T00:00:00Z\"}\n";
      want += "{\"error\":\"end of range (99) above maximum (59): 99\"}\n";
    } else if (i % 50 == 9) {
      input += "not json\n";
      want += "ERROR\n";
    } else {
      const int minute = i % 60;
      input += "{\"schedule\":\"" + std::to_string(minute) +
               " * * * *\",\"timeZone\":\"Asia/Kolkata\",\"from\":\"2021-01-01T00:00:00Z\","
               "\"n\":2}\n";
      // Kolkata is +05:30, so `from` is 05:30 local: local minute m comes next at 00:(m-30)Z when
      // m > 30, else at 00:(m+30)Z (m = 30 gives 01:00Z).
      const int utc_minutes = minute > 30 ? minute - 30 : minute + 30;
      char first[32];
      char second[32];
      std::snprintf(first, sizeof(first), "2021-01-01T%02d:%02d:00Z", utc_minutes / 60,
                    utc_minutes % 60);
      std::snprintf(second, sizeof(second), "2021-01-01T%02d:%02d:00Z", utc_minutes / 60 + 1,
                    utc_minutes % 60);
      want += std::string("{\"next\":[\"") + first + "\",\"" + second + "\"]}\n";
    }
  }
  const CliResult r = Schedule("--stdin", input);
  EXPECT_EQ(r.exit_code, 0);
  // Compare line by line; malformed-JSON lines only need to be errors.
  size_t a = 0;
  size_t b = 0;
  int line = 0;
  while (a < r.out.size() && b < want.size()) {
    const size_t ea = r.out.find('\n', a);
    const size_t eb = want.find('\n', b);
    const std::string got = r.out.substr(a, ea - a);
    const std::string exp = want.substr(b, eb - b);
    if (exp == "ERROR") {
      EXPECT_EQ(got.rfind("{\"error\":", 0), 0u) << "line " << line << ": " << got;
    } else {
      EXPECT_EQ(got, exp) << "line " << line;
    }
    a = ea + 1;
    b = eb + 1;
    ++line;
  }
  EXPECT_EQ(line, 200);
  EXPECT_EQ(a, r.out.size());
}

}  // namespace
