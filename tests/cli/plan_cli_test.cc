#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "model/json.h"

namespace cronledger {
namespace {

struct RunResult {
  int exit_code;
  std::string out;
};

RunResult RunCli(const std::string& args) {
  const std::string cmd = std::string(CRONLEDGER_BIN) + " " + args + " 2>/dev/null";
  std::FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string Samples() {
  return std::string(std::getenv("CRONLEDGER_SOURCE_DIR")) + "/deploy/samples";
}

TEST(PlanCli, JsonListsEverySampleWithZoneAwareTimes) {
  const RunResult r = RunCli("plan " + Samples() + " --from 2027-03-13T00:00:00Z -n 2 -o json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = model::ParseJson(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  ASSERT_EQ((*j)["items"].size(), 9u);
  for (const auto& item : (*j)["items"]) {
    if (item["cronJob"] == "finance/early-settlement") {
      // 02:30 New York does not exist on 2027-03-14 (spring forward): robfig skips that day.
      EXPECT_EQ(item["next"], (model::Json{"2027-03-13T07:30:00Z", "2027-03-15T06:30:00Z"}));
    }
    if (item["cronJob"] == "platform/legacy-migration") {
      EXPECT_EQ(item["suspend"], true);
    }
  }
}

TEST(PlanCli, BadFlagsAndPathsExitTwo) {
  EXPECT_EQ(RunCli("plan").exit_code, 2);
  EXPECT_EQ(RunCli("plan " + Samples() + " -n -1").exit_code, 2);
  EXPECT_EQ(RunCli("plan " + Samples() + " --from yesterday").exit_code, 2);
  EXPECT_EQ(RunCli("plan /nonexistent/manifests").exit_code, 2);
  EXPECT_EQ(RunCli("no-such-command").exit_code, 2);
}

}  // namespace
}  // namespace cronledger
