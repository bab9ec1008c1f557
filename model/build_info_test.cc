#include "model/build_info.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/schedule/tzdata.h"

namespace cronledger::model {
namespace {

// The version in the top-level CMakeLists.txt's project() call, read from the source tree.
std::string ProjectVersion() {
  const char* root = std::getenv("CRONLEDGER_SOURCE_DIR");
  std::ifstream in(std::string(root ? root : ".") + "/CMakeLists.txt");
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  const std::string key = "project(cronledger VERSION ";
  const size_t at = s.find(key);
  if (at == std::string::npos) return "";
  const size_t from = at + key.size();
  return s.substr(from, s.find_first_not_of("0123456789.", from) - from);
}

TEST(BuildInfoTest, VersionIsTheProjectVersion) {
  const std::string want = ProjectVersion();
  ASSERT_FALSE(want.empty()) << "no project(cronledger VERSION ...) in CMakeLists.txt";
  EXPECT_EQ(CronledgerVersion(), want);
}

TEST(BuildInfoTest, MetricNamesTheVersionAndTheTzdataRelease) {
  const std::string text = RenderBuildInfoMetric(tzdata_test::TestZoneinfoDir());
  EXPECT_EQ(text.find("# HELP cronledger_build_info "), 0u) << text;
  EXPECT_NE(text.find("\n# TYPE cronledger_build_info gauge\n"), std::string::npos) << text;
  const std::string sample = "\ncronledger_build_info{version=\"" +
                             std::string(CronledgerVersion()) + "\",tzdata=\"" +
                             tzdata_test::kTestTzdataRelease + "\"} 1\n";
  ASSERT_GE(text.size(), sample.size());
  EXPECT_EQ(text.substr(text.size() - sample.size()), sample) << text;
  EXPECT_EQ(TzdataLabel(tzdata_test::TestZoneinfoDir()), tzdata_test::kTestTzdataRelease);
}

TEST(BuildInfoTest, UnknownReleaseIsLabelledUnknown) {
  std::string dir = ::testing::TempDir() + "zoneinfo-XXXXXX";
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  EXPECT_EQ(TzdataLabel(dir), "unknown");
  EXPECT_NE(RenderBuildInfoMetric(dir).find(",tzdata=\"unknown\"} 1\n"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cronledger::model
