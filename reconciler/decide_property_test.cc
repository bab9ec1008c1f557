// Properties of Decide() over generated, well-formed objects (fixed seed; the randomness lives in
// the test only): the same input gives the same bytes, and no input crashes or throws.
#include <gtest/gtest.h>

#include <random>

#include "reconciler/api_emulator.h"
#include "reconciler/decide.h"
#include "reconciler/decide_codec.h"
#include "reconciler/decide_test_util.h"

namespace cronledger::reconciler {
namespace {

class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Coin() { return Int(0, 1) == 1; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int>(v.size()) - 1))];
  }
  Time Instant(Time base) { return base.AddSeconds(Int(-400000, 400000)); }

 private:
  std::mt19937_64 rng_;
};

const std::vector<std::string> kSchedules = {"0 * * * ?",
                                             "*/5 * * * *",
                                             "@every 90s",
                                             "@every 1h",
                                             "30 6-16/4 * * 1-5",
                                             "59 23 31 2 *",
                                             "TZ=UTC 0 * * * *",
                                             "CRON_TZ=Europe/Rome 15 2 * * *",
                                             "TZ=0",
                                             "",
                                             "bogus",
                                             "* * * * * *",
                                             "@hourly",
                                             "0 0 29 2 *",
                                             "*/30 1-3 * * 0"};
const std::vector<std::optional<std::string>> kZones = {
    std::nullopt, "UTC", "America/New_York", "Europe/Rome", "Pacific/Chatham", "Mars/Olympus", ""};
const std::vector<std::string> kPolicies = {"Allow", "Forbid", "Replace", "", "Sometimes"};
const std::vector<std::string> kReasons = {
    "", "", "", "NotFound", "AlreadyExists", "Conflict", "InternalError", "NamespaceTerminating"};

model::Job RandomJob(Gen& g, const model::CronJob& cj, int i, Time base) {
  model::Job job;
  job.api_version = "batch/v1";
  job.kind = "Job";
  job.metadata.name = g.Coin() ? cj.metadata.name + "-" + std::to_string(24394200 + g.Int(-3, 3))
                               : "job-" + std::to_string(i);
  job.metadata.namespace_ = g.Int(0, 5) == 0 ? "elsewhere" : cj.metadata.namespace_;
  job.metadata.uid = "uid-" + std::to_string(g.Int(0, 6));
  if (g.Int(0, 4) != 0) {
    model::OwnerReference ref;
    ref.name = g.Int(0, 5) == 0 ? "other" : cj.metadata.name;
    ref.uid = g.Coin() ? cj.metadata.uid : "x";
    ref.controller = g.Int(0, 5) != 0;
    job.metadata.owner_references.push_back(ref);
  }
  if (g.Coin()) job.status.start_time = g.Instant(base);
  if (g.Coin()) job.status.completion_time = g.Instant(base);
  const int c = g.Int(0, 3);
  if (c == 1) job.status.conditions.push_back({"Complete", "True", model::Json::object()});
  if (c == 2) job.status.conditions.push_back({"Failed", "True", model::Json::object()});
  if (c == 3) job.status.conditions.push_back({"Complete", "False", model::Json::object()});
  return job;
}

struct Case {
  SyncInput input;
  EmulatedApiOptions api;
};

Case RandomCase(Gen& g) {
  const Time base = testing::T("2016-05-19T10:00:00Z");
  Case c;
  model::CronJob cj = testing::CronJobWith(g.Pick(kSchedules), std::nullopt, std::nullopt);
  if (g.Int(0, 6) != 0) cj.metadata.creation_timestamp = g.Instant(base);
  if (g.Coin()) cj.status.last_schedule_time = g.Instant(base);
  if (g.Int(0, 9) == 0) cj.metadata.deletion_timestamp = g.Instant(base);
  cj.spec.time_zone = g.Pick(kZones);
  cj.spec.concurrency_policy = g.Pick(kPolicies);
  if (g.Coin()) cj.spec.suspend = g.Int(0, 3) == 0;
  if (g.Coin())
    cj.spec.starting_deadline_seconds = g.Pick(std::vector<int64_t>{0, 10, 3600, -5, INT64_MAX});
  if (g.Coin()) cj.spec.successful_jobs_history_limit = g.Int(-1, 3);
  if (g.Coin()) cj.spec.failed_jobs_history_limit = g.Int(-1, 3);
  const int jobs = g.Int(0, 6);
  for (int i = 0; i < jobs; ++i) c.input.jobs.push_back(RandomJob(g, cj, i, base));
  for (const auto& job : c.input.jobs) {
    if (g.Coin()) {
      model::ObjectReference ref;
      ref.api_version = "batch/v1";
      ref.kind = "Job";
      ref.namespace_ = job.metadata.namespace_;
      ref.name = job.metadata.name;
      ref.uid = g.Coin() ? job.metadata.uid : "gone";
      cj.status.active.push_back(ref);
    }
    if (g.Coin())
      c.api.jobs[job.metadata.namespace_ + "/" + job.metadata.name] = model::EncodeJob(job);
  }
  for (const char* key : {"getJob", "deleteJob", "createJob", "getCronJob", "updateStatus"}) {
    if (g.Int(0, 3) == 0) c.api.errors[key] = g.Pick(kReasons);
  }
  if (g.Int(0, 5) == 0) c.api.cron_job = model::Json(nullptr);
  if (g.Coin()) {
    c.input.accounting.accounted_through = g.Instant(base);
    if (g.Coin()) c.input.accounting.pending_slot = g.Instant(base);
    c.input.accounting.pending_reason = g.Coin() ? "ConcurrencyForbid" : "";
  }
  c.input.cron_job = cj;
  c.input.now = g.Int(0, 20) == 0 ? Time::GoZero() : g.Instant(base);
  c.input.options.history_cleanup = g.Int(0, 4) != 0;
  c.input.tzdb = &testing::Tzdb();
  return c;
}

