// Ported from upstream cronjob_controllerv2_test.go (TestControllerV2UpdateCronJob,
// TestControllerV2GetJobsToBeReconciled, TestControllerV2CleanupFinishedJobs,
// TestControllerV2JobAlreadyExistsButNotInActiveStatus / ...ButDifferentOwner) and utils_test.go
// (TestGetJobFromTemplate2, TestByJobStartTime).
#include <gtest/gtest.h>

#include <algorithm>

#include "reconciler/api_emulator.h"
#include "reconciler/cronjob_update.h"
#include "reconciler/decide.h"
#include "reconciler/decide_test_util.h"
#include "reconciler/job_builder.h"

namespace cronledger::reconciler {
namespace {

using namespace std::chrono_literals;
using model::ApiVerb;
using testing::T;
using testing::Tzdb;

model::Job MakeJob(const std::string& ns, const std::string& name, const std::string& owner,
                   std::optional<Time> start = std::nullopt) {
  model::Job job;
  job.api_version = "batch/v1";
  job.kind = "Job";
  job.metadata.namespace_ = ns;
  job.metadata.name = name;
  job.metadata.uid = "uid-" + name;
  if (!owner.empty()) {
    model::OwnerReference ref;
    ref.name = owner;
    ref.controller = true;
    job.metadata.owner_references.push_back(ref);
  }
  job.status.start_time = start;
  return job;
}

TEST(UpstreamUpdateCronJob, RequeueDelays) {
  const Time now = T("2016-05-19T09:59:59Z");  // justASecondBeforeTheHour
  const Time last = T("2016-05-19T09:59:00Z");
  struct Row {
    const char* name;
    const char* old_schedule;
    const char* new_schedule;
    std::optional<std::string> old_tz, new_tz;
    bool enqueue;
    Duration delay;
  } rows[] = {
      {"spec.template changed", "", "", {}, {}, true, 0s},
      {"spec.schedule changed", "30 * * * *", "*/1 * * * *", {}, {}, true, 1s + 100ms},
      {"spec.schedule with @every changed - cadence decrease",
       "@every 1m",
       "@every 3m",
       {},
       {},
       true,
       2min + 1s + 100ms},
      {"spec.schedule with @every changed - cadence increase",
       "@every 3m",
       "@every 1m",
       {},
       {},
       true,
       1s + 100ms},
      {"spec.timeZone not changed", "", "", "America/New_York", "America/New_York", true, 0s},
      // The new (empty) schedule does not parse: UnParseableCronJobSchedule, no enqueue; upstream's
      // fake queue therefore reports delay 0.
      {"spec.timeZone changed", "", "", "America/New_York", {}, false, 0s},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    auto old_cj = testing::CronJobWith(row.old_schedule, std::nullopt, last);
    auto new_cj = testing::CronJobWith(row.new_schedule, std::nullopt, last);
    old_cj.spec.time_zone = row.old_tz;
    new_cj.spec.time_zone = row.new_tz;
    new_cj.spec.job_template.labels = {{"a", "foo"}};
    const UpdateReaction r = OnCronJobUpdate(old_cj, new_cj, now, Tzdb());
    EXPECT_EQ(r.enqueue, row.enqueue);
    EXPECT_EQ(r.enqueue ? r.delay : Duration(0), row.delay);
    EXPECT_EQ(r.event.has_value(), !row.enqueue);
    if (r.event) {
      EXPECT_EQ(r.event->reason, "UnParseableCronJobSchedule");
    }
  }
}

TEST(UpstreamGetJobsToBeReconciled, SelectionByControllerName) {
  auto cj = testing::CronJobWith("* * * * *", std::nullopt, std::nullopt);
  cj.metadata.namespace_ = "foo-ns";
  cj.metadata.name = "fooer";
  auto names = [&](const std::vector<model::Job>& jobs) {
    std::vector<std::string> out;
    for (const auto* j : OwnedJobs(cj, jobs)) out.push_back(j->metadata.name);
    return out;
  };
  using V = std::vector<std::string>;
  EXPECT_EQ(names({MakeJob("foo-ns", "foo", ""), MakeJob("foo-ns", "foo1", ""),
                   MakeJob("foo-ns", "foo2", "")}),
            V{});
  EXPECT_EQ(names({MakeJob("foo-ns", "foo", ""), MakeJob("foo-ns", "foo1", "fooer"),
                   MakeJob("foo-ns", "foo2", "")}),
            V{"foo1"});
  EXPECT_EQ(names({MakeJob("bar-ns", "foo", "fooer"), MakeJob("bar-ns", "foo1", "")}), V{});
  cj.spec.job_template.labels = {{"key", "value"}};
  auto labelled = MakeJob("foo-ns", "foo-fooer-owner-ref", "fooer");
  labelled.metadata.labels = {{"key", "different-value"}};
  auto other = MakeJob("foo-ns", "foo-other-owner-ref", "another-cronjob");
  EXPECT_EQ(names({labelled, other}), V{"foo-fooer-owner-ref"});
}

// Runs one full sync (cleanup included) against the emulated API.
SyncResult RunSync(const model::CronJob& cj, std::vector<model::Job> jobs, Time now,
                   EmulatedApiOptions api, std::vector<model::ApiCall>* calls = nullptr) {
  SyncInput in;
  in.cron_job = cj;
  in.jobs = std::move(jobs);
  in.now = now;
  in.tzdb = &Tzdb();
  EmulatedApi emulated(std::move(api), model::EncodeCronJob(cj));
  return RunPass(in, [&](const model::ApiCall& call) {
    if (calls) calls->push_back(call);
    return emulated.Perform(call);
  });
}

std::vector<std::string> Deleted(const SyncResult& r) {
  std::vector<std::string> out;
  for (const auto& a : r.actions) {
    if (a.verb == ApiVerb::kDelete) out.push_back(a.name);
  }
  return out;
}

TEST(UpstreamCleanupFinishedJobs, DeletesBeforeSchedulingEvenIfCreateFails) {
  auto cj = testing::CronJobWith("0 * * * ?", std::nullopt, T("2016-05-19T09:01:00Z"));
  cj.metadata.namespace_ = "foo-ns";
  cj.metadata.name = "fooer";
  cj.metadata.uid.clear();
  cj.spec.successful_jobs_history_limit = 1;
  std::vector<model::Job> jobs = {
      MakeJob("foo-ns", "finished-job-started-hour-ago", "fooer", T("2016-05-19T08:59:00Z")),
      MakeJob("foo-ns", "finished-job-started-minute-ago", "fooer", T("2016-05-19T09:59:00Z"))};
  for (auto& j : jobs) j.status.conditions.push_back({"Complete", "True", model::Json::object()});
  EmulatedApiOptions api;
  api.errors["createJob"] = "InternalError";
  const SyncResult quota = RunSync(cj, jobs, T("2016-05-19T10:01:00Z"), api);
  EXPECT_EQ(Deleted(quota), std::vector<std::string>{"finished-job-started-hour-ago"});
  EXPECT_TRUE(quota.error.has_value());
  ASSERT_FALSE(quota.events.empty());
  EXPECT_EQ(quota.events.front().reason, "SuccessfulDelete");
  EXPECT_EQ(quota.events.back().reason, "FailedCreate");

  cj.spec.successful_jobs_history_limit = 2;
  jobs.pop_back();
  const SyncResult kept = RunSync(cj, jobs, T("2016-05-19T09:59:00Z"), {});
  EXPECT_TRUE(Deleted(kept).empty());
}

TEST(Cleanup, BothLimitsAbsentIsNoOpAndExplicitZeroKeepsNone) {
  auto cj = testing::CronJobWith("0 * * * ?", T("2016-05-19T08:00:00Z"), std::nullopt);
  std::vector<model::Job> jobs = {MakeJob("snazzycats", "b", "mycronjob"),
                                  MakeJob("snazzycats", "a", "mycronjob"),
                                  MakeJob("snazzycats", "f", "mycronjob")};
  jobs[0].status.conditions.push_back({"Complete", "True", model::Json::object()});
  jobs[1].status.conditions.push_back({"Complete", "True", model::Json::object()});
  jobs[2].status.conditions.push_back({"Failed", "True", model::Json::object()});
  const Time now = T("2016-05-19T08:30:00Z");
  EXPECT_TRUE(Deleted(RunSync(cj, jobs, now, {})).empty());
  cj.spec.successful_jobs_history_limit = 0;
  // No start times: ordered by name.
  EXPECT_EQ(Deleted(RunSync(cj, jobs, now, {})), (std::vector<std::string>{"a", "b"}));
  cj.spec.failed_jobs_history_limit = 0;
  EmulatedApiOptions failing;
  failing.errors["deleteJob"] = "InternalError";
  const SyncResult r = RunSync(cj, jobs, now, failing);
  ASSERT_EQ(r.events.size(), 3u);
  EXPECT_EQ(r.events[0].reason, "FailedDelete");
  EXPECT_EQ(r.events[0].message, "Deleted job: Internal error occurred: injected InternalError");
  // Nothing was deleted, yet the status is written: lastSuccessfulTime is "set" from the
  // absent completionTime of the succeeded jobs (docs/semantics.md §12).
  EXPECT_TRUE(r.status_changed);
  EXPECT_FALSE(r.status.last_successful_time.has_value());
}

// upstream TestControllerV2JobAlreadyExistsButNotInActiveStatus / ...ButDifferentOwner.
TEST(UpstreamJobAlreadyExists, AdoptsOwnJobAndIgnoresForeignOne) {
  auto cj = testing::CronJobWith("@every 1h", T("2016-05-19T09:59:00Z"), T("2016-05-19T08:59:00Z"));
  cj.spec.concurrency_policy = "Forbid";
  const Time now = T("2016-05-19T09:59:00Z");
  const std::string slot_name = JobName("mycronjob", now);  // the slot is 09:59
  auto existing = BuildJob(cj, T("2016-05-19T09:01:00Z"), Tzdb());
  ASSERT_TRUE(existing.ok());
  (*existing)["metadata"]["uid"] = "1234";
  (*existing)["metadata"]["name"] = slot_name;
  EmulatedApiOptions api;
  api.jobs["snazzycats/" + slot_name] = *existing;
  std::vector<model::ApiCall> calls;
  const SyncResult own = RunSync(cj, {}, now, api, &calls);
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0].verb, ApiVerb::kCreate);
  // Exactly one GET, by the requested name, in the CronJob's namespace.
  EXPECT_EQ(calls[1].verb, ApiVerb::kGet);
  EXPECT_EQ(calls[1].namespace_, "snazzycats");
  EXPECT_EQ(calls[1].name, slot_name);
  EXPECT_EQ(calls[2].verb, ApiVerb::kUpdateStatus);
  ASSERT_EQ(own.status.active.size(), 1u);
  EXPECT_EQ(own.status.active[0].uid, "1234");
  EXPECT_EQ(own.status.active[0].name, slot_name);
  EXPECT_EQ(own.status.active[0].kind, "Job");
  EXPECT_EQ(own.status.active[0].api_version, "batch/v1");
  EXPECT_TRUE(own.events.empty());  // no SuccessfulCreate on the AlreadyExists path

