// `cronledger version` and `cronledger --version` end to end: the version and the tz database
// release, read from the zoneinfo directory's tzdata.zi.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "model/build_info.h"
#include "model/json.h"
#include "model/timezone_version.h"
#include "tests/schedule/tzdata.h"
#include "tests/testing/cli.h"

#ifndef CRONLEDGER_BINARY
#error "CRONLEDGER_BINARY must name the cronledger executable"
#endif

namespace cronledger {
namespace {

using cli_test::CliResult;
using cli_test::ShellQuote;

CliResult Cronledger(const std::string& args) {
  cli_test::CliOptions options;
  options.stderr_mode = cli_test::Stderr::kCapture;
  return cli_test::RunShell(CRONLEDGER_BINARY, args, options);
}

std::string Shipped() { return ShellQuote(tzdata_test::TestZoneinfoDir()); }

TEST(VersionCliTest, PrintsVersionAndTzdataRelease) {
  const std::string want = "cronledger " + std::string(model::CronledgerVersion()) +
                           "\ntzdata 2025b (" + tzdata_test::TestZoneinfoDir() + ")\n";
  for (const char* command : {"version", "--version"}) {
    const CliResult r = Cronledger(std::string(command) + " --zoneinfo " + Shipped());
    EXPECT_EQ(r.exit_code, 0) << command << ": " << r.err;
    EXPECT_EQ(r.out, want) << command;
  }
}

TEST(VersionCliTest, JsonOutput) {
  const CliResult r = Cronledger("version -o json --zoneinfo " + Shipped());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = model::ParseJson(r.out);
  ASSERT_TRUE(json.ok()) << r.out;
  EXPECT_EQ(*json, model::Json({{"version", std::string(model::CronledgerVersion())},
                                {"tzdata", "2025b"},
                                {"zoneinfo", tzdata_test::TestZoneinfoDir()}}));
}

TEST(VersionCliTest, UnknownReleaseSaysWhy) {
  std::string dir = ::testing::TempDir() + "zoneinfo-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  CliResult r = Cronledger("version --zoneinfo " + ShellQuote(dir));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "cronledger " + std::string(model::CronledgerVersion()) +
                       "\ntzdata unknown (no " + dir + "/tzdata.zi)\n");
  std::ofstream(dir + "/tzdata.zi") << "# Theory and pragmatics of the tz code and data\n";
  r = Cronledger("version -o json --zoneinfo " + ShellQuote(dir));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto json = model::ParseJson(r.out);
  ASSERT_TRUE(json.ok()) << r.out;
  EXPECT_EQ((*json)["tzdata"], "unknown");
  EXPECT_EQ((*json)["tzdataError"], dir + "/tzdata.zi does not start with a \"# version\" line");
  std::filesystem::remove_all(dir);
}

// Without --zoneinfo: the host's /usr/share/zoneinfo, whose release this test cannot know; it
// must be reported the way ReadTzdataVersion reads it.
TEST(VersionCliTest, DefaultsToTheHostDatabase) {
  const CliResult r = Cronledger("version -o json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto json = model::ParseJson(r.out);
  ASSERT_TRUE(json.ok()) << r.out;
  EXPECT_EQ((*json)["zoneinfo"], "/usr/share/zoneinfo");
  auto host = model::ReadTzdataVersion("/usr/share/zoneinfo");
  EXPECT_EQ((*json)["tzdata"], host.ok() ? *host : "unknown");
}

TEST(VersionCliTest, HelpAndBadFlags) {
  CliResult r = Cronledger("version --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.find("usage: cronledger version"), 0u) << r.out;
  r = Cronledger("version -o yaml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--output must be table or json, got yaml"), std::string::npos) << r.err;
  r = Cronledger("version extra");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unexpected argument extra"), std::string::npos) << r.err;
  r = Cronledger("help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("  version    print the cronledger version and the tz database release\n"),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace cronledger
