// upstream TestControllerV2SyncCronJob: every row (decide_upstream_rows.cc) run through Decide()
// with upstream's fakes (fakeJobControl / fakeCJControl) emulated as an API callback.
#include <gtest/gtest.h>

#include <sstream>

#include "reconciler/api_emulator.h"
#include "reconciler/decide.h"
#include "reconciler/decide_test_util.h"
#include "reconciler/decide_upstream_rows.h"
#include "reconciler/job_builder.h"

namespace cronledger::reconciler {
namespace {

using model::ApiOutcome;
using model::ApiVerb;
using upstream::SyncRow;

model::Json JobSpecJson() {
  return {{"parallelism", 1},
          {"completions", 1},
          {"template",
           {{"metadata", {{"labels", {{"foo", "bar"}}}}},
            {"spec", {{"containers", model::Json::array({{{"image", "foo/bar"}}})}}}}}};
}

// upstream cronJob() with the row's spec fields applied.
model::CronJob BaseCronJob(const SyncRow& row) {
  model::CronJob cj = testing::CronJobWith(row.schedule, upstream::kJustBeforeTheHour, {});
  cj.spec.concurrency_policy = row.policy;
  cj.spec.suspend = row.suspend;
  if (row.time_zone) cj.spec.time_zone = row.time_zone;
  cj.spec.starting_deadline_seconds = row.deadline;
  cj.spec.successful_jobs_history_limit = row.successful_jobs_history_limit;
  cj.spec.job_template.labels = {{"a", "b"}};
  cj.spec.job_template.annotations = {{"x", "y"}};
  cj.spec.job_template.spec = JobSpecJson();
  return cj;
}

// upstream getJobFromTemplate2 + the test's UID/namespace.
model::Job JobFor(const model::CronJob& cj, Time created) {
  auto json = BuildJob(cj, created, testing::Tzdb());
  EXPECT_TRUE(json.ok());
  auto job = model::DecodeJob(*json);
  EXPECT_TRUE(job.ok());
  job->metadata.uid = "1234";
  return *job;
}

model::ObjectReference RefFor(const model::Job& job) {
  model::ObjectReference ref;
  ref.api_version = "batch/v1";
  ref.kind = "Job";
  ref.namespace_ = job.metadata.namespace_;
  ref.name = job.metadata.name;
  ref.uid = job.metadata.uid;
  return ref;
}

struct Fixture {
  SyncInput input;
  model::CronJob real_cj;  // what the fresh GET returns
  std::optional<model::Job> job;
};

Fixture Build(const SyncRow& row) {
  Fixture f;
  model::CronJob cj = BaseCronJob(row);
  f.real_cj = cj;
  if (row.ran_previously) {
    cj.metadata.creation_timestamp =
        row.cronjob_creation_time.value_or(upstream::kJustBeforeThePriorHour);
    cj.status.last_schedule_time =
        row.last_schedule_time.value_or(upstream::kJustAfterThePriorHour);
    model::Job job = JobFor(cj, row.job_creation_time);
    const model::ObjectReference ref = RefFor(job);
    if (row.job_present_in_cj_active_status) cj.status.active = {ref};
    if (row.still_active) {
      f.real_cj.status.active = {ref};
    } else {
      job.status.completion_time = row.job_creation_time.AddSeconds(10);
      job.status.conditions.push_back({"Complete", "True", model::Json::object()});
    }
    if (!row.job_still_not_found_in_lister) f.input.jobs.push_back(job);
    f.job = job;
  } else if (row.cronjob_creation_time) {
    cj.metadata.creation_timestamp = row.cronjob_creation_time;
  }
  f.input.cron_job = cj;
  f.input.now = row.now;
  f.input.tzdb = &testing::Tzdb();
  // The upstream test calls syncCronJob directly: no history cleanup.
  f.input.options.history_cleanup = false;
  return f;
}

struct FakeControl {
  const SyncRow& row;
  const Fixture& fixture;
  std::vector<model::Json> created;
  std::vector<std::string> deleted;