std::string RunToBytes(const Case& c) {
  EmulatedApi api(c.api, model::EncodeCronJob(c.input.cron_job));
  const SyncResult r =
      RunPass(c.input, [&](const model::ApiCall& call) { return api.Perform(call); });
  return model::DumpJson(EncodeSyncResult(r)) +
         model::DumpJson(EncodeAccountingState(r.accounting));
}

TEST(DecideProperties, DeterministicAndTotalOnGeneratedInputs) {
  Gen g(20160519);
  int with_actions = 0;
  for (int i = 0; i < 400; ++i) {
    SCOPED_TRACE(i);
    const Case c = RandomCase(g);
    std::string first;
    EXPECT_NO_THROW(first = RunToBytes(c));
    EXPECT_EQ(RunToBytes(c), first);
    with_actions += first.find("\"verb\"") != std::string::npos ? 1 : 0;
  }
  EXPECT_GT(with_actions, 25);  // the generator reaches the API-calling branches
}

// Runs a pass as a driver does: performs each call on `api` and feeds its outcome back into `in`.
Step DecideWithEmulatedApi(EmulatedApi& api, SyncInput* in) {
  Step step = Decide(*in);
  while (step.next_call) {
    in->outcomes.push_back(api.Perform(*step.next_call));
    step = Decide(*in);
  }
  return step;
}

TEST(DecideProperties, StepwiseReplayMatchesOneShot) {
  // Feeding outcomes one by one (as a driver does) or all at once gives the same result.
  Gen g(7);
  for (int i = 0; i < 150; ++i) {
    SCOPED_TRACE(i);
    Case c = RandomCase(g);
    EmulatedApi api(c.api, model::EncodeCronJob(c.input.cron_job));
    SyncInput in = c.input;
    Step step = DecideWithEmulatedApi(api, &in);
    const std::string replayed = model::DumpJson(EncodeSyncResult(Decide(in).result));
    EXPECT_EQ(model::DumpJson(EncodeSyncResult(step.result)), replayed);
    EXPECT_EQ(step.result.actions.size(), in.outcomes.size());
  }
}

TEST(DecideProperties, BorrowedInputWithoutCallObjectsDecidesTheSame) {
  // Replay's form (SyncInputRef over objects it does not own, no call objects) gives the same
  // result as SyncInput except for the objects of the calls.
  Gen g(20240101);
  int with_objects = 0;
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE(i);
    Case c = RandomCase(g);
    EmulatedApi api(c.api, model::EncodeCronJob(c.input.cron_job));
    SyncInput in = c.input;
    Step step = DecideWithEmulatedApi(api, &in);
    std::vector<const model::Job*> jobs;
    for (const model::Job& job : in.jobs) jobs.push_back(&job);
    SyncInputRef ref{&in.cron_job, jobs, in.now, in.options, in.tzdb, &in.accounting, in.outcomes};
    ref.options.call_objects = DecideOptions::CallObjects::kNone;
    Step borrowed = Decide(ref);
    ASSERT_FALSE(borrowed.next_call.has_value());
    ASSERT_EQ(borrowed.result.actions.size(), step.result.actions.size());
    for (size_t k = 0; k < step.result.actions.size(); ++k) {
      EXPECT_TRUE(borrowed.result.actions[k].object.is_null());
      if (!step.result.actions[k].object.is_null()) ++with_objects;
      borrowed.result.actions[k].object = step.result.actions[k].object;
    }
    EXPECT_EQ(model::DumpJson(EncodeSyncResult(borrowed.result)),
              model::DumpJson(EncodeSyncResult(step.result)));
    EXPECT_EQ(borrowed.result.accounting, step.result.accounting);
  }
  EXPECT_GT(with_objects, 25);  // create and updateStatus calls were reached
}

