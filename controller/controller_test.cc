// The controller loop driven in virtual time: a real RocksDB ledger, the
// FakeActuator cluster, a ManualClock; no sleeps.

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "controller/controller_impl.h"
#include "controller/testing/harness.h"
#include "controller/watch_events.h"
#include "reconciler/job_builder.h"

namespace cronledger::controller {
namespace {

using model::DecisionAction;
using std::chrono::milliseconds;
using std::chrono::seconds;
using testing::CronJobManifest;
using testing::Harness;

// 2024-01-01 hh:mm:ss.ms UTC.
Time At(int hh, int mm, int ss = 0, int ms = 0) {
  return Time::FromUnix(1704067200 + hh * 3600 + mm * 60 + ss, ms * 1'000'000);
}
std::string Job(const std::string& cron_job, int hh, int mm) {
  return reconciler::JobName(cron_job, At(hh, mm));
}
std::set<std::string> Names(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

std::vector<model::Decision> Select(const std::vector<model::Decision>& all, DecisionAction a,
                                    std::optional<Time> slot = std::nullopt) {
  std::vector<model::Decision> out;
  for (const auto& d : all) {
    if (d.action == a && (!slot || d.scheduled_time == slot)) out.push_back(d);
  }
  return out;
}
bool HasEvent(const std::vector<reconciler::Event>& events, const std::string& reason) {
  return std::any_of(events.begin(), events.end(),
                     [&](const reconciler::Event& e) { return e.reason == reason; });
}
// Monotonic nanoseconds of wall time `t` in a harness whose clocks started together at `start`.
int64_t Mono(Time start, Time t) { return t.Sub(start).count(); }

TEST(ControllerTest, ScheduleChangeRequeuesAtTheNewTime) {
  const Time start = At(12, 0, 30);
  Harness h(start);
  h.cluster().PutCronJob(CronJobManifest("sched", "*/5 * * * *"));
  EXPECT_EQ(h.Pump(), 1u);
  EXPECT_EQ(h.controller().NextDueNanos(), Mono(start, At(12, 5, 0, 100)));

  h.RunUntil(At(12, 1));
  h.cluster().PutCronJob(CronJobManifest("sched", "*/2 * * * *"));
  EXPECT_EQ(h.Pump(), 0u);  // not enqueued now: after nextScheduleTimeDuration of the new one
  EXPECT_EQ(h.controller().NextDueNanos(), Mono(start, At(12, 2, 0, 100)));

  h.RunUntil(At(12, 2, 1));
  EXPECT_EQ(Names(h.cluster().JobNames()), std::set<std::string>{Job("sched", 12, 2)});
  const auto ticks = h.InputsOf<model::Tick>();
  const auto it = std::find_if(ticks.begin(), ticks.end(),
                               [](const model::Tick& t) { return t.now == At(12, 2, 0, 100); });
  ASSERT_NE(it, ticks.end());
  EXPECT_EQ(it->trigger, "cronjob-update");

  // An unparseable new schedule: a Warning, and the key is not enqueued.
  h.cluster().PutCronJob(CronJobManifest("sched", "not a schedule"));
  EXPECT_EQ(h.Pump(), 0u);
  EXPECT_TRUE(HasEvent(h.cluster().Events(), "UnParseableCronJobSchedule"));
}

TEST(ControllerTest, ForbidSkipsWhileActiveThenStartsWhenReleased) {
  Harness h(At(12, 0, 30));
  h.cluster().PutCronJob(CronJobManifest("fb", "* * * * *", {{"concurrencyPolicy", "Forbid"}}));
  h.RunUntil(At(12, 1, 1));
  h.RunUntil(At(12, 2, 1));
  EXPECT_EQ(Names(h.cluster().JobNames()), std::set<std::string>{Job("fb", 12, 1)});
  EXPECT_TRUE(HasEvent(h.cluster().Events(), "JobAlreadyActive"));

  h.RunUntil(At(12, 2, 30));
  h.cluster().FinishJob("default", Job("fb", 12, 1), "Complete");
  h.Pump();  // job-update -> the finished job leaves the active list -> 12:02 starts late
  EXPECT_EQ(Names(h.cluster().JobNames()),
            (std::set<std::string>{Job("fb", 12, 1), Job("fb", 12, 2)}));
  const auto decisions = h.Decisions();
  EXPECT_EQ(Select(decisions, DecisionAction::kCreateJob, At(12, 2)).size(), 1u);
  EXPECT_TRUE(Select(decisions, DecisionAction::kSkipped, At(12, 2)).empty());
}

TEST(ControllerTest, ReplaceDeletesTheActiveJobAndStartsTheNewOne) {
  Harness h(At(12, 0, 30));
  h.cluster().PutCronJob(CronJobManifest("rp", "* * * * *", {{"concurrencyPolicy", "Replace"}}));
  h.RunUntil(At(12, 1, 1));
  h.RunUntil(At(12, 2, 1));
  EXPECT_EQ(Names(h.cluster().JobNames()), std::set<std::string>{Job("rp", 12, 2)});
  const auto decisions = h.Decisions();
  const auto deletes = Select(decisions, DecisionAction::kDeleteJob);
  ASSERT_EQ(deletes.size(), 1u);
  EXPECT_EQ(deletes[0].job_name, Job("rp", 12, 1));
  EXPECT_TRUE(HasEvent(h.cluster().Events(), "SuccessfulDelete"));
  EXPECT_EQ(h.cluster().Created().size(), 2u);
}

TEST(ControllerTest, SuspendParksTheKeyAndResumeStartsTheMostRecentSlot) {
  Harness h(At(12, 0, 30));
  h.cluster().PutCronJob(CronJobManifest("sr", "* * * * *", {{"suspend", true}}));
  h.RunUntil(At(12, 3, 30));
  EXPECT_TRUE(h.cluster().JobNames().empty());
  EXPECT_EQ(h.controller().NextDueNanos(), std::nullopt);  // asleep until a watch event

  h.cluster().PutCronJob(CronJobManifest("sr", "* * * * *", {{"suspend", false}}));
  h.Pump();
  EXPECT_EQ(Names(h.cluster().JobNames()), std::set<std::string>{Job("sr", 12, 3)});
  const auto decisions = h.Decisions();
  for (int m : {1, 2}) {
    const auto skips = Select(decisions, DecisionAction::kSkipped, At(12, m));
    ASSERT_EQ(skips.size(), 1u) << m;
    EXPECT_TRUE(skips[0].reason == "Suspended" || skips[0].reason == "Superseded") << m;
  }
  h.RunUntil(At(12, 4, 1));
  EXPECT_EQ(Names(h.cluster().JobNames()),
            (std::set<std::string>{Job("sr", 12, 3), Job("sr", 12, 4)}));
}

TEST(ControllerTest, HistoryCleanupKeepsTheLimits) {
  Harness h(At(12, 0, 30));
  h.cluster().PutCronJob(CronJobManifest(
      "hc", "* * * * *", {{"successfulJobsHistoryLimit", 2}, {"failedJobsHistoryLimit", 1}}));
  for (int m = 1; m <= 6; ++m) {
    h.RunUntil(At(12, m, 10));
    h.cluster().FinishJob("default", Job("hc", 12, m), m <= 4 ? "Complete" : "Failed");
    h.Pump();
  }
  h.RunUntil(At(12, 7, 1));
  EXPECT_EQ(Names(h.cluster().JobNames()),
            (std::set<std::string>{Job("hc", 12, 3), Job("hc", 12, 4), Job("hc", 12, 6),
                                   Job("hc", 12, 7)}));
  std::set<std::string> deleted;
  for (const auto& d : Select(h.Decisions(), DecisionAction::kDeleteJob)) {
    deleted.insert(d.job_name.value_or(""));
  }
  EXPECT_EQ(deleted, (std::set<std::string>{Job("hc", 12, 1), Job("hc", 12, 2), Job("hc", 12, 5)}));
}

TEST(ControllerTest, RestartAfterMissedSlotsStartsOnlyTheMostRecent) {
  Harness h(At(12, 0, 30));
  h.cluster().PutCronJob(CronJobManifest("rs", "* * * * *"));
  h.RunUntil(At(12, 1, 1));
  h.Close();  // the controller is down from 12:01:01 to 12:10:30
  h.clock().AdvanceTo(At(12, 10, 30));
  h.Open();
  ASSERT_TRUE(h.controller().EnqueueAll().ok());
  h.Pump();
  EXPECT_EQ(Names(h.cluster().JobNames()),
            (std::set<std::string>{Job("rs", 12, 1), Job("rs", 12, 10)}));
  const auto decisions = h.Decisions();
  for (int m = 1; m <= 10; ++m) {
    const auto created = Select(decisions, DecisionAction::kCreateJob, At(12, m));
    const auto skipped = Select(decisions, DecisionAction::kSkipped, At(12, m));
    EXPECT_EQ(created.size() + skipped.size(), 1u) << "slot 12:" << m;  // exactly one terminal
    if (m >= 2 && m <= 9) {
      ASSERT_EQ(skipped.size(), 1u) << m;
      EXPECT_EQ(skipped[0].reason, "Superseded");
      EXPECT_EQ(skipped[0].cause.trigger, "startup");
    }
  }
}

// ControllerStats::unaccounted_fire_times (cronledger_unaccounted_fire_times): fire times that
// came due more than kUnaccountedGrace ago with no pass since the last one that accounted.
TEST(ControllerTest, FireTimesNoPassHasAccountedAreCountedUntilAPassAccountsThem) {
  Harness h(At(12, 0, 30));
  h.cluster().PutCronJob(CronJobManifest("ua", "* * * * *"));
  h.cluster().PutCronJob(CronJobManifest("asleep", "* * * * *", {{"suspend", true}}));
  h.Pump();
  EXPECT_EQ(h.controller().Stats().unaccounted_fire_times, 0u);

  // The workers run no pass (a stalled controller): 12:01 is due, but within the grace.
  h.clock().AdvanceTo(At(12, 1, 5));
  EXPECT_EQ(h.controller().Stats().unaccounted_fire_times, 0u);
  h.clock().AdvanceTo(At(12, 1, 10, 100));
  EXPECT_EQ(h.controller().Stats().unaccounted_fire_times, 1u);
  // 12:01, 12:02, 12:03 of "ua"; the suspended CronJob expects none.
  h.clock().AdvanceTo(At(12, 3, 30));
  EXPECT_EQ(h.controller().Stats().unaccounted_fire_times, 3u);
  // A replica that no longer owns the key does not count it.
  h.controller().SetKeyFilter([](const std::string& key) { return key != "default/ua"; });
  EXPECT_EQ(h.controller().Stats().unaccounted_fire_times, 0u);
  h.controller().SetKeyFilter({});

  // The pass accounts them all (12:03 created, 12:01 and 12:02 skipped as Superseded).
  h.Pump();
  EXPECT_EQ(h.controller().Stats().unaccounted_fire_times, 0u);
  EXPECT_EQ(Select(h.Decisions(), DecisionAction::kSkipped, At(12, 2)).size(), 1u);

  // Passes that fail do not account: 12:04 and 12:05 stay counted while creates fail.
  h.cluster().FailCalls("createJob", "InternalError", -1);
  h.RunUntil(At(12, 5, 30));
  EXPECT_EQ(h.controller().Stats().unaccounted_fire_times, 2u);
  h.cluster().FailCalls("createJob", "InternalError", 0);
  h.RunUntil(At(12, 10, 30));  // the next retry succeeds: every fire time has its decision
  EXPECT_EQ(h.controller().Stats().unaccounted_fire_times, 0u);
  for (int m = 4; m <= 10; ++m) {
    const auto decisions = h.Decisions();
    EXPECT_EQ(Select(decisions, DecisionAction::kCreateJob, At(12, m)).size() +
                  Select(decisions, DecisionAction::kSkipped, At(12, m)).size(),
              1u)
        << m;
  }

  // A deleted CronJob expects nothing.
  h.cluster().DeleteCronJob("default", "ua");
  h.Pump();
  h.clock().AdvanceTo(At(12, 13, 30));
  EXPECT_EQ(h.controller().Stats().unaccounted_fire_times, 0u);
}

TEST(ControllerTest, TransientErrorsAreRetriedWithExponentialBackOff) {
  Harness h(At(12, 0, 30));
  h.cluster().PutCronJob(CronJobManifest("tr", "* * * * *"));
  h.cluster().FailCalls("createJob", "InternalError", 3);
  h.RunUntil(At(12, 1, 1));
  EXPECT_EQ(Names(h.cluster().JobNames()), std::set<std::string>{Job("tr", 12, 1)});
  std::vector<model::Tick> ticks;
  for (const auto& t : h.InputsOf<model::Tick>()) {
    if (t.now >= At(12, 1)) ticks.push_back(t);
  }
  ASSERT_GE(ticks.size(), 4u);
  EXPECT_EQ(ticks[0].now, At(12, 1, 0, 100));
  EXPECT_EQ(ticks[0].trigger, "timer");
  const Duration want[] = {milliseconds(5), milliseconds(10), milliseconds(20)};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ticks[i + 1].now.Sub(ticks[i].now), want[i]) << i;
    EXPECT_EQ(ticks[i + 1].trigger, "retry");
  }
  EXPECT_EQ(h.controller().Stats().errors, 3u);
  const auto events = h.cluster().Events();
  EXPECT_EQ(std::count_if(events.begin(), events.end(),
                          [](const reconciler::Event& e) { return e.reason == "FailedCreate"; }),
            3);