  (*existing)["metadata"].erase("ownerReferences");
  api.jobs["snazzycats/" + slot_name] = *existing;
  calls.clear();
  const SyncResult foreign = RunSync(cj, {}, now, api, &calls);
  EXPECT_FALSE(foreign.status_changed);
  EXPECT_FALSE(foreign.requeue_after.has_value());
  EXPECT_FALSE(foreign.error.has_value());
  EXPECT_EQ(calls.size(), 2u);  // create, get; no status update
}

TEST(UpstreamGetJobFromTemplate2, NameLabelsAnnotations) {
  auto cj = testing::CronJobWith("* * * * ?", std::nullopt, std::nullopt);
  cj.spec.job_template.labels = {{"a", "b"}};
  cj.spec.job_template.spec = model::Json{{"activeDeadlineSeconds", 1}, {"manualSelector", false}};
  const Time scheduled = testing::Top();
  struct Row {
    const char* name;
    std::optional<std::string> tz;
    std::map<std::string, std::string> annotations;
    const char* want_timestamp;
    size_t want_annotations;
  } rows[] = {
      {"UTC timezone and one annotation", "UTC", {{"x", "y"}}, "2016-05-19T10:00:00Z", 2},
      {"nil timezone and one annotation", {}, {{"x", "y"}}, "2016-05-19T10:00:00Z", 2},
      {"correct timezone and multiple annotation",
       "Europe/Rome",
       {{"x", "y"}, {"z", "x"}},
       "2016-05-19T12:00:00+02:00",
       3},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    cj.spec.time_zone = row.tz;
    cj.spec.job_template.annotations = row.annotations;
    auto job = BuildJob(cj, scheduled, Tzdb());
    ASSERT_TRUE(job.ok());
    const auto& meta = (*job)["metadata"];
    EXPECT_EQ(meta["name"], "mycronjob-24394200");
    EXPECT_EQ(meta["labels"].size(), 1u);
    EXPECT_EQ(meta["annotations"].size(), row.want_annotations);
    EXPECT_EQ(meta["annotations"][kScheduledTimestampAnnotation], row.want_timestamp);
    EXPECT_EQ(meta["creationTimestamp"], "2016-05-19T10:00:00Z");
    EXPECT_EQ((*job)["spec"], cj.spec.job_template.spec.Tree());
    EXPECT_EQ(meta["ownerReferences"].size(), 1u);
    EXPECT_EQ(meta["ownerReferences"][0]["blockOwnerDeletion"], true);
  }
  EXPECT_EQ(JobName("mycronjob", Time::GoZero()), "mycronjob--1035593280");
  cj.spec.time_zone = "TZ=UTC";  // unloadable: the build fails (docs/semantics.md §6.11)
  EXPECT_FALSE(BuildJob(cj, scheduled, Tzdb()).ok());
}

