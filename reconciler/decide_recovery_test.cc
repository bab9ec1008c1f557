// Recovery of an interrupted pass (docs/reconciler.md "Jobs the accounting has not seen"): a pass
// that created a Job and was cut off before its decisions were committed leaves the accounting
// state unchanged while the Job (and maybe the status write) reached the cluster. The pass that
// re-decides must record that fire time as createJob (adopted), never as skipped.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "reconciler/api_emulator.h"
#include "reconciler/decide.h"
#include "reconciler/decide_test_util.h"
#include "reconciler/job_builder.h"
#include "reconciler/slot_accounting.h"

namespace cronledger::reconciler {
namespace {

using model::ApiOutcome;
using model::ApiVerb;
using model::DecisionAction;
using testing::T;

// The smallest API server that keeps what the passes wrote: Jobs by name and the CronJob status.
class MiniCluster {
 public:
  explicit MiniCluster(model::CronJob cj) : cj_(std::move(cj)) {}

  ApiOutcome Perform(const model::ApiCall& call) {
    if (call.kind == model::ApiKind::kCronJob) {
      if (call.verb == ApiVerb::kUpdateStatus) {
        auto written = model::DecodeCronJob(call.object);
        EXPECT_TRUE(written.ok());
        cj_.status = written->status;
      }
      return ApiOutcome::Ok(model::EncodeCronJob(cj_));
    }
    auto it = jobs_.find(call.name);
    if (call.verb == ApiVerb::kCreate) {
      if (it != jobs_.end()) return ApiOutcome::Error("AlreadyExists", "already exists");
      auto job = model::DecodeJob(call.object);
      EXPECT_TRUE(job.ok());
      job->metadata.uid = "uid-" + call.name;
      jobs_[call.name] = *job;
      ++creates;
      return ApiOutcome::Ok(model::EncodeJob(*job));
    }
    if (it == jobs_.end()) return ApiOutcome::Error("NotFound", "not found");
    if (call.verb == ApiVerb::kDelete) {
      jobs_.erase(it);
      return ApiOutcome::Ok(nullptr);
    }
    return ApiOutcome::Ok(model::EncodeJob(it->second));
  }

  SyncInput Input(Time now, const model::AccountingState& accounting) const {
    SyncInput in;
    in.cron_job = cj_;
    for (const auto& [name, job] : jobs_) in.jobs.push_back(job);
    in.now = now;
    in.tzdb = &testing::Tzdb();
    in.accounting = accounting;
    return in;
  }

  int creates = 0;