  // Success forgot the failures: the next error backs off from the base delay again.
  h.cluster().FailCalls("createJob", "InternalError", 1);
  h.RunUntil(At(12, 2, 1));
  std::vector<Time> later;
  for (const auto& t : h.InputsOf<model::Tick>()) {
    if (t.now >= At(12, 2)) later.push_back(t.now);
  }
  ASSERT_GE(later.size(), 2u);
  EXPECT_EQ(later[1].Sub(later[0]), milliseconds(5));
}

TEST(ControllerTest, PermanentErrorsDoNotHotLoop) {
  Harness h(At(12, 0, 30));
  h.cluster().PutCronJob(CronJobManifest("pe", "* * * * *"));
  h.cluster().FailCalls("createJob", "Forbidden", -1);
  const size_t passes = h.RunUntil(At(13, 0, 30));
  // One add pass, the 12:01 pass, then back-off 5 ms * 2^n: 18 retries reach the 1000 s cap
  // after ~1311 s, then one retry per 1000 s. 60 schedule slots must not mean 60+ passes.
  EXPECT_GE(passes, 20u);
  EXPECT_LE(passes, 23u);
  const auto ticks = h.InputsOf<model::Tick>();
  ASSERT_GE(ticks.size(), 3u);
  EXPECT_EQ(ticks.back().now.Sub(ticks[ticks.size() - 2].now), seconds(1000));
  EXPECT_TRUE(h.cluster().JobNames().empty());
}

namespace handlers {

constexpr const char* kUidA = "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0";  // canonical: kept exactly
constexpr const char* kUidB = "uid-b";                                 // other: kept as a hash

model::Json JobObject(const std::string& name, const std::string& uid, const std::string& rv,
                      const std::string& owner, const std::string& owner_uid) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "Job"},
          {"metadata",
           {{"name", name},
            {"namespace", "default"},
            {"uid", uid},
            {"resourceVersion", rv},
            {"ownerReferences", model::Json::array({{{"apiVersion", "batch/v1"},
                                                     {"kind", "CronJob"},
                                                     {"name", owner},
                                                     {"uid", owner_uid},
                                                     {"controller", true}}})}}},
          {"spec", {{"template", {{"spec", {{"containers", model::Json::array()}}}}}}},
          {"status", model::Json::object()}};
}

