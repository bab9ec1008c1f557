#include "controller/sim_cluster.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

#include "controller/sim_pump.h"
#include "model/inputs.h"

namespace cronledger::controller {
namespace {

using model::ApiCall;
using model::ApiKind;
using model::ApiVerb;
using model::Json;
using model::WatchEventType;
using std::chrono::seconds;

const Time kStart = Time::FromUnix(1'793'491'200);  // 2026-11-01T00:00:00Z

model::CronJob MakeCronJob(const std::string& name, const std::string& schedule) {
  auto cj = model::DecodeCronJob(Json{
      {"apiVersion", "cronledger.io/v1"},
      {"kind", "CronJob"},
      {"metadata",
       {{"name", name}, {"namespace", "ns"}, {"creationTimestamp", "2026-11-01T00:00:00Z"}}},
      {"spec",
       {{"schedule", schedule}, {"jobTemplate", {{"spec", {{"template", Json::object()}}}}}}}});
  CL_CHECK(cj.ok());
  return *cj;
}

ApiCall CreateJobCall(const std::string& name, const std::string& owner,
                      std::optional<int64_t> active_deadline = std::nullopt) {
  Json spec = {{"template", Json::object()}};
  if (active_deadline) spec["activeDeadlineSeconds"] = *active_deadline;
  Json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata",
               {{"name", name},
                {"namespace", "ns"},
                {"creationTimestamp", "2026-11-01T00:00:00Z"},
                {"ownerReferences", Json::array({{{"apiVersion", "batch/v1"},
                                                  {"kind", "CronJob"},
                                                  {"name", owner},
                                                  {"uid", "owner-uid"},
                                                  {"controller", true}}})}}},
              {"spec", spec}};
  return ApiCall{ApiVerb::kCreate, ApiKind::kJob, "ns", name, job};
}

ApiCall Call(ApiVerb verb, ApiKind kind, const std::string& name, Json object = nullptr) {
  return ApiCall{verb, kind, "ns", name, std::move(object)};
}

// Drives the cluster in virtual time to `until`, stopping at every event time, and returns the
// events in order.
std::vector<model::WatchEvent> RunUntil(SimCluster& cluster, ManualClock& clock, Time until) {
  std::vector<model::WatchEvent> all;
  for (;;) {
    for (auto& ev : cluster.TakeDueEvents(clock.Now())) all.push_back(std::move(ev));
    const auto next = cluster.NextEventTime();
    if (!next || *next > until) break;
    clock.AdvanceTo(*next);
  }
  clock.AdvanceTo(until);
  for (auto& ev : cluster.TakeDueEvents(clock.Now())) all.push_back(std::move(ev));
  return all;
}

std::string StreamBytes(uint64_t seed) {
  ManualClock clock(kStart);
  SimClusterOptions options;
  options.seed = seed;
  options.lifecycle.failure_rate = 0.2;
  SimCluster cluster(options, clock);
  EXPECT_TRUE(cluster.ApplyCronJob(MakeCronJob("cj", "* * * * *")).ok());
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    EXPECT_TRUE(cluster.Perform(CreateJobCall("cj-" + std::to_string(i), "cj")).ok());
    if (i % 7 == 3) {
      const auto del = Call(ApiVerb::kDelete, ApiKind::kJob, "cj-" + std::to_string(i - 1));
      EXPECT_TRUE(cluster.Perform(del).ok());
    }
    for (const auto& ev : RunUntil(cluster, clock, clock.Now().Add(seconds(7)))) {
      model::EncodeInput(model::Input(ev), &bytes);
    }
  }
  for (const auto& ev : RunUntil(cluster, clock, clock.Now().Add(std::chrono::hours(2)))) {
    model::EncodeInput(model::Input(ev), &bytes);
  }
  return bytes;
}