  ApiOutcome Perform(const model::ApiCall& call) {
    const bool job = call.kind == model::ApiKind::kJob;
    switch (call.verb) {
      case ApiVerb::kGet:
        if (!job) return ApiOutcome::Ok(model::EncodeCronJob(fixture.real_cj));
        if (row.job_get_error) return Error(row.job_get_error, call);
        return ApiOutcome::Ok(fixture.job ? model::EncodeJob(*fixture.job) : nullptr);
      case ApiVerb::kCreate: {
        if (row.job_create_error) return Error(row.job_create_error, call);
        created.push_back(call.object);
        model::Json resp = call.object;
        resp["metadata"]["uid"] = "test-uid";
        return ApiOutcome::Ok(resp);
      }
      case ApiVerb::kDelete:
        if (row.job_get_error) return Error(row.job_get_error, call);
        deleted.push_back(call.name);
        return ApiOutcome::Ok(nullptr);
      case ApiVerb::kUpdateStatus:
        return ApiOutcome::Ok(call.object);
    }
    return ApiOutcome::Error("BadRequest", "unexpected call");
  }

  static ApiOutcome Error(const std::string& reason, const model::ApiCall& call) {
    return ApiOutcome::Error(reason, EmulatedApi::ErrorMessage(reason, call));
  }
};

std::string Reasons(const std::vector<Event>& events) {
  std::string out;
  for (const auto& e : events) out += (out.empty() ? "" : ",") + e.reason;
  return out;
}

TEST(UpstreamSyncCronJob, EveryRow) {
  ASSERT_EQ(upstream::kSyncRowCount, 75u);
  for (size_t i = 0; i < upstream::kSyncRowCount; ++i) {
    const SyncRow& row = upstream::kSyncRows[i];
    SCOPED_TRACE(row.name);
    const Fixture f = Build(row);
    FakeControl control{row, f, {}, {}};
    const SyncResult r =
        RunPass(f.input, [&](const model::ApiCall& c) { return control.Perform(c); });

    if (row.expect_err) {
      EXPECT_TRUE(r.error.has_value());
    }
    if (row.expect_requeue_after) {
      ASSERT_TRUE(r.requeue_after.has_value());
      EXPECT_EQ(*r.requeue_after, row.expected_requeue_duration);
    }
    EXPECT_EQ(r.status_changed, row.expect_update_status);
    if (row.ran_previously && !row.still_active) {
      EXPECT_EQ(r.status.last_successful_time, row.job_creation_time.AddSeconds(10));
    }
    ASSERT_EQ(control.created.size(), row.expect_create ? 1u : 0u);
    for (const auto& job : control.created) {
      const auto& owner = job["metadata"]["ownerReferences"][0];
      EXPECT_EQ(owner["apiVersion"], "batch/v1");
      EXPECT_EQ(owner["kind"], "CronJob");
      EXPECT_EQ(owner["name"], "mycronjob");
      EXPECT_EQ(owner["uid"], "1a2b3c");
      EXPECT_EQ(owner["controller"], true);
      ASSERT_NE(row.job, nullptr);
      EXPECT_EQ(job["metadata"]["name"], row.job);
    }
    EXPECT_EQ(control.deleted.size(), row.expect_delete ? 1u : 0u);
    int expected_events = row.expected_warnings + (row.expect_create ? 1 : 0) +
                          (row.expect_delete ? 1 : 0) + (row.expect_completed ? 1 : 0);
    if (std::string(row.name) == "still active, is time, F") ++expected_events;
    EXPECT_EQ(static_cast<int>(r.events.size()), expected_events);
    int warnings = 0;
    for (const auto& e : r.events) warnings += e.type == "Warning" ? 1 : 0;
    EXPECT_EQ(warnings, row.expected_warnings);
    EXPECT_EQ(Reasons(r.events), row.events);
  }
}

}  // namespace
}  // namespace cronledger::reconciler