// The CronJobs that got a pass since the last Take(), by name (a pass that changes nothing leaves
// no Tick, docs/controller.md "Unrecorded passes": ControllerOptions::before_pass sees it).
class PassesRun {
 public:
  ControllerOptions Options() {
    ControllerOptions o;
    o.before_pass = [this](const std::string& key) {
      std::lock_guard<std::mutex> l(mu_);
      keys_.insert(key.substr(key.find('/') + 1));
    };
    return o;
  }
  std::multiset<std::string> Take() {
    std::lock_guard<std::mutex> l(mu_);
    return std::exchange(keys_, {});
  }

 private:
  std::mutex mu_;
  std::multiset<std::string> keys_;
};

void IngestAndRun(Harness& h, model::WatchEventType type, const model::Json& object) {
  auto ev = MakeWatchEvent(type, object);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  ASSERT_TRUE(h.controller().Ingest({*ev}).ok());
  ASSERT_TRUE(h.controller().RunReady().ok());
}

}  // namespace handlers

// The handlers' in-memory facts (compact uids: exact for canonical UUIDs, hashed otherwise) give
// the docs/semantics.md §2 reactions: a Job's owner is enqueued only when the reference's uid is
// the CronJob's, a re-owned Job enqueues the old and the new owner, a resync (same resourceVersion)
// nothing, and a DELETED of another incarnation leaves the object known (the next event is an
// update).
TEST(ControllerTest, JobHandlersResolveOwnersByUidAndFoldDeletesPerIncarnation) {
  using handlers::IngestAndRun;
  using handlers::JobObject;
  using handlers::kUidA;
  using handlers::kUidB;
  using model::WatchEventType;
  handlers::PassesRun passes;
  Harness h(At(12, 0, 30), passes.Options());
  model::Json a = CronJobManifest("a", "0 0 1 1 *");
  a["metadata"]["uid"] = kUidA;
  model::Json b = CronJobManifest("b", "0 0 1 1 *");
  b["metadata"]["uid"] = kUidB;
  h.cluster().PutCronJob(a);
  h.cluster().PutCronJob(b);
  h.Pump();
  passes.Take();
  using Set = std::multiset<std::string>;

  const std::string j1_uid = "11111111-2222-4333-8444-555555555555";
  IngestAndRun(h, WatchEventType::kAdded, JobObject("j1", j1_uid, "10", "a", kUidA));
  EXPECT_EQ(passes.Take(), Set{"a"});
  // A reference to "a" with another uid (one differing in a single nibble, and a non-UUID one)
  // is not "a"'s Job.
  IngestAndRun(h, WatchEventType::kAdded,
               JobObject("j2", "j2-uid", "11", "a", "0f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f1"));
  IngestAndRun(h, WatchEventType::kAdded, JobObject("j3", "j3-uid", "12", "b", "uid-b2"));
  EXPECT_EQ(passes.Take(), Set{});
  // Re-owned to "b": both owners get a pass. The same resourceVersion again: a resync, nothing.
  IngestAndRun(h, WatchEventType::kModified, JobObject("j1", j1_uid, "13", "b", kUidB));
  EXPECT_EQ(passes.Take(), (Set{"a", "b"}));
  IngestAndRun(h, WatchEventType::kModified, JobObject("j1", j1_uid, "13", "b", kUidB));
  EXPECT_EQ(passes.Take(), Set{});
  // A DELETED of another incarnation of j1 leaves j1 known: its next change is an update.
  IngestAndRun(h, WatchEventType::kDeleted,
               JobObject("j1", "11111111-2222-4333-8444-555555555556", "14", "b", kUidB));
  EXPECT_EQ(passes.Take(), Set{"b"});
  IngestAndRun(h, WatchEventType::kModified, JobObject("j1", j1_uid, "15", "b", kUidB));
  EXPECT_EQ(passes.Take(), Set{"b"});
  // Its own DELETED removes it: an ADDED afterwards is an add.
  IngestAndRun(h, WatchEventType::kDeleted, JobObject("j1", j1_uid, "16", "b", kUidB));
  IngestAndRun(h, WatchEventType::kAdded, JobObject("j1", j1_uid, "17", "b", kUidB));
  EXPECT_EQ(passes.Take(), (Set{"b", "b"}));
}

}  // namespace
}  // namespace cronledger::controller