TEST(SimCluster, SameSeedSameEventStreamBytes) {
  const std::string a = StreamBytes(42);
  const std::string b = StreamBytes(42);
  EXPECT_GT(a.size(), 10'000u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, StreamBytes(43));
}

TEST(SimCluster, JobLifecycleAddedStartedFinished) {
  ManualClock clock(kStart);
  SimClusterOptions options;
  options.lifecycle.failure_rate = 0;
  SimCluster cluster(options, clock);
  const auto created = cluster.Perform(CreateJobCall("cj-1", "cj"));
  ASSERT_TRUE(created.ok()) << created.message;
  EXPECT_EQ(created.object["metadata"]["creationTimestamp"], "2026-11-01T00:00:00Z");
  EXPECT_EQ(created.object["metadata"]["resourceVersion"], "1");
  const std::string uid = created.object["metadata"]["uid"];
  EXPECT_EQ(uid.size(), 36u);

  const auto events = RunUntil(cluster, clock, kStart.Add(std::chrono::hours(2)));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, WatchEventType::kAdded);
  EXPECT_EQ(events[1].type, WatchEventType::kModified);
  EXPECT_EQ(events[2].type, WatchEventType::kModified);
  for (const auto& ev : events) {
    EXPECT_EQ(ev.uid, uid);
    EXPECT_EQ(ev.owner_name, "cj");
    EXPECT_EQ(ev.owner_uid, "owner-uid");
    EXPECT_EQ(ev.api_version, "batch/v1");
  }
  EXPECT_EQ(events[1].resource_version, "2");
  EXPECT_EQ(events[2].resource_version, "3");

  auto started = model::ParseJson(events[1].raw);
  ASSERT_TRUE(started.ok());
  EXPECT_EQ((*started)["status"]["active"], 1);
  auto start_time = ParseRfc3339((*started)["status"]["startTime"].get<std::string>());
  ASSERT_TRUE(start_time.ok());
  EXPECT_GE(start_time->Sub(kStart), seconds(1));
  EXPECT_LE(start_time->Sub(kStart), seconds(3));

  auto job = model::DecodeJob(*model::ParseJson(events[2].raw));
  ASSERT_TRUE(job.ok());
  EXPECT_TRUE(model::IsSucceeded(*job));
  ASSERT_TRUE(job->status.completion_time.has_value());
  EXPECT_EQ(cluster.JobCounts("ns/cj"), (SimJobCounts{.created = 1, .started = 1, .succeeded = 1}));
}

TEST(SimCluster, ActiveDeadlineFailsLongJobs) {
  ManualClock clock(kStart);
  SimClusterOptions options;
  options.lifecycle.failure_rate = 0;
  options.lifecycle.run_min = seconds(100);  // every run is longer than the deadline below
  options.lifecycle.run_max = seconds(100);
  SimCluster cluster(options, clock);
  ASSERT_TRUE(cluster.Perform(CreateJobCall("cj-1", "cj", 30)).ok());
  const auto events = RunUntil(cluster, clock, kStart.Add(std::chrono::hours(1)));
  ASSERT_EQ(events.size(), 3u);
  auto job = model::DecodeJob(*model::ParseJson(events[2].raw));
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(model::FinishedCondition(*job), "Failed");
  EXPECT_EQ(job->status.conditions[0].raw["reason"], "DeadlineExceeded");
  EXPECT_FALSE(job->status.completion_time.has_value());
  EXPECT_EQ(job->status.start_time->Add(seconds(30)).unix_seconds(),
            ParseRfc3339(job->status.conditions[0].raw["lastTransitionTime"].get<std::string>())
                ->unix_seconds());
}

TEST(SimCluster, CreateOfExistingNameIsAlreadyExists) {
  ManualClock clock(kStart);
  SimCluster cluster({}, clock);
  ASSERT_TRUE(cluster.Perform(CreateJobCall("cj-1", "cj")).ok());
  const auto again = cluster.Perform(CreateJobCall("cj-1", "cj"));
  EXPECT_EQ(again.reason, "AlreadyExists");
  EXPECT_EQ(again.message, "jobs.batch \"cj-1\" already exists");
  EXPECT_EQ(cluster.JobCount(), 1u);
  EXPECT_EQ(cluster.TakeDueEvents(clock.Now()).size(), 1u);  // one ADDED only
  EXPECT_EQ(cluster.JobCounts("ns/cj").already_exists, 1u);
}

