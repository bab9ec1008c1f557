// `cronledger retention` end to end on a ledger written by the real `cronledger ingest`:
// --dry-run reports exactly what the real run deletes and deletes nothing (also while a writer
// holds the ledger), the real run deletes it, the view still equals a rebuild, bad flags are
// usage errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>

#include "model/json.h"
#include "model/test_events.h"
#include "store/ledger.h"
#include "store/test_util.h"

namespace cronledger {
namespace {

struct Ran {
  int exit_code = -1;
  std::string out;
};

// Runs `cronledger ARGS` with stderr discarded; returns its exit code and stdout.
Ran Cronledger(const std::string& args) {
  Ran r;
  const std::string cmd = std::string(CRONLEDGER_BIN) + " " + args + " 2>/dev/null";
  std::FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

uint64_t LogSize(const std::string& data_dir, uint64_t* pruned_raw) {
  store::LedgerOptions o;
  o.path = data_dir;
  o.read_only = true;
  auto ledger = store::Ledger::Open(o);
  EXPECT_TRUE(ledger.ok()) << ledger.status().ToString();
  if (!ledger.ok()) return 0;
  uint64_t n = 0;
  *pruned_raw = 0;
  EXPECT_TRUE((*ledger)
                  ->ScanInputs(0, false,
                               [&](const store::LogRecord& r) {
                                 ++n;
                                 *pruned_raw += r.raw_pruned ? 1 : 0;
                                 return true;
                               })
                  .ok());
  return n;
}

model::Json Report(const Ran& r) {
  auto json = model::ParseJson(r.out);
  EXPECT_TRUE(json.ok()) << r.out;
  if (!json.ok()) return model::Json();
  // -o json prints {"items": [...]}, one item here.
  EXPECT_TRUE(json->contains("items") && (*json)["items"].size() == 1) << r.out;
  if (!json->contains("items") || (*json)["items"].empty()) return model::Json();
  return (*json)["items"][0];
}

TEST(RetentionCliTest, DryRunThenRealRunThenRebuildIsClean) {
  store::testing::TempDir dir;
  const std::string events = dir.Sub("events.jsonl");
  {
    std::ofstream f(events);
    for (uint64_t i = 0; i < 200; ++i) f << model::testing::StreamLine(i, 10);
  }
  const std::string data = dir.Sub("data");
  ASSERT_EQ(Cronledger("ingest --from " + events + " --data-dir " + data + " -o json").exit_code,
            0);
  uint64_t raw_pruned = 0;
  ASSERT_EQ(LogSize(data, &raw_pruned), 200u);

  // Every record is older than a nanosecond: all but what the view points at may go.
  const Ran dry =
      Cronledger("retention --data-dir " + data + " --log-max-age 1ns --dry-run -o json");
  ASSERT_EQ(dry.exit_code, 0) << dry.out;
  const model::Json planned = Report(dry);
  EXPECT_EQ(planned["dryRun"], true);
  const uint64_t inputs = planned["inputsPruned"].get<uint64_t>();
  const uint64_t pinned = planned["pinned"].get<uint64_t>();
  EXPECT_GT(inputs, 0u);
  EXPECT_GT(pinned, 0u);
  EXPECT_EQ(inputs + pinned, 200u);
  EXPECT_EQ(LogSize(data, &raw_pruned), 200u);  // nothing deleted

  // A dry run works while a writer holds the ledger; a real run then fails on the lock.
  {
    store::LedgerOptions w;
    w.path = data;
    auto writer = store::Ledger::Open(w);
    ASSERT_TRUE(writer.ok()) << writer.status().ToString();
    const Ran live =
        Cronledger("retention --data-dir " + data + " --log-max-age 1ns --dry-run -o json");
    ASSERT_EQ(live.exit_code, 0);
    EXPECT_EQ(Report(live)["inputsPruned"].get<uint64_t>(), inputs);
    EXPECT_EQ(Cronledger("retention --data-dir " + data + " --log-max-age 1ns").exit_code, 1);
  }

  const Ran real = Cronledger("retention --data-dir " + data + " --log-max-age 1ns -o json");
  ASSERT_EQ(real.exit_code, 0) << real.out;
  const model::Json done = Report(real);
  EXPECT_EQ(done["dryRun"], false);
  EXPECT_EQ(done["inputsPruned"].get<uint64_t>(), inputs);
  EXPECT_EQ(done["pinned"].get<uint64_t>(), pinned);
  EXPECT_EQ(LogSize(data, &raw_pruned), pinned);
  EXPECT_EQ(Cronledger("rebuild --data-dir " + data).exit_code, 0);  // view == rebuild
}

TEST(RetentionCliTest, RawRetentionKeepsTheNormalizedRecords) {
  store::testing::TempDir dir;
  const std::string events = dir.Sub("events.jsonl");
  {
    std::ofstream f(events);
    for (uint64_t i = 0; i < 40; ++i) f << model::testing::StreamLine(i, 4);
  }
  const std::string data = dir.Sub("data");
  ASSERT_EQ(Cronledger("ingest --from " + events + " --data-dir " + data + " -o json").exit_code,
            0);
  const Ran real = Cronledger("retention --data-dir " + data + " --raw-max-age 1ns -o json");
  ASSERT_EQ(real.exit_code, 0);
  const uint64_t raw = Report(real)["rawPruned"].get<uint64_t>();
  EXPECT_GT(raw, 0u);
  uint64_t raw_pruned = 0;
  EXPECT_EQ(LogSize(data, &raw_pruned), 40u);
  EXPECT_EQ(raw_pruned, raw);
  EXPECT_EQ(Cronledger("rebuild --data-dir " + data).exit_code, 0);
}

TEST(RetentionCliTest, BadFlagsAreUsageErrorsAndAMissingLedgerIsAFailure) {
  store::testing::TempDir dir;
  EXPECT_EQ(Cronledger("retention --data-dir " + dir.path()).exit_code, 2);  // no age given
  EXPECT_EQ(Cronledger("retention --log-max-age soon --data-dir " + dir.path()).exit_code, 2);
  EXPECT_EQ(Cronledger("retention --log-max-age -5s --data-dir " + dir.path()).exit_code, 2);
  EXPECT_EQ(
      Cronledger("retention --log-max-age 1h --dry-run --data-dir " + dir.Sub("none")).exit_code,
      1);
  EXPECT_EQ(Cronledger("retention --log-max-age 1h --data-dir " + dir.Sub("none")).exit_code, 1);
}

}  // namespace
}  // namespace cronledger
