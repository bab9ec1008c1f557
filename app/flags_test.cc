#include "app/flags.h"

#include <gtest/gtest.h>

#include <limits>
#include <utility>

#include "app/support_kube.h"
#include "app/support_ledger.h"

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

TEST(Flags, UintReadsAWholeNumberInRangeOrTheFallback) {
  Flags f;
  f.Value("workers").Value("seed").Value("batch");
  ASSERT_TRUE(f.Parse({"--workers=32", "--seed", "18446744073709551615"}).ok());
  EXPECT_EQ(f.Uint("workers", 1, 999, 2).value(), 32u);
  EXPECT_EQ(f.Uint("seed", 0, std::numeric_limits<uint64_t>::max(), 7).value(),
            std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(f.Uint("batch", 1, 1000, 1024).value(), 1024u);  // absent: the fallback, unchecked
}

TEST(Flags, UintRejectsSignsFractionsSuffixesOverflowAndOutOfRange) {
  const std::pair<std::string, std::string> cases[] = {
      {"0", "--workers: a whole number from 1 to 999, not \"0\""},
      {"1000", "--workers: a whole number from 1 to 999, not \"1000\""},
      {"-1", "not \"-1\""},
      {"+3", "not \"+3\""},
      {" 3", "not \" 3\""},
      {"3.0", "not \"3.0\""},
      {"1e2", "not \"1e2\""},
      {"4k", "not \"4k\""},
      {"", "not \"\""},
      {"99999999999999999999999", "not \"99999999999999999999999\""},  // overflows uint64
  };
  for (const auto& [text, want] : cases) {
    Flags f;
    f.Value("workers");
    ASSERT_TRUE(f.Parse({"--workers", text}).ok());
    const auto r = f.Uint("workers", 1, 999, 2);
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(want), std::string::npos) << r.status().message();
  }
}

TEST(LedgerMemoryFlags, SetTheBudgetsGivenAndKeepTheDefaultsOtherwise) {
  Flags f;
  DeclareLedgerMemoryFlags(f);
  ASSERT_TRUE(f.Parse({"--ledger-write-buffer-mib=256"}).ok());
  store::LedgerOptions o;
  const size_t default_cache = o.block_cache_bytes;
  ASSERT_TRUE(ApplyLedgerMemoryFlags(f, o).ok());
  EXPECT_EQ(o.write_buffer_budget_bytes, size_t{256} << 20);
  EXPECT_EQ(o.block_cache_bytes, default_cache);

  Flags g;
  DeclareLedgerMemoryFlags(g);
  ASSERT_TRUE(g.Parse({"--ledger-write-buffer-mib", "0", "--ledger-block-cache-mib", "16"}).ok());
  store::LedgerOptions p;
  p.write_buffer_budget_bytes = 1;
  ASSERT_TRUE(ApplyLedgerMemoryFlags(g, p).ok());
  EXPECT_EQ(p.write_buffer_budget_bytes, 0u);  // 0: RocksDB's per-family defaults
  EXPECT_EQ(p.block_cache_bytes, size_t{16} << 20);
}

TEST(LedgerMemoryFlags, RejectWhatIsNotAWholeNumberOfMebibytesInRange) {
  struct Case {
    std::vector<std::string> args;
    const char* want;
  };
  const Case cases[] = {
      {{"--ledger-write-buffer-mib=-1"}, "--ledger-write-buffer-mib: a whole number of MiB from 0"},
      {{"--ledger-write-buffer-mib=1.5"}, "--ledger-write-buffer-mib: a whole number of MiB"},
      {{"--ledger-write-buffer-mib=2000000"}, "to 1048576, not \"2000000\""},
      {{"--ledger-block-cache-mib=0"}, "--ledger-block-cache-mib: a whole number of MiB from 1"},
      {{"--ledger-block-cache-mib=64M"}, "--ledger-block-cache-mib: a whole number of MiB"},
  };
  for (const auto& c : cases) {
    Flags f;
    DeclareLedgerMemoryFlags(f);
    ASSERT_TRUE(f.Parse(c.args).ok());
    store::LedgerOptions o;
    const Status st = ApplyLedgerMemoryFlags(f, o);
    EXPECT_FALSE(st.ok()) << c.args[0];
    EXPECT_NE(st.message().find(c.want), std::string::npos) << st.message();
  }
}

TEST(TimeArg, Rfc3339OrADurationBeforeNow) {
  const Time now = Time::FromUnix(1'700'000'000);
  struct Case {
    const char* text;
    int64_t want_unix;
  };
  const Case ok[] = {
      {"2023-11-14T22:13:20Z", 1'700'000'000},
      {"2023-11-14T23:13:20+01:00", 1'700'000'000},
      {"1h", 1'700'000'000 - 3600},
      {"90m", 1'700'000'000 - 5400},
      {"1h30m", 1'700'000'000 - 5400},
      {"0s", 1'700'000'000},
  };
  for (const auto& c : ok) {
    Result<Time> t = ParseTimeArg(c.text, now);
    ASSERT_TRUE(t.ok()) << c.text << ": " << t.status().message();
    EXPECT_EQ(*t, Time::FromUnix(c.want_unix)) << c.text;
  }
  for (const char* bad : {"", "yesterday", "1d", "-1h", "2023-11-14", "1h ago"}) {
    Result<Time> t = ParseTimeArg(bad, now);
    EXPECT_FALSE(t.ok()) << bad;
    if (!t.ok()) {
      EXPECT_NE(t.status().message().find(bad), std::string::npos) << bad;
    }
  }
}

TEST(TimeArg, TimeFlagNamesTheFlagAndIsAbsentWhenNotGiven) {
  Flags f;
  f.Value("since").Value("until");
  ASSERT_TRUE(f.Parse({"--since", "2h"}).ok());
  const Time now = Time::FromUnix(1'000'000);
  auto since = TimeFlag(f, "since", now);
  ASSERT_TRUE(since.ok());
  EXPECT_EQ(*since, std::optional<Time>(Time::FromUnix(1'000'000 - 7200)));
  auto until = TimeFlag(f, "until", now);
  ASSERT_TRUE(until.ok());
  EXPECT_FALSE(until->has_value());
  Flags g;
  g.Value("since");
  ASSERT_TRUE(g.Parse({"--since=soon"}).ok());
  auto bad = TimeFlag(g, "since", now);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message().rfind("--since: ", 0), 0u) << bad.status().message();
}

TEST(KubeApiFlags, DefaultsAreClientGosAndBadValuesNameTheFlag) {
  auto parse = [](std::vector<std::string> args) {
    Flags f;
    DeclareKubeApiFlags(f);
    EXPECT_TRUE(f.Parse(args).ok());
    return ParseKubeApiFlags(f);
  };
  auto defaults = parse({});
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->qps, 20);
  EXPECT_EQ(defaults->burst, 30);
  auto set = parse({"--kube-api-qps", "150.5", "--kube-api-burst=300"});
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->qps, 150.5);
  EXPECT_EQ(set->burst, 300);
  for (const char* bad : {"0", "-5", "abc", "", "5x", "inf", "nan", "1e999"}) {
    auto r = parse({"--kube-api-qps", bad});
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().message(), std::string("--kube-api-qps: a number of requests per second "
                                                "above 0, not \"") +
                                        bad + "\"");
  }
  auto burst = parse({"--kube-api-burst", "0"});
  ASSERT_FALSE(burst.ok());
  EXPECT_EQ(burst.status().message(),
            "--kube-api-burst: a whole number from 1 to 1000000, not \"0\"");
}

}  // namespace
}  // namespace cronledger::app