TEST(SimCluster, DeleteRemovesTheJobEmitsDeletedAndCancelsItsLifecycle) {
  ManualClock clock(kStart);
  SimCluster cluster({}, clock);
  ASSERT_TRUE(cluster.Perform(CreateJobCall("cj-1", "cj")).ok());
  ASSERT_EQ(cluster.TakeDueEvents(clock.Now()).size(), 1u);
  const auto del = cluster.Perform(Call(ApiVerb::kDelete, ApiKind::kJob, "cj-1"));
  ASSERT_TRUE(del.ok());
  auto events = cluster.TakeDueEvents(clock.Now());
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].type, WatchEventType::kDeleted);
  EXPECT_EQ(events[0].resource_version, "2");
  EXPECT_EQ(cluster.Perform(Call(ApiVerb::kGet, ApiKind::kJob, "cj-1")).reason, "NotFound");
  EXPECT_EQ(cluster.Perform(Call(ApiVerb::kDelete, ApiKind::kJob, "cj-1")).reason, "NotFound");
  EXPECT_EQ(cluster.NextEventTime(), std::nullopt);  // the start transition died with the Job
  EXPECT_EQ(RunUntil(cluster, clock, kStart.Add(std::chrono::hours(1))).size(), 0u);
  const SimJobCounts c = cluster.JobCounts("ns/cj");
  EXPECT_EQ(c.deleted, 1u);
  EXPECT_EQ(c.deleted_running, 1u);
  EXPECT_EQ(c.running, 0u);

  // A re-created Job of the same name is a new object with a new uid.
  const auto first_uid = events[0].uid;
  const auto recreated = cluster.Perform(CreateJobCall("cj-1", "cj"));
  ASSERT_TRUE(recreated.ok());
  EXPECT_NE(recreated.object["metadata"]["uid"], first_uid);
}

TEST(SimCluster, StatusUpdateModifiesOnlyStatusAndChecksResourceVersion) {
  ManualClock clock(kStart);
  SimCluster cluster({}, clock);
  ASSERT_TRUE(cluster.ApplyCronJob(MakeCronJob("cj", "*/5 * * * *")).ok());
  auto added = cluster.TakeDueEvents(clock.Now());
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0].type, WatchEventType::kAdded);
  EXPECT_EQ(added[0].kind, model::ObjectKind::kCronJob);
  EXPECT_EQ(added[0].api_version, "cronledger.io/v1");
  EXPECT_EQ(added[0].uid.size(), 36u);  // derived from the seed: the manifest has none

  Json request = *model::ParseJson(added[0].raw);
  request["spec"]["schedule"] = "1 1 1 1 1";  // ignored: the status subresource
  request["status"] = {{"lastScheduleTime", "2026-11-01T00:05:00Z"}};
  const auto updated =
      cluster.Perform(Call(ApiVerb::kUpdateStatus, ApiKind::kCronJob, "cj", request));
  ASSERT_TRUE(updated.ok()) << updated.message;
  EXPECT_EQ(updated.object["status"]["lastScheduleTime"], "2026-11-01T00:05:00Z");
  EXPECT_EQ(updated.object["spec"]["schedule"], "*/5 * * * *");
  auto modified = cluster.TakeDueEvents(clock.Now());
  ASSERT_EQ(modified.size(), 1u);
  EXPECT_EQ(modified[0].type, WatchEventType::kModified);
  EXPECT_EQ(modified[0].resource_version, "2");
  EXPECT_EQ(*model::ParseJson(modified[0].raw), updated.object);

  // The request still carries resourceVersion 1: stale.
  const auto stale =
      cluster.Perform(Call(ApiVerb::kUpdateStatus, ApiKind::kCronJob, "cj", request));
  EXPECT_EQ(stale.reason, "Conflict");
  EXPECT_EQ(cluster.TakeDueEvents(clock.Now()).size(), 0u);

  const auto got = cluster.Perform(Call(ApiVerb::kGet, ApiKind::kCronJob, "cj"));
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got.object, updated.object);
  const auto missing = cluster.Perform(Call(ApiVerb::kGet, ApiKind::kCronJob, "nope"));
  EXPECT_EQ(missing.reason, "NotFound");
  EXPECT_EQ(missing.message, "cronjobs.batch \"nope\" not found");
  EXPECT_EQ(
      cluster.Perform(Call(ApiVerb::kUpdateStatus, ApiKind::kCronJob, "nope", request)).reason,
      "NotFound");
}