 private:
  model::CronJob cj_;
  std::map<std::string, model::Job> jobs_;
};

// Runs a pass to completion and returns its result.
SyncResult Complete(MiniCluster& cluster, Time now, const model::AccountingState& accounting) {
  return RunPass(cluster.Input(now, accounting),
                 [&](const model::ApiCall& c) { return cluster.Perform(c); });
}

// Runs a pass but stops it (as a kill would) right after the call `verb` was performed: its
// result — decisions and accounting — is never seen.
void Interrupt(MiniCluster& cluster, Time now, const model::AccountingState& accounting,
               ApiVerb verb) {
  SyncInput in = cluster.Input(now, accounting);
  for (Step s = Decide(in); s.next_call; s = Decide(in)) {
    const ApiVerb performed = s.next_call->verb;
    in.outcomes.push_back(cluster.Perform(*s.next_call));
    if (performed == verb) return;
  }
  ADD_FAILURE() << "the pass never reached the call to interrupt";
}

// Terminal records (createJob / skipped) by fire time.
std::map<Time, std::vector<model::Decision>> Terminal(const std::vector<model::Decision>& ds) {
  std::map<Time, std::vector<model::Decision>> out;
  for (const auto& d : ds) {
    if (d.action == DecisionAction::kCreateJob || d.action == DecisionAction::kSkipped) {
      out[d.scheduled_time.value_or(Time())].push_back(d);
    }
  }
  return out;
}

model::CronJob EveryMinute() {
  auto cj = testing::CronJobWith("* * * * *", T("2024-01-01T12:00:30Z"), std::nullopt);
  cj.spec.job_template.spec = model::Json{{"template", {{"spec", model::Json::object()}}}};
  return cj;
}

const Time k1201 = T("2024-01-01T12:01:00Z");
const Time k1202 = T("2024-01-01T12:02:00Z");
const Duration kDelta = std::chrono::milliseconds(100);

// The CronJob's first pass, before any fire time: it pins the accounting anchor.
model::AccountingState FirstPass(MiniCluster& cluster) {
  const SyncResult first = Complete(cluster, T("2024-01-01T12:00:30Z"), {});
  EXPECT_EQ(first.accounting.accounted_through, T("2024-01-01T12:00:30Z"));
  EXPECT_TRUE(Terminal(first.decisions).empty());
  return first.accounting;
}

TEST(DecideRecovery, FirstPassPinsTheInitialAnchor) {
  // Without the pin, a later pass would take its anchor from lastScheduleTime again, which an
  // interrupted pass may have moved past a fire time it never accounted.
  MiniCluster fresh(EveryMinute());
  FirstPass(fresh);
  auto adopted = EveryMinute();
  adopted.metadata.creation_timestamp = T("2024-01-01T11:00:00Z");
  adopted.status.last_schedule_time = T("2024-01-01T11:59:00Z");
  MiniCluster existing(adopted);
  const SyncResult r = Complete(existing, T("2024-01-01T11:59:30Z"), {});
  EXPECT_EQ(r.accounting.accounted_through, T("2024-01-01T11:59:00Z"));
}

TEST(DecideRecovery, SlotAlreadyProcessedButUnaccountedIsAdoptedNotSkipped) {
  // The 12:01 pass created the Job and wrote the status (lastScheduleTime = 12:01, the Job in the
  // active list), then died before its decisions were committed.
  MiniCluster cluster(EveryMinute());
  const model::AccountingState before = FirstPass(cluster);
  Interrupt(cluster, k1201.Add(kDelta), before, ApiVerb::kUpdateStatus);
  ASSERT_EQ(cluster.creates, 1);

  // The re-deciding pass has nothing to start (lastScheduleTime = 12:01, so upstream's next
  // schedule time is 12:02): no call, and the slot is accounted by a createJob record that says
  // it was adopted, instead of staying pending until 12:02 supersedes it.
  const SyncResult again = Complete(cluster, k1201.Add(std::chrono::seconds(5)), before);
  EXPECT_TRUE(again.actions.empty());
  auto terminal = Terminal(again.decisions);
  ASSERT_EQ(terminal[k1201].size(), 1u);
  const model::Decision& d = terminal[k1201][0];
  EXPECT_EQ(d.action, DecisionAction::kCreateJob);
  EXPECT_EQ(d.job_name, JobName("mycronjob", k1201));
  EXPECT_EQ(d.message, std::string(kAdoptedUnaccountedMessage));
  EXPECT_TRUE(d.job_object.is_object());
  EXPECT_EQ(again.accounting.accounted_through, k1201);
  EXPECT_FALSE(again.accounting.pending_slot.has_value());
  EXPECT_EQ(again.requeue_after.has_value(), true);

  // The next fire time is created as usual and 12:01 is never recorded again.
  const SyncResult next = Complete(cluster, k1202.Add(kDelta), again.accounting);
  auto later = Terminal(next.decisions);
  EXPECT_EQ(later.count(k1201), 0u);
  ASSERT_EQ(later[k1202].size(), 1u);
  EXPECT_EQ(later[k1202][0].action, DecisionAction::kCreateJob);
  EXPECT_FALSE(later[k1202][0].message.has_value());
  EXPECT_EQ(cluster.creates, 2);
}

TEST(DecideRecovery, RestartCrossingTheNextFireTimeAdoptsTheOlderSlot) {
  // Died right after the create, before the status write: the Job exists, the status does not
  // name it. The restart comes after 12:02: upstream acts on 12:02 and warns UnexpectedJob for the
  // 12:01 Job; the accounting ends 12:01 with createJob (adopted), not Superseded.
  MiniCluster cluster(EveryMinute());
  const model::AccountingState before = FirstPass(cluster);
  Interrupt(cluster, k1201.Add(kDelta), before, ApiVerb::kCreate);

  const SyncResult r = Complete(cluster, k1202.Add(std::chrono::seconds(3)), before);
  EXPECT_FALSE(r.error.has_value());
  auto terminal = Terminal(r.decisions);
  ASSERT_EQ(terminal[k1201].size(), 1u);
  EXPECT_EQ(terminal[k1201][0].action, DecisionAction::kCreateJob);
  EXPECT_EQ(terminal[k1201][0].message, std::string(kAdoptedUnaccountedMessage));
  ASSERT_EQ(terminal[k1202].size(), 1u);
  EXPECT_EQ(terminal[k1202][0].action, DecisionAction::kCreateJob);
  EXPECT_FALSE(terminal[k1202][0].message.has_value());
  EXPECT_EQ(r.accounting.accounted_through, k1202);
  bool unexpected = false;
  for (const auto& e : r.events) unexpected |= e.reason == "UnexpectedJob";
  EXPECT_TRUE(unexpected);  // upstream's behaviour is unchanged
  EXPECT_EQ(cluster.creates, 2);
}

TEST(DecideRecovery, RestartCrossingTheNextFireTimeAfterTheStatusWrite) {
  // Both slots' Jobs exist; the status names 12:01. The restart after 12:02 ends 12:01 through
  // the older-slot path (lastScheduleTime and the active list say it was processed).
  MiniCluster cluster(EveryMinute());
  const model::AccountingState before = FirstPass(cluster);
  Interrupt(cluster, k1201.Add(kDelta), before, ApiVerb::kUpdateStatus);
  const SyncResult r = Complete(cluster, k1202.Add(std::chrono::seconds(3)), before);
  auto terminal = Terminal(r.decisions);
  ASSERT_EQ(terminal[k1201].size(), 1u);
  EXPECT_EQ(terminal[k1201][0].action, DecisionAction::kCreateJob);
  EXPECT_EQ(terminal[k1201][0].message, std::string(kAdoptedUnaccountedMessage));
  ASSERT_EQ(terminal[k1202].size(), 1u);
  EXPECT_EQ(terminal[k1202][0].action, DecisionAction::kCreateJob);
}

TEST(DecideRecovery, ForbidInterruptedAfterCreateAdoptsThroughAlreadyExists) {
  // Forbid: the interrupted 12:01 pass got its create through, not its status write. The restarted
  // pass sees the Job owned but not active (UnexpectedJob), nothing active, so upstream creates
  // again -> AlreadyExists -> GET -> adopted (docs/semantics.md §6.12): one createJob, no
  // ConcurrencyForbid.
  auto cj = EveryMinute();
  cj.spec.concurrency_policy = "Forbid";
  MiniCluster cluster(cj);
  model::AccountingState state = FirstPass(cluster);
  Interrupt(cluster, k1201.Add(kDelta), state, ApiVerb::kCreate);
  const SyncResult r = Complete(cluster, k1201.Add(std::chrono::seconds(5)), state);
  auto terminal = Terminal(r.decisions);
  ASSERT_EQ(terminal.size(), 1u);
  ASSERT_EQ(terminal[k1201].size(), 1u);
  EXPECT_EQ(terminal[k1201][0].action, DecisionAction::kCreateJob);
  EXPECT_EQ(cluster.creates, 1);
  // The 12:02 pass finds the 12:01 Job active: 12:02 is pending under Forbid; when 12:03 comes
  // it ends as ConcurrencyForbid (no Job of its own), and 12:01 is not recorded again.
  const SyncResult at2 = Complete(cluster, k1202.Add(kDelta), r.accounting);
  EXPECT_TRUE(Terminal(at2.decisions).empty());
  EXPECT_EQ(at2.accounting.pending_reason, "ConcurrencyForbid");
  const SyncResult at3 = Complete(cluster, T("2024-01-01T12:03:00Z").Add(kDelta), at2.accounting);
  auto t3 = Terminal(at3.decisions);
  ASSERT_EQ(t3.size(), 1u);
  ASSERT_EQ(t3[k1202].size(), 1u);
  EXPECT_EQ(t3[k1202][0].action, DecisionAction::kSkipped);
  EXPECT_EQ(t3[k1202][0].reason, "ConcurrencyForbid");
}

TEST(DecideRecovery, AlreadyProcessedBranchAdoptsOnlyWithAccountingState) {
  // `cronledger decide` inputs carry no accounting state: fire times with a Job before cronledger's
  // first pass are taken as handled, so an active entry for a slot after lastScheduleTime keeps
  // upstream's already-processed branch and no createJob record appears.
  auto cj = EveryMinute();
  cj.status.last_schedule_time = T("2024-01-01T12:00:00Z");
  model::ObjectReference ref;
  ref.api_version = "batch/v1";
  ref.kind = "Job";
  ref.namespace_ = cj.metadata.namespace_;
  ref.name = JobName(cj.metadata.name, k1201);
  ref.uid = "uid-active";
  cj.status.active.push_back(ref);
  auto job = model::DecodeJob(BuildJob(cj, k1201, testing::Tzdb()).value());
  ASSERT_TRUE(job.ok());
  job->metadata.uid = ref.uid;
  SyncInput in;
  in.cron_job = cj;
  in.jobs.push_back(*job);
  in.now = k1201.Add(kDelta);
  in.tzdb = &testing::Tzdb();
  EmulatedApi api({}, model::EncodeCronJob(cj));
  const SyncResult r = RunPass(in, [&](const model::ApiCall& c) { return api.Perform(c); });
  EXPECT_TRUE(Terminal(r.decisions).empty());
  EXPECT_EQ(r.accounting.pending_slot, k1201);
  EXPECT_EQ(r.accounting.pending_reason, "AlreadyProcessed");

  // The same view in a later pass (accounting through 12:00): upstream's already-processed
  // branch (docs/semantics.md §6.8, the Job is in the active list) accounts 12:01 as adopted.
  in.accounting.accounted_through = T("2024-01-01T12:00:00Z");
  const SyncResult later = RunPass(in, [&](const model::ApiCall& c) { return api.Perform(c); });
  EXPECT_EQ(later.actions, r.actions);  // upstream's calls are unchanged
  EXPECT_EQ(later.events, r.events);
  auto terminal = Terminal(later.decisions);
  ASSERT_EQ(terminal[k1201].size(), 1u);
  EXPECT_EQ(terminal[k1201][0].action, DecisionAction::kCreateJob);
  EXPECT_EQ(terminal[k1201][0].message, std::string(kAdoptedUnaccountedMessage));
  EXPECT_FALSE(later.accounting.pending_slot.has_value());
}

}  // namespace
}  // namespace cronledger::reconciler
