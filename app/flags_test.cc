#include "app/flags.h"

#include <gtest/gtest.h>

namespace cronledger::app {
namespace {

TEST(Flags, ParsesValuesSwitchesAndPositionals) {
  Flags f;
  f.Value("output", "o").Value("set", "", /*repeatable=*/true).Switch("verify").Value("from");
  ASSERT_TRUE(f.Parse({"ns/name", "-o", "json", "--set=a=1", "--set", "b=2", "--verify", "--from=-",
                       "--", "--not-a-flag"})
                  .ok());
  EXPECT_EQ(f.Get("output"), "json");
  EXPECT_EQ(f.GetAll("set"), (std::vector<std::string>{"a=1", "b=2"}));
  EXPECT_TRUE(f.Has("verify"));
  EXPECT_EQ(f.Get("from"), "-");
  EXPECT_EQ(f.positionals(), (std::vector<std::string>{"ns/name", "--not-a-flag"}));
}

TEST(Flags, ErrorsAreSpecific) {
  struct Case {
    std::vector<std::string> args;
    const char* want;
  };
  const Case cases[] = {
      {{"--nope"}, "unknown flag --nope"},
      {{"--output"}, "flag --output needs a value"},
      {{"-o", "a", "-o", "b"}, "flag --output given more than once"},
      {{"--verify=maybe"}, "flag --verify takes true or false"},
  };
  for (const auto& c : cases) {
    Flags f;
    f.Value("output", "o").Switch("verify");
    Status s = f.Parse(c.args);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), c.want);
  }
}

TEST(Flags, SwitchCanBeTurnedOff) {
  Flags f;
  f.Switch("verify");
  ASSERT_TRUE(f.Parse({"--verify=false"}).ok());
  EXPECT_FALSE(f.Has("verify"));
}

}  // namespace
}  // namespace cronledger::app
