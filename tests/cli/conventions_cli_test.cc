// The conventions every `cronledger` command shares, end to end through the built binary: --help,
// -n/--namespace versus --count, time flags (RFC 3339 or a duration before now), -o formats, the
// default start of plan/simulate, and schedule's time-zone check.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "model/json.h"
#include "model/time.h"
#include "tests/testing/cli.h"

namespace cronledger {
namespace {

namespace fs = std::filesystem;
using cli_test::Cli;
using cli_test::CliResult;

// The command names `cronledger help` lists.
std::vector<std::string> ListedCommands() {
  const CliResult r = Cli("help");
  EXPECT_EQ(r.exit_code, 0);
  std::vector<std::string> names;
  std::istringstream in(r.out);
  std::string line;
  bool in_list = false;
  while (std::getline(in, line)) {
    if (line == "commands:") {
      in_list = true;
      continue;
    }
    if (!in_list) continue;
    if (line.empty()) break;
    std::istringstream words(line);
    std::string name;
    words >> name;
    names.push_back(name);
  }
  return names;
}

Time Now() {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  return Time::FromUnix(ns / 1'000'000'000);
}

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "cronledger-cli-XXXXXX").string();
    CL_CHECK(mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Write(const std::string& name, const std::string& text) const {
    const std::string p = path_ + "/" + name;
    std::ofstream(p) << text;
    return p;
  }

 private:
  std::string path_;
};

// A CronJob manifest without metadata.creationTimestamp, as people write them by hand.
std::string HandWrittenCronJob(const std::string& ns, const std::string& name,
                               const std::string& schedule) {
  return "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: " + name +
         "\n  namespace: " + ns + "\nspec:\n  schedule: \"" + schedule +
         "\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n"
         "          restartPolicy: OnFailure\n          containers:\n"
         "            - name: c\n              image: busybox\n";
}

std::string Samples() { return cli_test::SourceDir() + "/deploy/samples"; }

TEST(HelpCli, EveryListedCommandPrintsItsUsageOnStdout) {
  const std::vector<std::string> commands = ListedCommands();
  ASSERT_GE(commands.size(), 18u);
  for (const std::string& c : commands) {
    for (const std::string flag : {"--help", "-h"}) {
      const CliResult r = Cli(c + " " + flag);
      EXPECT_EQ(r.exit_code, 0) << c << " " << flag;
      EXPECT_NE(r.out.find("cronledger " + c), std::string::npos)
          << c << " " << flag << ": " << r.out;
    }
    // The usage is the command's own, not the program's list of commands.
    EXPECT_EQ(Cli(c + " --help").out.find("commands:"), std::string::npos) << c;
    EXPECT_EQ(Cli("help " + c).out, Cli(c + " --help").out) << c;
  }
}

TEST(HelpCli, ProgramHelpAndBadCommands) {
  for (const std::string flag : {"--help", "-h", "help"}) {
    const CliResult r = Cli(flag);
    EXPECT_EQ(r.exit_code, 0) << flag;
    EXPECT_NE(r.out.find("usage: cronledger <command>"), std::string::npos) << flag;
  }
  EXPECT_EQ(Cli("help no-such-command").exit_code, 2);
  // After `--` a "-h" is an argument, not a request for help.
  const CliResult r = Cli("plan -- -h");
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

// What a command needs besides -o to get as far as checking -o.
std::string RequiredArgs(const std::string& command) {
  if (command == "report") return "adherence";
  if (command == "plan") return Samples();
  if (command == "simulate") return Samples() + " --duration 1h";
  if (command == "state" || command == "why") return "ns/name --at 2026-01-01T00:00:00Z";
  if (command == "emit") return "--kafka-brokers 127.0.0.1:1";
  if (command == "ingest") return "--from -";
  if (command == "schedule") return "--schedule @daily --from 2026-01-01T00:00:00Z";
  if (command == "verify-trail") return "--checkpoint /nonexistent --data-dir /nonexistent";
  if (command == "verify-proof") return "--proof /nonexistent --checkpoint /nonexistent";
  return "";
}

// The `A|B|...` list that follows the first `-o`/`--output` of a usage text (within a few words:
// `-o table|json`, `--output FMT [table|json]`), or "" when the usage has none.
std::string AdvertisedFormats(const std::string& help) {
  size_t at = help.find("-o ");
  if (at == std::string::npos) at = help.find("--output");
  if (at == std::string::npos) return "";
  std::string run;
  for (size_t i = at + 2; i < help.size() && i < at + 60; ++i) {
    const char ch = help[i];
    if ((ch >= 'a' && ch <= 'z') || ch == '|') {
      run += ch;
      continue;
    }
    if (run.find('|') != std::string::npos) return run;
    run.clear();
  }
  return run.find('|') != std::string::npos ? run : "";
}

// A command whose usage advertises `-o A|B|...` refuses another format with an error listing
// exactly the advertised ones: help and parser agree.
TEST(OutputCli, AdvertisedFormatsAreTheAcceptedOnes) {
  int checked = 0;
  for (const std::string& c : ListedCommands()) {
    const std::string help = Cli(c + " --help").out;
    const std::string advertised = AdvertisedFormats(help);
    if (advertised.empty()) continue;
    std::set<std::string> formats;
    std::stringstream list(advertised);
    for (std::string f; std::getline(list, f, '|');) formats.insert(f);
    // Only the error line counts: the usage printed after it repeats the advertised list.
    const CliResult r = Cli(c + " " + RequiredArgs(c) + " -o no-such-format", true);
    EXPECT_EQ(r.exit_code, 2) << c << ": " << r.out;
    const std::string error = r.out.substr(0, r.out.find('\n'));
    EXPECT_NE(error.find("no-such-format"), std::string::npos) << c << ": " << error;
    for (const std::string f : {"table", "json", "yaml", "csv"}) {
      EXPECT_EQ(error.find(f) != std::string::npos, formats.count(f) == 1)
          << c << " advertises " << advertised << " but says: " << error;
    }
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

TEST(OutputCli, PlanPrintsEveryListFormat) {
  const std::string base = "plan " + Samples() + "/finance.yaml --from 2027-03-13T00:00:00Z ";
  const CliResult yaml = Cli(base + "--count 1 -o yaml");
  ASSERT_EQ(yaml.exit_code, 0);
  EXPECT_EQ(yaml.out.rfind("items:\n- ", 0), 0u) << yaml.out;
  EXPECT_NE(yaml.out.find("\"finance/month-end-close\""), std::string::npos) << yaml.out;
  const CliResult csv = Cli(base + "--count 1 -o csv");
  ASSERT_EQ(csv.exit_code, 0);
  EXPECT_EQ(csv.out.rfind("cronJob,schedule,suspend,next,error\n", 0), 0u) << csv.out;
  EXPECT_NE(csv.out.find("finance/month-end-close,"), std::string::npos) << csv.out;
}

TEST(CountCli, PlanCountAndItsNumericDashNAlias) {
  const std::string base = "plan " + Samples() + " --from 2027-03-13T00:00:00Z -o json ";
  auto first_next_size = [](const CliResult& r) {
    auto j = model::ParseJson(r.out);
    return j.ok() && !(*j)["items"].empty() ? (*j)["items"][0]["next"].size() : size_t{999};
  };
  EXPECT_EQ(first_next_size(Cli(base + "--count 2")), 2u);
  EXPECT_EQ(first_next_size(Cli(base + "-n 4")), 4u);
  EXPECT_EQ(Cli(base + "--count 2").out, Cli(base + "-n 2").out);
  EXPECT_EQ(Cli(base + "--count 2 -n 3").exit_code, 2);
  EXPECT_EQ(Cli(base + "--count x").exit_code, 2);
  EXPECT_EQ(Cli(base + "-n -1").exit_code, 2);
}

TEST(NamespaceCli, PlanDashNWithANameIsTheNamespace) {
  const std::string base = "plan " + Samples() + " --from 2027-03-13T00:00:00Z -o json ";
  for (const std::string flag : {"-n finance", "--namespace finance", "-n=finance"}) {
    const CliResult r = Cli(base + flag);
    ASSERT_EQ(r.exit_code, 0) << flag;
    auto j = model::ParseJson(r.out);
    ASSERT_TRUE(j.ok()) << r.out;
    ASSERT_FALSE((*j)["items"].empty()) << flag;
    for (const auto& item : (*j)["items"]) {
      EXPECT_EQ(item["cronJob"].get<std::string>().rfind("finance/", 0), 0u) << flag << " " << item;
    }
    EXPECT_LT((*j)["items"].size(), 9u) << flag;
  }
  EXPECT_EQ(Cli(base + "-n finance --namespace platform").exit_code, 2);
}

// The ledger commands that take a namespace: -n NS, --namespace NS and -n=NS are the same flag
// and select that namespace's records only.
TEST(NamespaceCli, LedgerCommandsTakeDashNAndNamespaceAlike) {
  TempDir dir;
  const std::string data = dir.path() + "/ledger";
  ASSERT_EQ(Cli("simulate " + Samples() + "/finance.yaml " + Samples() +
                "/platform.yaml --duration 1h --data-dir " + data)
                .exit_code,
            0);
  for (const std::string command : {"audit", "report adherence", "divergences"}) {
    const std::string base = command + " --data-dir " + data + " -o json ";
    const CliResult all = Cli(base);
    ASSERT_EQ(all.exit_code, 0) << command << ": " << all.out;
    const CliResult dash_n = Cli(base + "-n finance");
    ASSERT_EQ(dash_n.exit_code, 0) << command << ": " << dash_n.out;
    EXPECT_EQ(Cli(base + "--namespace finance").out, dash_n.out) << command;
    EXPECT_EQ(Cli(base + "-n=finance").out, dash_n.out) << command;
    auto j = model::ParseJson(dash_n.out);
    ASSERT_TRUE(j.ok()) << dash_n.out;
    for (const auto& item : (*j)["items"]) {
      const model::Json& ns = item.contains("cronJob") && item["cronJob"].is_object()
                                  ? item["cronJob"]["namespace"]
                                  : item["namespace"];
      EXPECT_EQ(ns, "finance") << command << ": " << item;
    }
    if (command != "divergences") {  // a simulated cluster has no built-in controller to audit
      EXPECT_FALSE((*j)["items"].empty()) << command;
      EXPECT_NE(all.out, dash_n.out) << command << ": platform's records are left out";
    }
    EXPECT_EQ(Cli(base + "-n finance --namespace platform").exit_code, 2) << command;
  }
}

TEST(CountCli, ScheduleCountAndTheFrozenDashN) {
  const std::string base = "schedule --schedule '@hourly' --from 2021-01-01T00:00:00Z -o json ";
  const CliResult count = Cli(base + "--count 2");
  ASSERT_EQ(count.exit_code, 0);
  EXPECT_EQ(count.out, "{\"next\":[\"2021-01-01T01:00:00Z\",\"2021-01-01T02:00:00Z\"]}\n");
  EXPECT_EQ(Cli(base + "-n 2").out, count.out);
  const CliResult both = Cli(base + "--count 2 -n 2");
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.out.find("\"error\""), std::string::npos) << both.out;
  EXPECT_EQ(Cli(base + "-n default").exit_code, 2);
}

// What `decide` reports for a CronJob with this schedule and time zone: the controller's
// UnknownTimeZone event message.
std::string ControllerUnknownTimeZoneMessage(const TempDir& dir, const std::string& schedule,
                                             const std::string& zone) {
  const model::Json input = {
      {"now", "2026-01-01T00:00:00Z"},
      {"cronJob",
       {{"apiVersion", "batch/v1"},
        {"kind", "CronJob"},
        {"metadata",
         {{"name", "tz"},
          {"namespace", "default"},
          {"uid", "u-1"},
          {"creationTimestamp", "2025-12-31T00:00:00Z"}}},
        {"spec",
         {{"schedule", schedule},
          {"timeZone", zone},
          {"jobTemplate", {{"spec", {{"template", {{"spec", model::Json::object()}}}}}}}}},
        {"status", model::Json::object()}}},
      {"jobs", model::Json::array()}};
  const std::string path = dir.Write("decide.json", model::DumpJson(input));
  const CliResult r = Cli("decide --input " + cli_test::ShellQuote(path));
  EXPECT_EQ(r.exit_code, 0) << r.out;
  auto out = model::ParseJson(r.out);
  if (!out.ok()) return "decide printed no JSON: " + r.out;
  for (const auto& e : (*out)["events"]) {
    if (e["reason"] == "UnknownTimeZone") return e["message"].get<std::string>();
  }
  return "no UnknownTimeZone event: " + r.out;
}

TEST(ScheduleCli, AnUnknownTimeZoneIsRefusedEvenWithTzInTheSchedule) {
  TempDir dir;
  const std::string expected =
      ControllerUnknownTimeZoneMessage(dir, "TZ=UTC 0 * * * *", "Mars/Olympus");
  ASSERT_EQ(expected.rfind("invalid timeZone: \"Mars/Olympus\": ", 0), 0u) << expected;
  const CliResult r =
      Cli("schedule --schedule 'TZ=UTC 0 * * * *' --time-zone Mars/Olympus "
          "--from 2026-01-01T00:00:00Z -n 1 -o json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, model::DumpJson(model::Json{{"error", expected}}) + "\n");
  // The same through --stdin, one answer per line; a good zone still answers.
  cli_test::CliOptions o;
  o.stdin_text =
      "{\"schedule\":\"CRON_TZ=UTC 0 * * * *\",\"timeZone\":\"Mars/Olympus\","
      "\"from\":\"2026-01-01T00:00:00Z\",\"n\":1}\n"
      "{\"schedule\":\"TZ=UTC 0 * * * *\",\"timeZone\":\"Europe/Rome\","
      "\"from\":\"2026-01-01T00:00:00Z\",\"n\":1}\n";
  const CliResult lines = cli_test::RunShell(CRONLEDGER_BIN, "schedule --stdin", o);
  EXPECT_EQ(lines.exit_code, 0);
  EXPECT_EQ(lines.out, model::DumpJson(model::Json{{"error", expected}}) +
                           "\n{\"next\":[\"2026-01-01T01:00:00Z\"]}\n");
}

TEST(StartCli, PlanWithoutCreationTimestampStartsNow) {
  TempDir dir;
  dir.Write("cj.yaml", HandWrittenCronJob("default", "every-5m", "*/5 * * * *"));
  const Time before = Now();
  const CliResult r = Cli("plan " + dir.path() + " --count 1 -o json");
  ASSERT_EQ(r.exit_code, 0) << r.out;
  auto j = model::ParseJson(r.out);
  ASSERT_TRUE(j.ok()) << r.out;
  auto next = ParseRfc3339((*j)["items"][0]["next"][0].get<std::string>());
  ASSERT_TRUE(next.ok());
  EXPECT_GT(*next, before) << r.out;
  EXPECT_LE(*next, Now().AddSeconds(5 * 60)) << r.out;
}

TEST(StartCli, SimulateWithoutCreationTimestampStartsNowAndTimeFlagsTakeDurations) {
  TempDir dir;
  dir.Write("cj.yaml", HandWrittenCronJob("default", "every-5m", "*/5 * * * *"));
  const std::string data = dir.path() + "/data";
  const Time before = Now();
  const CliResult sim =
      Cli("simulate " + dir.path() + "/cj.yaml --duration 30m -o json --data-dir " + data);
  ASSERT_EQ(sim.exit_code, 0) << sim.out;
  auto summary = model::ParseJson(sim.out);
  ASSERT_TRUE(summary.ok()) << sim.out;
  auto start = ParseRfc3339((*summary)["run"]["start"].get<std::string>());
  ASSERT_TRUE(start.ok());
  EXPECT_GE(*start, before);
  EXPECT_LE(*start, Now().Add(std::chrono::seconds(1)));  // Now() is in whole seconds

  // The simulated decisions lie in [start, start+30m): all after "1h ago", none before it.
  auto count = [&](const std::string& flags) {
    const CliResult r = Cli("audit --data-dir " + data + " -o json " + flags);
    EXPECT_EQ(r.exit_code, 0) << flags << ": " << r.out;
    auto j = model::ParseJson(r.out);
    return j.ok() ? (*j)["items"].size() : size_t{0};
  };
  const size_t all = count("");
  ASSERT_GT(all, 0u);
  EXPECT_EQ(count("--since 1h"), all);
  EXPECT_EQ(count("--since 60m"), all);
  EXPECT_EQ(count("--until 1h"), 0u);
  EXPECT_EQ(count("--since " + FormatRfc3339(start->AddSeconds(-1))), all);
  EXPECT_EQ(Cli("audit --data-dir " + data + " --since -1h").exit_code, 2);
  EXPECT_EQ(Cli("audit --data-dir " + data + " --since yesterday").exit_code, 2);
  // The same parser in the replay commands.
  const CliResult replay = Cli("replay --verify --data-dir " + data + " --until 1h -o json");
  EXPECT_EQ(replay.exit_code, 0) << replay.out;
  EXPECT_EQ(Cli("export --data-dir " + data + " --since 1x").exit_code, 2);
}

TEST(LogCli, RunLogsJsonLinesWithTimestampAndLevel) {
  TempDir dir;
  cli_test::CliOptions o;
  o.stderr_mode = cli_test::Stderr::kCapture;
  const CliResult r =
      cli_test::RunShell(CRONLEDGER_BIN,
                         "run --log-format json -v 2 --data-dir " + dir.path() +
                             "/data --kubeconfig " + dir.path() + "/no-such-kubeconfig",
                         o);
  EXPECT_EQ(r.exit_code, 2);
  std::istringstream lines(r.err);
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) {
    auto j = model::ParseJson(line);
    ASSERT_TRUE(j.ok()) << line;
    EXPECT_TRUE(ParseRfc3339((*j)["ts"].get<std::string>()).ok()) << line;
    EXPECT_EQ((*j)["level"], "error") << line;
    EXPECT_NE((*j)["msg"].get<std::string>().find("kubeconfig:"), std::string::npos) << line;
  }
  EXPECT_EQ(n, 1) << r.err;
  EXPECT_EQ(Cli("run --log-format xml").exit_code, 2);
}

}  // namespace
}  // namespace cronledger
