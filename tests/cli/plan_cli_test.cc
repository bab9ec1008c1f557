#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "model/json.h"
#include "tests/testing/cli.h"

namespace cronledger {
namespace {

std::string Samples() { return cli_test::SourceDir() + "/deploy/samples"; }

TEST(PlanCli, JsonListsEverySampleWithZoneAwareTimes) {
  const cli_test::CliResult r =
      cli_test::Cli("plan " + Samples() + " --from 2027-03-13T00:00:00Z -n 2 -o json");
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
  EXPECT_EQ(cli_test::Cli("plan").exit_code, 2);
  EXPECT_EQ(cli_test::Cli("plan " + Samples() + " -n -1").exit_code, 2);
  EXPECT_EQ(cli_test::Cli("plan " + Samples() + " --from yesterday").exit_code, 2);
  EXPECT_EQ(cli_test::Cli("plan /nonexistent/manifests").exit_code, 2);
  EXPECT_EQ(cli_test::Cli("no-such-command").exit_code, 2);
}

}  // namespace
}  // namespace cronledger
