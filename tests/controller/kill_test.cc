// kill -9 during a busy simulated stretch: the driver (kill_driver.cc) is
// SIGKILLed at seeded points — inside a ledger commit, before an API call is applied, after it was
// applied but before its outcome is recorded — and restarted on the same data directory until it
// finishes. Then the ledger and the cluster are audited: every due fire time of every CronJob
// ended in exactly one terminal record, every one ran exactly one Job (nothing lost, nothing
// created twice), and every completed pass replays to its recorded decisions byte for byte.

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "controller/testing/fake_actuator.h"
#include "controller/testing/replay_check.h"
#include "reconciler/job_builder.h"
#include "store/ledger.h"
#include "store/test_util.h"
#include "tests/controller/journal.h"

extern char** environ;

namespace cronledger::controller {
namespace {

constexpr int kCronJobs = 80;
constexpr int kMinKills = 8;
constexpr int kMaxRounds = 60;
constexpr uint64_t kSeed = 20240101;

struct ChildExit {
  bool killed = false;  // died of SIGKILL
  int code = -1;        // exit code otherwise
};

ChildExit RunDriver(std::vector<std::string> args, const std::string& log) {
  args.insert(args.begin(), CRONLEDGER_KILL_DRIVER);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  CL_CHECK(rc == 0);
  int status = 0;
  CL_CHECK(waitpid(pid, &status, 0) == pid);
  ChildExit e;
  e.killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
  return e;
}

Time Slot(int minute) { return Time::FromUnix(1704067200 + 12 * 3600 + minute * 60); }

std::set<std::string> InterruptedCreates(store::Ledger& ledger) {
  std::map<uint64_t, std::vector<std::string>> creates;  // tick seq -> Jobs it intended
  CL_CHECK(ledger
               .ScanInputs(1, false,
                           [&](const store::LogRecord& r) {
                             if (std::holds_alternative<model::Tick>(r.input)) creates[r.seq];
                             const auto* i = std::get_if<model::ActionIntent>(&r.input);
                             if (i != nullptr && i->verb == "create") {
                               creates[i->tick_seq].push_back(i->name);
                             }
                             if (const auto* e = std::get_if<model::PassEnd>(&r.input)) {
                               creates.erase(e->tick_seq);
                             }
                             return true;
                           })
               .ok());
  std::set<std::string> out;
  for (const auto& [tick, jobs] : creates) out.insert(jobs.begin(), jobs.end());
  return out;
}

// On a failure: the CronJob's passes and decisions, to see where the story broke.
void DumpHistory(store::Ledger& ledger, const std::string& cj) {
  std::set<uint64_t> intents;
  CL_CHECK(
      ledger
          .ScanInputs(1, false,
                      [&](const store::LogRecord& r) {
                        if (const auto* t = std::get_if<model::Tick>(&r.input)) {
                          if (t->name == cj) {
                            std::printf("  %llu tick %s %s\n", (unsigned long long)r.seq,
                                        FormatRfc3339Nano(t->now).c_str(), t->trigger.c_str());
                          }
                        } else if (const auto* i = std::get_if<model::ActionIntent>(&r.input)) {
                          if (i->payload.find(cj) != std::string::npos) {
                            intents.insert(r.seq);
                            std::printf("  %llu   intent %llu #%u %s %s\n",
                                        (unsigned long long)r.seq, (unsigned long long)i->tick_seq,
                                        i->call_index, i->verb.c_str(), i->name.c_str());
                          }
                        } else if (const auto* o = std::get_if<model::ActionOutcome>(&r.input)) {
                          if (intents.count(o->decision_seq)) {
                            std::printf("  %llu   outcome %s\n", (unsigned long long)r.seq,
                                        o->result.c_str());
                          }
                        } else if (const auto* e = std::get_if<model::PassEnd>(&r.input)) {
                          if (e->name == cj) {
                            std::printf("  %llu end %llu %s %s\n", (unsigned long long)r.seq,
                                        (unsigned long long)e->tick_seq, e->result.c_str(),
                                        e->accounting.c_str());
                          }
                        } else if (const auto* w = std::get_if<model::WatchEvent>(&r.input)) {
                          if (w->name.rfind(cj, 0) == 0) {
                            std::printf("  %llu watch %s %s %s rv=%s\n", (unsigned long long)r.seq,
                                        std::string(model::WatchEventTypeName(w->type)).c_str(),
                                        std::string(model::ObjectKindName(w->kind)).c_str(),
                                        w->name.c_str(), w->resource_version.c_str());
                          }
                        }
                        return true;
                      })
          .ok());
  CL_CHECK(ledger
               .ScanDecisions(1,
                              [&](const model::Decision& d) {
                                if (d.cron_job.name == cj) {
                                  std::printf("  decision %s\n",
                                              model::CanonicalDecisionBytes(d).c_str());
                                }
                                return true;
                              })
               .ok());
}

TEST(ControllerKillTest, SigkillDuringBusyMinutesLosesNoDecisionAndDuplicatesNoJob) {
  const auto started = std::chrono::steady_clock::now();
  store::testing::TempDir dir;
  const std::string log = dir.Sub("driver.log");
  const std::vector<std::string> common = {"--dir", dir.path(), "--cronjobs",
                                           std::to_string(kCronJobs)};
  std::mt19937_64 rng(kSeed);
  const char* modes[] = {"commit", "before-call", "after-call"};
  // Kill points are drawn well inside one process's work (thousands of commits, hundreds of
  // calls); each restart resumes, and the rounds go on until a run reaches the end unkilled.
  const long limits[] = {800, 150, 150};
  int kills = 0;
  int call_kills = 0;
  int rounds = 0;
  for (bool finished = false; !finished; ++rounds) {
    ASSERT_LT(rounds, kMaxRounds) << "the driver never finished";
    const int m = rounds % 3;
    const long at = std::uniform_int_distribution<long>(1, limits[m])(rng);
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--kill", modes[m], "--at", std::to_string(at)});
    const ChildExit e = RunDriver(args, log);
    if (e.killed) {
      ++kills;
      call_kills += m != 0;
    } else {
      ASSERT_EQ(e.code, 0) << "round " << rounds << " " << modes[m] << " " << at;
      finished = true;
    }
  }
  EXPECT_GE(kills, kMinKills);

  // --- audit: the cluster, as its journal says
  ManualClock clock(Slot(0));
  testing::FakeActuator cluster(clock);
  auto journal = testing::Journal::Read(dir.Sub("cluster.journal"));
  ASSERT_TRUE(journal.ok()) << journal.status().ToString();
  cluster.Restore(*journal);
  const std::map<std::string, int> created = cluster.Created();

  // --- audit: the ledger
  store::LedgerOptions lo;
  lo.path = dir.Sub("ledger");
  auto ledger = store::Ledger::Open(lo);
  ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
  std::map<std::pair<std::string, Time>, std::vector<model::Decision>> terminal;
  std::map<std::string, int> create_decisions;
  ASSERT_TRUE((*ledger)
                  ->ScanDecisions(1,
                                  [&](const model::Decision& d) {
                                    if (d.action == model::DecisionAction::kCreateJob) {
                                      ++create_decisions[d.job_name.value_or("")];
                                    }
                                    if (d.action == model::DecisionAction::kCreateJob ||
                                        d.action == model::DecisionAction::kSkipped) {
                                      EXPECT_FALSE(d.range_end.has_value());
                                      terminal[{d.cron_job.name, *d.scheduled_time}].push_back(d);
                                    }
                                    return true;
                                  })
                  .ok());

  // Jobs that an interrupted pass (a Tick without a PassEnd) intended to create.
  std::set<std::string> interrupted_creates = InterruptedCreates(**ledger);

  size_t slots = 0;
  size_t skipped_with_job = 0;
  size_t adopted_after_interruption = 0;
  for (int i = 0; i < kCronJobs; ++i) {
    const std::string cj = "busy-" + std::to_string(i);
    for (int minute = 1; minute <= 6; ++minute) {
      // 12:06 is the last fire time of the run: it may still be pending (not yet settled).
      const bool settled = minute <= 5;
      ++slots;
      const std::string job = reconciler::JobName(cj, Slot(minute));
      EXPECT_EQ(created.count(job) ? created.at(job) : 0, 1) << job;  // ran once, never twice
      const auto& records = terminal[{cj, Slot(minute)}];
      if (settled) {
        EXPECT_EQ(records.size(), 1u) << cj << " slot " << minute;  // one terminal record
        if (records.size() != 1) DumpHistory(**ledger, cj);
      } else {
        EXPECT_LE(records.size(), 1u) << cj << " slot " << minute;
      }
      // Every slot's Job ran, so its terminal record is createJob — also when the pass that
      // created it was cut off and another pass re-decided it (docs/controller.md "Crash
      // recovery"): never a skip.
      if (records.size() == 1 && records[0].action != model::DecisionAction::kCreateJob) {
        ++skipped_with_job;
        ADD_FAILURE() << job << " ran but was recorded as skipped: " << records[0].reason
                      << (interrupted_creates.count(job) ? " (an interrupted pass created it)"
                                                         : "");
        DumpHistory(**ledger, cj);
      }
      if (records.size() == 1 && interrupted_creates.count(job) &&
          records[0].message.value_or("").find("adopted") != std::string::npos) {
        ++adopted_after_interruption;
      }
      EXPECT_LE(create_decisions[job], 1) << job;
    }
  }
  EXPECT_EQ(created.size(), slots);               // no Job for anything else
  EXPECT_GE(terminal.size(), slots - kCronJobs);  // every settled slot has its record
  EXPECT_LE(terminal.size(), slots);

  auto replay = testing::ReplayLedger(**ledger);
  ASSERT_TRUE(replay.ok()) << replay.status().ToString();
  EXPECT_EQ(replay->divergences, 0u) << testing::FirstProblem(*replay);
  // Every kill inside an API call left a pass whose PassEnd was never recorded.
  EXPECT_GE(replay->interrupted_passes, static_cast<uint64_t>(call_kills));

  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::printf(
      "kill test: %d rounds, %d kills (%d inside API calls), %zu slots, %llu passes replayed, "
      "%llu interrupted passes, %zu slots skipped although their Job ran, %zu slots of "
      "interrupted creates adopted, %.1f s\n",
      rounds, kills, call_kills, slots, static_cast<unsigned long long>(replay->passes_replayed),
      static_cast<unsigned long long>(replay->interrupted_passes), skipped_with_job,
      adopted_after_interruption, seconds);
  std::ifstream driver_log(log);
  for (std::string line; std::getline(driver_log, line);) std::printf("driver: %s\n", line.c_str());
}

}  // namespace
}  // namespace cronledger::controller