TEST(SimCluster, DeletingACronJobCollectsItsJobs) {
  ManualClock clock(kStart);
  SimCluster cluster({}, clock);
  ASSERT_TRUE(cluster.ApplyCronJob(MakeCronJob("cj", "* * * * *")).ok());
  const std::string uid = cluster.TakeDueEvents(clock.Now())[0].uid;
  ApiCall create = CreateJobCall("cj-1", "cj");
  create.object["metadata"]["ownerReferences"][0]["uid"] = uid;
  ASSERT_TRUE(cluster.Perform(create).ok());
  ASSERT_TRUE(cluster.Perform(CreateJobCall("other-1", "other")).ok());
  ASSERT_EQ(cluster.TakeDueEvents(clock.Now()).size(), 2u);
  ASSERT_TRUE(cluster.DeleteCronJob("ns", "cj").ok());
  const auto events = cluster.TakeDueEvents(clock.Now());
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, model::ObjectKind::kCronJob);
  EXPECT_EQ(events[1].name, "cj-1");
  EXPECT_EQ(events[1].type, WatchEventType::kDeleted);
  EXPECT_EQ(cluster.JobCount(), 1u);
  EXPECT_TRUE(cluster.DeleteCronJob("ns", "cj").IsNotFound());
}

TEST(SimCluster, RecordEventKeepsABoundedLogAndCountsEveryReason) {
  ManualClock clock(kStart);
  SimClusterOptions options;
  options.event_log_capacity = 3;
  SimCluster cluster(options, clock);
  const model::CronJobRef ref{"ns", "cj", "u"};
  for (int i = 0; i < 5; ++i) {
    cluster.RecordEvent(ref, {"Normal", "SuccessfulCreate", "Created job cj-" + std::to_string(i)});
  }
  cluster.RecordEvent(ref, {"Warning", "FailedCreate", "x"});
  const auto recent = cluster.RecentEvents();
  ASSERT_EQ(recent.size(), 3u);
  EXPECT_EQ(recent[0].event.message, "Created job cj-3");
  EXPECT_EQ(recent[2].event.reason, "FailedCreate");
  EXPECT_EQ(cluster.EventCountsByReason(),
            (std::map<std::string, uint64_t>{{"FailedCreate", 1}, {"SuccessfulCreate", 5}}));
}

TEST(SimPump, DeliversCallsAtOnceAndTransitionsWhenTheClockReachesThem) {
  ManualClock clock(kStart);
  SimClusterOptions options;
  options.lifecycle.start_delay_min = seconds(2);
  options.lifecycle.start_delay_max = seconds(2);
  SimCluster cluster(options, clock);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<model::WatchEvent> got;
  SimEventPump pump(cluster, clock, [&](std::vector<model::WatchEvent> events) {
    std::lock_guard lock(mu);
    for (auto& ev : events) got.push_back(std::move(ev));
    cv.notify_all();
    return Status::Ok();
  });
  pump.Start();
  ASSERT_TRUE(cluster.Perform(CreateJobCall("cj-1", "cj")).ok());
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return got.size() >= 1; });
    EXPECT_EQ(got[0].type, WatchEventType::kAdded);
  }
  clock.Advance(seconds(2));  // the start transition is due now
  {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return got.size() >= 2; });
    EXPECT_EQ(got[1].type, WatchEventType::kModified);
  }
  pump.Stop();
  EXPECT_EQ(pump.Stats().events, 2u);
  EXPECT_TRUE(pump.FirstError().ok());
}

}  // namespace
}  // namespace cronledger::controller