// The whole requested Job, byte for byte (replay compares its canonical bytes): every member, a
// template annotation the scheduled-timestamp annotation overrides, a CRD CronJob's apiVersion in
// the owner reference, a time zone offset, and no labels member when the template has none.
TEST(UpstreamGetJobFromTemplate2, TheWholeJobByteForByte) {
  auto cj = testing::CronJobWith("* * * * ?", std::nullopt, std::nullopt);
  cj.api_version = "cronledger.io/v1";
  cj.metadata.namespace_ = "team-a";
  cj.metadata.uid = "cj-uid";
  cj.spec.time_zone = "Europe/Rome";
  cj.spec.job_template.annotations = {{kScheduledTimestampAnnotation, "user"}, {"a", "\"q\""}};
  cj.spec.job_template.spec = model::Json{{"template", {{"spec", {{"restartPolicy", "Never"}}}}}};
  auto job = BuildJob(cj, testing::Top(), Tzdb());
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(model::DumpJson(*job),
            R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"annotations":{"a":"\"q\"",)"
            R"("batch.kubernetes.io/cronjob-scheduled-timestamp":"2016-05-19T12:00:00+02:00"},)"
            R"("creationTimestamp":"2016-05-19T10:00:00Z","name":"mycronjob-24394200",)"
            R"("namespace":"team-a","ownerReferences":[{"apiVersion":"cronledger.io/v1",)"
            R"("blockOwnerDeletion":true,"controller":true,"kind":"CronJob","name":"mycronjob",)"
            R"("uid":"cj-uid"}]},"spec":{"template":{"spec":{"restartPolicy":"Never"}}}})");
  cj.api_version.clear();
  cj.spec.job_template.labels = {{"b", "2"}, {"a", "1"}};
  job = BuildJob(cj, testing::Top(), Tzdb());
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(model::DumpJson((*job)["metadata"]["labels"]), R"({"a":"1","b":"2"})");
  EXPECT_EQ((*job)["metadata"]["ownerReferences"][0]["apiVersion"], "batch/v1");
}

TEST(UpstreamByJobStartTime, SortOrder) {
  const Time now = T("2018-01-01T02:03:04Z");
  const Time later = T("2019-01-01T02:03:04Z");
  auto job = [](const char* name, std::optional<Time> start) {
    return MakeJob("ns", name, "", start);
  };
  auto sorted = [](std::vector<model::Job> jobs) {
    std::stable_sort(jobs.begin(), jobs.end(), JobStartedBefore);
    std::string out;
    for (const auto& j : jobs) out += j.metadata.name + (j.status.start_time ? "+" : "-");
    return out;
  };
  EXPECT_EQ(sorted({job("b", {}), job("a", {})}), "a-b-");
  EXPECT_EQ(sorted({job("a", {}), job("b", now)}), "b+a-");
  EXPECT_EQ(sorted({job("a", now), job("b", {})}), "a+b-");
  EXPECT_EQ(sorted({job("b", now), job("a", now)}), "a+b+");
  EXPECT_EQ(sorted({job("a", later), job("b", now)}), "b+a+");
}

}  // namespace
}  // namespace cronledger::reconciler
