// Runs `cronledger decide` on every tests/decide/cases/*.json. A case is
//   {"input": <decide input object, or raw text>, "exitCode": N, "expect": <subset of the output>}
// where objects in "expect" must match key by key, arrays element by element (same length), and
// a string "~text" matches any output string containing text.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/json.h"
#include "tests/testing/cli.h"

namespace cronledger {
namespace {

using model::Json;

std::string ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

using cli_test::CliResult;

CliResult RunDecide(const std::string& input) {
  char path[] = "/tmp/cronledger-decide-XXXXXX";
  const int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, input.data(), input.size()), static_cast<ssize_t>(input.size()));
  close(fd);
  CliResult run = cli_test::Cli(std::string("decide --output json --input ") + path);
  unlink(path);
  return run;
}

void ExpectSubset(const Json& want, const Json& got, const std::string& path) {
  if (want.is_object()) {
    ASSERT_TRUE(got.is_object()) << path << ": " << got.dump();
    for (auto it = want.begin(); it != want.end(); ++it) {
      ASSERT_TRUE(got.contains(it.key()))
          << path << "." << it.key() << " missing in " << got.dump();
      ExpectSubset(*it, got[it.key()], path + "." + it.key());
    }
  } else if (want.is_array()) {
    ASSERT_TRUE(got.is_array()) << path;
    ASSERT_EQ(want.size(), got.size()) << path << ": " << got.dump();
    for (size_t i = 0; i < want.size(); ++i) {
      ExpectSubset(want[i], got[i], path + "[" + std::to_string(i) + "]");
    }
  } else if (want.is_string() && want.get<std::string>().rfind('~', 0) == 0) {
    // "~text": the output string contains text.
    ASSERT_TRUE(got.is_string()) << path;
    EXPECT_NE(got.get<std::string>().find(want.get<std::string>().substr(1)), std::string::npos)
        << path << ": " << got;
  } else {
    EXPECT_EQ(want, got) << path;
  }
}

TEST(DecideCli, Cases) {
  const char* root = std::getenv("CRONLEDGER_SOURCE_DIR");
  ASSERT_NE(root, nullptr);
  const std::filesystem::path dir = std::filesystem::path(root) / "tests/decide/cases";
  int cases = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().filename().string());
    ++cases;
    auto parsed = model::ParseJson(ReadFile(entry.path()));
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    const Json& c = *parsed;
    const std::string input =
        c["input"].is_string() ? c["input"].get<std::string>() : model::DumpJson(c["input"]);
    const CliResult run = RunDecide(input);
    EXPECT_EQ(run.exit_code, c.value("exitCode", 0)) << run.out;
    auto out = model::ParseJson(run.out);
    ASSERT_TRUE(out.ok()) << run.out;
    ExpectSubset(c["expect"], *out, "$");
    // Same input, same bytes (docs/design.md rule 4).
    EXPECT_EQ(RunDecide(input).out, run.out);
  }
  EXPECT_GE(cases, 8);
}

}  // namespace
}  // namespace cronledger
