// End-to-end: `cronledger simulate` over deploy/samples in virtual time, asserting what the
// controller must have done with every fire time of the window, and that a run is reproducible.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "model/json.h"
#include "tests/testing/cli.h"

namespace cronledger {
namespace {

namespace fs = std::filesystem;
using model::Json;

using RunResult = cli_test::CliResult;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "simulate_test.XXXXXX").string();
    CL_CHECK(mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string path(const std::string& child = "") const { return (path_ / child).string(); }

 private:
  fs::path path_;
};

// `cronledger ARGS` with stdout and stderr captured separately.
RunResult RunCli(const std::string& args) {
  cli_test::CliOptions options;
  options.stderr_mode = cli_test::Stderr::kCapture;
  return cli_test::RunShell(CRONLEDGER_BIN, args, options);
}

std::string Samples(const std::string& file = "") {
  return cli_test::SourceDir() + "/deploy/samples" + (file.empty() ? "" : "/" + file);
}

std::map<std::string, Json> ByCronJob(const Json& summary) {
  std::map<std::string, Json> m;
  for (const Json& item : summary["items"]) m[item["cronJob"].get<std::string>()] = item;
  return m;
}

Json Simulate(const std::string& args, const TempDir& tmp, const std::string& dir) {
  const RunResult r = RunCli("simulate " + args + " --data-dir " + tmp.path(dir) + " -o json");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = model::ParseJson(r.out);
  EXPECT_TRUE(j.ok()) << r.out << r.err;
  return j.ok() ? *j : Json();
}

// Every fire time of the window is accounted: created, skipped with a reason, or still pending;
// every created Job is accounted by the cluster: finished, running, or replaced.
void ExpectConsistent(const Json& item) {
  uint64_t skipped = 0;
  for (const auto& [reason, n] : item["skipped"].items()) skipped += n.get<uint64_t>();
  EXPECT_EQ(item["expected"].get<uint64_t>(),
            item["created"].get<uint64_t>() + skipped + item["pending"].get<uint64_t>())
      << item.dump();
  const Json& jobs = item["jobs"];
  EXPECT_EQ(item["created"].get<uint64_t>(),
            jobs["succeeded"].get<uint64_t>() + jobs["failed"].get<uint64_t>() +
                jobs["running"].get<uint64_t>() + jobs["replaced"].get<uint64_t>())
      << item.dump();
  EXPECT_FALSE(item.contains("anomalies")) << item.dump();
  EXPECT_FALSE(item.contains("error")) << item.dump();
}

void ExpectCounts(const Json& item, uint64_t expected, uint64_t created, const Json& skipped,
                  uint64_t pending) {
  EXPECT_EQ(item["expected"], expected) << item.dump();
  EXPECT_EQ(item["created"], created) << item.dump();
  EXPECT_EQ(item["skipped"], skipped) << item.dump();
  EXPECT_EQ(item["pending"], pending) << item.dump();
}

TEST(SimulateCli, SamplesForOneDayAccountForEveryFireTimeAndReproduce) {
  TempDir tmp;
  // The window is (2026-11-01T00:00Z, 2026-11-02T00:00Z]: a Sunday, and the day New York falls
  // back from EDT to EST (06:00Z).
  const Json summary = Simulate(Samples() + " --duration 24h", tmp, "a");
  ASSERT_TRUE(summary.is_object());
  EXPECT_EQ(summary["run"]["start"], "2026-11-01T00:00:00Z");  // newest creationTimestamp
  EXPECT_EQ(summary["run"]["end"], "2026-11-02T00:00:00Z");
  EXPECT_EQ(summary["run"]["mode"], "virtual");
  auto items = ByCronJob(summary);
  ASSERT_EQ(items.size(), 9u);
  for (const auto& [key, item] : items) ExpectConsistent(item);

  const Json none = Json::object();
  ExpectCounts(items["platform/heartbeat"], 1440, 1440, none, 0);
  ExpectCounts(items["platform/cache-warmer"], 288, 288, none, 0);
  ExpectCounts(items["analytics/hourly-report"], 24, 24, none, 0);
  // Suspended all day: no Job; the fire times the final pass sees end Suspended, the most recent
  // one (24:00) stays pending because upstream would still start it on resume.
  ExpectCounts(items["platform/legacy-migration"], 4, 0, {{"Suspended", 3}}, 1);
  // Europe/Berlin 02:00 = 01:00Z (CET).
  ExpectCounts(items["platform/nightly-backup"], 1, 1, none, 0);
  // New York 02:30 on fall-back day exists once (EST): 07:30Z.
  ExpectCounts(items["finance/early-settlement"], 1, 1, none, 0);
  // Oct 31 23:30 EDT = Nov 1 03:30Z.
  ExpectCounts(items["finance/month-end-close"], 1, 1, none, 0);
  // Weekday schedules on a Sunday.
  ExpectCounts(items["finance/fx-rates"], 0, 0, none, 0);
  ExpectCounts(items["analytics/weekly-digest"], 0, 0, none, 0);
  EXPECT_EQ(items["platform/heartbeat"]["events"]["SuccessfulCreate"], 1440);

  const Json& totals = summary["totals"];
  EXPECT_EQ(totals["expected"], 1759);
  EXPECT_EQ(totals["created"], 1755);
  EXPECT_EQ(totals["controller"]["errors"], 0);
  EXPECT_EQ(totals["ledger"]["quarantined"], 0);
  // In virtual time a fire time is picked up by the requeue timer, δ = 100 ms after it
  // (docs/semantics.md §7.3).
  EXPECT_EQ(totals["skewSeconds"], (Json{{"p50", 0.1}, {"p90", 0.1}, {"p99", 0.1}, {"max", 0.1}}));
  // 2 % failures by default: some Jobs failed, most succeeded.
  EXPECT_GT(totals["jobs"]["failed"].get<uint64_t>(), 10u);
  EXPECT_GT(totals["jobs"]["succeeded"].get<uint64_t>(), 1600u);

  // Determinism: the same inputs give the same summary, to the byte.
  const Json again = Simulate(Samples() + " --duration 24h", tmp, "b");
  EXPECT_EQ(model::DumpJson(summary), model::DumpJson(again));
  // Another seed: the same schedule decisions, different Job outcomes.
  const Json other = Simulate(Samples() + " --duration 24h --seed 7", tmp, "c");
  EXPECT_EQ(other["totals"]["created"], 1755);
  EXPECT_NE(other["totals"]["jobs"], summary["totals"]["jobs"]);
}

TEST(SimulateCli, SpringForwardWeekdaysAndZones) {
  TempDir tmp;
  // (2027-03-13T00:00Z, 2027-03-16T00:00Z]: Saturday to Monday; New York springs forward on
  // Sunday the 14th, so 02:30 does not exist that day and robfig skips it.
  const Json summary = Simulate(Samples("finance.yaml") + " " + Samples("reports.json") +
                                    " --start 2027-03-13T00:00:00Z --duration 3d",
                                tmp, "dst");
  ASSERT_TRUE(summary.is_object());
  auto items = ByCronJob(summary);
  ASSERT_EQ(items.size(), 5u);
  for (const auto& [key, item] : items) ExpectConsistent(item);
  const Json none = Json::object();
  ExpectCounts(items["finance/early-settlement"], 2, 2, none, 0);  // 13th 07:30Z, 15th 06:30Z
  ExpectCounts(items["finance/fx-rates"], 9, 9, none, 0);          // Monday 09:15..17:15 IST
  ExpectCounts(items["analytics/weekly-digest"], 1, 1, none, 0);   // Monday 08:00 GMT
  ExpectCounts(items["analytics/hourly-report"], 72, 72, none, 0);
  ExpectCounts(items["finance/month-end-close"], 0, 0, none, 0);
}

TEST(SimulateCli, TableOutputAndExistingLedgers) {
  TempDir tmp;
  const std::string dir = tmp.path("ledger");
  const std::string args =
      "simulate " + Samples("reports.json") + " --duration 2h --data-dir " + dir;
  RunResult r = RunCli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("analytics/hourly-report"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("TOTAL (2 CronJobs)"), std::string::npos) << r.out;

  // The ledger of a previous run is not silently reused...
  r = RunCli(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not empty"), std::string::npos) << r.err;
  // ...but --force replaces it.
  r = RunCli(args + " --force");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  // --force never deletes a directory that is not a ledger.
  fs::create_directories(tmp.path("notes"));
  std::FILE* f = std::fopen(tmp.path("notes/todo.txt").c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  r = RunCli("simulate " + Samples() + " --duration 1h --force --data-dir " + tmp.path("notes"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(fs::exists(tmp.path("notes/todo.txt")));
}

TEST(SimulateCli, BadInputExitsTwo) {
  TempDir tmp;
  const std::string dir = " --data-dir " + tmp.path("d");
  for (const std::string& args : {
           std::string("simulate"),
           "simulate " + Samples() + dir,                            // no --duration
           "simulate " + Samples() + " --duration yesterday" + dir,  // bad duration
           "simulate " + Samples() + " --duration -5m" + dir,        // not positive
           "simulate " + Samples() + " --duration 1.5d" + dir,       // days are whole
           "simulate /nonexistent/manifests --duration 1h" + dir,    // no such path
           "simulate " + Samples() + " --duration 1h --start soon" + dir,
           "simulate " + Samples() + " --duration 1h --realtime --start 2026-11-01T00:00:00Z" + dir,
           "simulate " + Samples() + " --duration 1h --failure-rate 2" + dir,
           "simulate " + Samples() + " --duration 1h --start-delay 3s..1s" + dir,
           "simulate " + Samples() + " --duration 1h --workers 0" + dir,
           "simulate " + Samples() + " --duration 1h -o xml" + dir,
           "simulate " + Samples() + " --duration 1h --bogus" + dir,
       }) {
    const RunResult r = RunCli(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("cronledger simulate: "), std::string::npos) << args << "\n" << r.err;
  }
  EXPECT_FALSE(fs::exists(tmp.path("d")));  // nothing was created
}

TEST(SimulateCli, DaysInDurations) {
  TempDir tmp;
  const Json summary = Simulate(Samples("reports.json") + " --duration 1d12h", tmp, "days");
  ASSERT_TRUE(summary.is_object());
  EXPECT_EQ(summary["run"]["duration"], "36h0m0s");
  EXPECT_EQ(ByCronJob(summary)["analytics/hourly-report"]["created"], 36);
}

}  // namespace
}  // namespace cronledger
