#include "app/log.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <string>

#include "model/json.h"

namespace cronledger::app {
namespace {

// Captures what a Logger writes.
class Captured {
 public:
  Captured() : file_(std::tmpfile()) {}
  ~Captured() { std::fclose(file_); }
  std::FILE* file() { return file_; }
  std::string Text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, file_)) > 0;) out.append(buf, n);
    return out;
  }

 private:
  std::FILE* file_;
};

const Time kNow = Time::FromUnix(1'764'258'060, 123'456'789);  // 2025-11-27T15:41:00.123456789Z

TEST(Log, JsonLinesCarryTimestampLevelLoggerAndMessage) {
  Captured out;
  ManualClock clock(kNow);
  Logger log(out.file(), clock, {LogFormat::kJson, 0});
  log.Info("run", "watching \"cronjobs\"");
  log.Warning("run", "kafka outbox: broker down");
  log.Error("", "boom");
  std::istringstream lines(out.Text());
  std::string line;
  const char* want_levels[] = {"info", "warn", "error"};
  int n = 0;
  while (std::getline(lines, line)) {
    auto j = model::ParseJson(line);
    ASSERT_TRUE(j.ok()) << line;
    EXPECT_EQ((*j)["ts"], "2025-11-27T15:41:00.123Z") << line;
    ASSERT_LT(n, 3);
    EXPECT_EQ((*j)["level"], want_levels[n]) << line;
    ++n;
  }
  EXPECT_EQ(n, 3);
  EXPECT_NE(out.Text().find("\"msg\":\"watching \\\"cronjobs\\\"\""), std::string::npos);
  EXPECT_NE(out.Text().find("\"logger\":\"run\""), std::string::npos);
}

TEST(Log, TextLinesStartWithTimestampAndLevel) {
  Captured out;
  ManualClock clock(Time::FromUnix(1'764'258'060));
  Logger log(out.file(), clock, {});
  log.Info("relay", "stopped");
  log.Error("relay", "no brokers");
  EXPECT_EQ(out.Text(),
            "2025-11-27T15:41:00.000Z INFO relay: stopped\n"
            "2025-11-27T15:41:00.000Z ERROR relay: no brokers\n");
}

TEST(Log, VerbosityIsKlogs) {
  Captured out;
  ManualClock clock(kNow);
  Logger log(out.file(), clock, {LogFormat::kText, 2});
  log.V(2, "x", "two");
  log.V(3, "x", "three");
  EXPECT_TRUE(log.VEnabled(2));
  EXPECT_FALSE(log.VEnabled(3));
  EXPECT_NE(out.Text().find("two"), std::string::npos);
  EXPECT_EQ(out.Text().find("three"), std::string::npos);
}

TEST(Log, GlobalFlagsAreTakenOutOfTheArguments) {
  LogOptions o;
  auto rest =
      TakeLogFlags({"--data-dir", "d", "--log-format", "json", "-v=3", "--", "-v", "x"}, &o);
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(*rest, (std::vector<std::string>{"--data-dir", "d", "--", "-v", "x"}));
  EXPECT_EQ(o.format, LogFormat::kJson);
  EXPECT_EQ(o.verbosity, 3);
  LogOptions p;
  ASSERT_TRUE(TakeLogFlags({"--log-format=text", "--v", "1"}, &p).ok());
  EXPECT_EQ(p.format, LogFormat::kText);
  EXPECT_EQ(p.verbosity, 1);
  for (const auto& bad : std::vector<std::vector<std::string>>{
           {"--log-format", "xml"}, {"-v", "-1"}, {"-v", "many"}, {"--log-format"}}) {
    LogOptions q;
    EXPECT_TRUE(TakeLogFlags(bad, &q).status().IsInvalidArgument()) << bad[0];
  }
}

}  // namespace
}  // namespace cronledger::app