TEST(DecideProperties, WithPendingCallObjectsOnlyThePendingCallHasItsObject) {
  // The controller's form: every step's pending call has its object as before (a status write:
  // only the object's status), and the result is the same except for the objects of the calls
  // already answered.
  Gen g(31337);
  int status_writes = 0;
  for (int i = 0; i < 200; ++i) {
    SCOPED_TRACE(i);
    Case c = RandomCase(g);
    EmulatedApi api(c.api, model::EncodeCronJob(c.input.cron_job));
    SyncInput whole = c.input;
    SyncInput lean = c.input;
    lean.options.call_objects = DecideOptions::CallObjects::kPending;
    Step a = Decide(whole);
    Step b = Decide(lean);
    while (a.next_call) {
      ASSERT_TRUE(b.next_call.has_value());
      if (a.next_call->verb == model::ApiVerb::kUpdateStatus) {
        ++status_writes;
        EXPECT_EQ(b.next_call->object, (model::Json{{"status", a.next_call->object["status"]}}));
        b.next_call->object = a.next_call->object;
      }
      EXPECT_EQ(*b.next_call, *a.next_call);
      model::ApiOutcome outcome = api.Perform(*a.next_call);
      whole.outcomes.push_back(outcome);
      lean.outcomes.push_back(std::move(outcome));
      a = Decide(whole);
      b = Decide(lean);
    }
    ASSERT_FALSE(b.next_call.has_value());
    for (size_t k = 0; k < b.result.actions.size(); ++k) {
      EXPECT_TRUE(b.result.actions[k].object.is_null());
      b.result.actions[k].object = a.result.actions[k].object;
    }
    EXPECT_EQ(model::DumpJson(EncodeSyncResult(b.result)),
              model::DumpJson(EncodeSyncResult(a.result)));
    EXPECT_EQ(b.result.accounting, a.result.accounting);
  }
  EXPECT_GT(status_writes, 25);
}

TEST(DecideProperties, RecordedOutcomesDecideAsTheWholeAnswers) {
  // A driver keeps only RecordedOutcome of each answer (the ledger's ActionOutcome); the pass
  // decides the same with it as with the answer the API gave.
  Gen g(424242);
  int shortened = 0;
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE(i);
    Case c = RandomCase(g);
    EmulatedApi api(c.api, model::EncodeCronJob(c.input.cron_job));
    SyncInput whole = c.input;
    Step step = DecideWithEmulatedApi(api, &whole);
    SyncInput recorded = whole;
    for (size_t k = 0; k < recorded.outcomes.size(); ++k) {
      recorded.outcomes[k] = RecordedOutcome(step.result.actions[k], recorded.outcomes[k]);
      if (!(recorded.outcomes[k] == whole.outcomes[k])) ++shortened;
    }
    const Step again = Decide(recorded);
    ASSERT_FALSE(again.next_call.has_value());
    EXPECT_EQ(model::DumpJson(EncodeSyncResult(again.result)),
              model::DumpJson(EncodeSyncResult(step.result)));
    EXPECT_EQ(again.result.accounting, step.result.accounting);
  }
  EXPECT_GT(shortened, 25);  // creates, status writes and deletes were answered
}

TEST(DecideProperties, RecordedOutcomeKeepsWhatThePassReads) {
  const model::ApiCall create{model::ApiVerb::kCreate, model::ApiKind::kJob, "ns", "j", nullptr};
  model::Json job = model::Json::parse(
      R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"ns","uid":"u",)"
      R"("resourceVersion":"7","labels":{"a":"b"},"managedFields":[{"manager":"x"}]},)"
      R"("spec":{"template":{}},"status":{}})");
  const model::ApiOutcome kept = RecordedOutcome(create, model::ApiOutcome::Ok(job));
  EXPECT_EQ(model::DumpJson(kept.object),
            R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"ns",)"
            R"("resourceVersion":"7","uid":"u"}})");
  // A Job whose metadata does not decode is kept whole: the pass reports its error.
  job["metadata"]["uid"] = 5;
  EXPECT_EQ(RecordedOutcome(create, model::ApiOutcome::Ok(job)).object, job);
  // Errors keep reason and message; status writes and deletes keep no object; gets keep all.
  const model::ApiOutcome exists = model::ApiOutcome::Error("AlreadyExists", "exists");
  EXPECT_EQ(RecordedOutcome(create, exists), exists);
  const model::ApiCall status{model::ApiVerb::kUpdateStatus, model::ApiKind::kCronJob, "ns", "c",
                              nullptr};
  EXPECT_TRUE(RecordedOutcome(status, model::ApiOutcome::Ok(job)).object.is_null());
  const model::ApiCall get{model::ApiVerb::kGet, model::ApiKind::kJob, "ns", "j", nullptr};
  EXPECT_EQ(RecordedOutcome(get, model::ApiOutcome::Ok(job)).object, job);
}

}  // namespace
}  // namespace cronledger::reconciler
