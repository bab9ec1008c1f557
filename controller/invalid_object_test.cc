// A stored CronJob that does not decode, or one of whose Jobs does not
// (reconciler/invalid_object.h): its pass records why the controller does not act on it, once per
// stored version, makes no call and is no error; the other CronJobs act normally; a decodable
// version is acted on again; replay is exact.

#include "reconciler/invalid_object.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "controller/testing/harness.h"
#include "controller/testing/replay_check.h"
#include "controller/watch_events.h"
#include "model/decision.h"
#include "reconciler/job_builder.h"

namespace cronledger::controller {
namespace {

using model::DecisionAction;
using testing::CronJobManifest;
using testing::Harness;

Time At(int hh, int mm, int ss = 0) {
  return Time::FromUnix(1704067200 + hh * 3600 + mm * 60 + ss);
}

std::vector<model::Decision> Of(const std::vector<model::Decision>& all, const std::string& name) {
  std::vector<model::Decision> out;
  for (const model::Decision& d : all) {
    if (d.cron_job.name == name) out.push_back(d);
  }
  return out;
}

std::vector<model::Decision> InvalidRecords(const std::vector<model::Decision>& all) {
  std::vector<model::Decision> out;
  for (const model::Decision& d : all) {
    if (d.reason == reconciler::kInvalidObject) out.push_back(d);
  }
  return out;
}

// Replays the harness's ledger with the replay engine, which must reproduce every pass (the
// InvalidObject ones included) byte for byte; the InvalidObject records it derived.
size_t ReplayedInvalidRecords(Harness& h) {
  auto report = testing::ReplayLedger(h.ledger());
  if (!report.ok()) {
    ADD_FAILURE() << report.status().ToString();
    return 0;
  }
  EXPECT_EQ(report->divergences, 0u) << testing::FirstProblem(*report);
  return InvalidRecords(report->derived).size();
}

bool Created(const std::vector<model::Decision>& all, const std::string& name, Time slot) {
  for (const model::Decision& d : all) {
    if (d.cron_job.name == name && d.action == DecisionAction::kCreateJob &&
        d.scheduled_time == slot) {
      return true;
    }
  }
  return false;
}

TEST(InvalidCronJob, ThePassRecordsWhyItDoesNotActAndTheOthersGoOn) {
  Harness h(At(12, 0, 30));
  h.cluster().PutCronJob(CronJobManifest("good", "* * * * *"));
  // 1e20 is not an int64: DecodeCronJob rejects it (ingest would have quarantined it; a ledger
  // written before ingest validated CronJobs holds such bytes).
  h.cluster().PutCronJob(
      CronJobManifest("poison", "* * * * *", {{"startingDeadlineSeconds", 1e20}}));
  h.RunUntil(At(12, 3, 10));

  std::vector<model::Decision> all = h.Decisions();
  std::vector<model::Decision> poison = Of(all, "poison");
  ASSERT_EQ(poison.size(), 1u);
  EXPECT_EQ(poison[0].action, DecisionAction::kSkipped);
  EXPECT_EQ(poison[0].reason, "InvalidObject");
  EXPECT_EQ(poison[0].message,
            "stored CronJob: spec.startingDeadlineSeconds: expected integer, got number");
  EXPECT_FALSE(poison[0].scheduled_time.has_value());
  EXPECT_EQ(poison[0].cron_job.namespace_, "default");
  EXPECT_FALSE(poison[0].cron_job.uid.empty());
  EXPECT_NE(poison[0].cause.tick_seq, 0u);
  for (int m = 1; m <= 3; ++m) EXPECT_TRUE(Created(all, "good", At(12, m))) << m;
  EXPECT_EQ(h.controller().Stats().errors, 0u);  // no error, no retry with back-off

  // Its passes make no call and end "done" (no timer: the next watch event brings new bytes).
  size_t poison_ends = 0;
  for (const model::PassEnd& e : h.InputsOf<model::PassEnd>()) {
    if (e.name != "poison") continue;
    ++poison_ends;
    EXPECT_EQ(e.calls, 0u);
    EXPECT_EQ(e.result, "done");
    EXPECT_EQ(e.uid, poison[0].cron_job.uid);
  }
  EXPECT_EQ(poison_ends, 1u);
  for (const model::ApiCall& c : h.cluster().Calls()) EXPECT_NE(c.name, "poison");

  // A restart passes over it again (start-up enqueues every CronJob) and records nothing new:
  // the same stored version was recorded already.
  h.Restart();
  h.RunUntil(At(12, 4, 10));
  all = h.Decisions();
  EXPECT_EQ(InvalidRecords(all).size(), 1u);
  EXPECT_TRUE(Created(all, "good", At(12, 4)));

  // Another version that does not decode either: recorded, with its own error.
  h.cluster().PutCronJob(CronJobManifest("poison", "* * * * *", {{"suspend", "yes"}}));
  h.RunUntil(At(12, 5, 10));
  all = h.Decisions();
  std::vector<model::Decision> invalid = InvalidRecords(all);
  ASSERT_EQ(invalid.size(), 2u);
  EXPECT_EQ(invalid[1].message, "stored CronJob: spec.suspend: expected boolean, got string");

  // A version that decodes: acted on as any CronJob. Its most recent fire time starts; the
  // older ones, due while it could not be read, end InvalidObject.
  h.cluster().PutCronJob(CronJobManifest("poison", "* * * * *"));
  h.RunUntil(At(12, 6, 10));
  all = h.Decisions();
  EXPECT_TRUE(Created(all, "poison", At(12, 6)));
  invalid = InvalidRecords(all);
  ASSERT_GT(invalid.size(), 2u);
  for (size_t i = 2; i < invalid.size(); ++i) {
    EXPECT_EQ(invalid[i].action, DecisionAction::kSkipped);
    EXPECT_EQ(invalid[i].scheduled_time, At(12, static_cast<int>(i) - 1)) << i;
  }
  const size_t slot_records = invalid.size() - 2;
  EXPECT_TRUE(Created(all, "good", At(12, 6)));
  EXPECT_EQ(h.controller().Stats().errors, 0u);

  // Replay derives every pass, the InvalidObject ones included, byte for byte.
  const size_t replayed_invalid = ReplayedInvalidRecords(h);
  EXPECT_EQ(replayed_invalid, 2 + slot_records);
}

// A Job of `owner` whose status the model cannot hold (what a ledger written before ingest
// validated Jobs can hold): `conditions` is not an array.
model::WatchEvent BadJob(model::WatchEventType type, const model::Json& owner,
                         const std::string& name) {
  model::Json job = {{"apiVersion", "batch/v1"},
                     {"kind", "Job"},
                     {"metadata",
                      {{"name", name},
                       {"namespace", "default"},
                       {"uid", "uid-" + name},
                       {"resourceVersion", "900"},
                       {"ownerReferences",
                        {{{"apiVersion", "batch/v1"},
                          {"kind", "CronJob"},
                          {"name", owner["metadata"]["name"]},
                          {"uid", owner["metadata"]["uid"]},
                          {"controller", true}}}}}},
                     {"spec", model::Json::object()},
                     {"status", {{"conditions", "Complete"}}}};
  auto ev = MakeWatchEvent(type, job);
  CL_CHECK(ev.ok());
  return *ev;
}

TEST(InvalidJob, ThePassRecordsWhyItDoesNotActUntilTheJobIsGone) {
  Harness h(At(12, 0, 30));
  h.cluster().PutCronJob(CronJobManifest("good", "* * * * *"));
  h.cluster().PutCronJob(CronJobManifest("owner", "* * * * *"));
  h.RunUntil(At(12, 1, 10));
  ASSERT_TRUE(Created(h.Decisions(), "owner", At(12, 1)));
  const model::Json owner = *h.cluster().GetCronJobObject("default", "owner");

  ASSERT_TRUE(h.controller().Ingest({BadJob(model::WatchEventType::kAdded, owner, "zz-bad")}).ok());
  h.RunUntil(At(12, 3, 10));
  std::vector<model::Decision> all = h.Decisions();
  std::vector<model::Decision> invalid = InvalidRecords(all);
  ASSERT_EQ(invalid.size(), 1u);
  EXPECT_EQ(invalid[0].cron_job.name, "owner");
  EXPECT_EQ(invalid[0].cron_job.uid, owner["metadata"]["uid"]);
  EXPECT_EQ(invalid[0].message, "stored Job zz-bad: status.conditions: expected array");
  EXPECT_FALSE(Created(all, "owner", At(12, 2)));
  EXPECT_FALSE(Created(all, "owner", At(12, 3)));
  for (int m = 1; m <= 3; ++m) EXPECT_TRUE(Created(all, "good", At(12, m))) << m;
  EXPECT_EQ(h.controller().Stats().errors, 0u);

  // A restart records nothing new for the same stored version.
  h.Restart();
  h.RunUntil(At(12, 4, 10));
  EXPECT_EQ(InvalidRecords(h.Decisions()).size(), 1u);

  // The Job deleted: the CronJob is acted on again; the fire times due meanwhile end
  // InvalidObject.
  ASSERT_TRUE(
      h.controller().Ingest({BadJob(model::WatchEventType::kDeleted, owner, "zz-bad")}).ok());
  h.RunUntil(At(12, 5, 10));
  all = h.Decisions();
  EXPECT_TRUE(Created(all, "owner", At(12, 5)));
  invalid = InvalidRecords(all);
  ASSERT_GT(invalid.size(), 1u);
  for (size_t i = 1; i < invalid.size(); ++i) EXPECT_TRUE(invalid[i].scheduled_time) << i;
  EXPECT_EQ(h.controller().Stats().errors, 0u);

  const size_t replayed_invalid = ReplayedInvalidRecords(h);
  EXPECT_EQ(replayed_invalid, invalid.size());
}

TEST(DecideInvalidCronJob, OneRecordPerStoredVersionAndTheBlockedCondition) {
  reconciler::InvalidCronJob cj{{"ns", "a", "uid-a"}, 7, "stored CronJob: bad"};
  model::AccountingState before;
  before.accounted_through = At(11, 0);
  reconciler::SyncResult first = reconciler::DecideInvalidCronJob(cj, At(12, 0), before);
  ASSERT_EQ(first.decisions.size(), 1u);
  EXPECT_EQ(first.decisions[0].time, At(12, 0));
  EXPECT_EQ(first.decisions[0].cron_job, cj.ref);
  EXPECT_EQ(first.decisions[0].message, "stored CronJob: bad");
  EXPECT_EQ(first.accounting.blocked_reason, "InvalidObject");
  EXPECT_EQ(first.accounting.blocked_until, At(12, 0));
  EXPECT_EQ(first.accounting.accounted_through, At(11, 0));  // nothing is accounted by it
  EXPECT_FALSE(first.requeue_after.has_value());
  EXPECT_FALSE(first.error.has_value());

  reconciler::SyncResult again = reconciler::DecideInvalidCronJob(cj, At(12, 5), first.accounting);
  EXPECT_TRUE(again.decisions.empty());
  EXPECT_EQ(again.accounting.blocked_until, At(12, 5));

  cj.source_seq = 9;
  EXPECT_EQ(reconciler::DecideInvalidCronJob(cj, At(12, 6), again.accounting).decisions.size(), 1u);
}

}  // namespace
}  // namespace cronledger::controller
