// What the controller leaves in the ledger: every pass's Tick, intents, outcomes, PassEnd and
// decisions in order; exact replay; and the outbox recovery of an interrupted pass.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "controller/controller_impl.h"
#include "controller/local_zone.h"
#include "controller/testing/harness.h"
#include "controller/testing/replay_check.h"
#include "model/api_call.h"
#include "model/decision.h"
#include "model/json.h"
#include "reconciler/job_builder.h"

namespace cronledger::controller {
namespace {

using model::DecisionAction;
using testing::CronJobManifest;
using testing::Harness;

Time At(int hh, int mm, int ss = 0) {
  return Time::FromUnix(1704067200 + hh * 3600 + mm * 60 + ss);
}

// Replay of the ledger runs every recorded pass and reproduces it byte for byte.
void ExpectEveryPassReplays(Harness& h) {
  auto report = testing::ReplayLedger(h.ledger());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->passes_replayed, h.InputsOf<model::Tick>().size());
  EXPECT_EQ(report->divergences, 0u) << testing::FirstProblem(*report);
}

// A busy hour: Allow, Forbid, Replace, history cleanup, a failed create, a restart.
void RunMixedScenario(Harness& h) {
  h.cluster().PutCronJob(
      CronJobManifest("allow", "* * * * *", {{"successfulJobsHistoryLimit", 1}}));
  h.cluster().PutCronJob(
      CronJobManifest("forbid", "*/2 * * * *", {{"concurrencyPolicy", "Forbid"}}));
  h.cluster().PutCronJob(
      CronJobManifest("replace", "*/3 * * * *", {{"concurrencyPolicy", "Replace"}}));
  for (int m = 1; m <= 8; ++m) {
    if (m == 4) h.cluster().FailCalls("createJob", "InternalError", 1);
    h.RunUntil(At(12, m, 20));
    h.cluster().FinishJob("default", reconciler::JobName("allow", At(12, m)), "Complete");
    if (m % 4 == 0) {
      h.cluster().FinishJob("default", reconciler::JobName("forbid", At(12, m - 2)), "Complete");
    }
  }
  h.Close();
  h.clock().AdvanceTo(At(12, 15, 10));
  h.Open();
  ASSERT_TRUE(h.controller().EnqueueAll().ok());
  h.RunUntil(At(12, 17, 30));
  // Another writer applies the same manifest: an update that changes nothing the pass reads.
  h.cluster().PutCronJob(
      CronJobManifest("allow", "* * * * *", {{"successfulJobsHistoryLimit", 1}}));
  h.RunUntil(At(12, 20));
}

TEST(ControllerLedgerTest, EveryPassLeavesTickIntentsOutcomesEndAndDecisionsInOrder) {
  Harness h(At(12, 0, 30));
  RunMixedScenario(h);
  std::map<uint64_t, std::vector<store::LogRecord>> by_tick;  // tick seq -> its records
  std::map<uint64_t, uint64_t> intent_tick;
  std::vector<model::ApiCall> intended;
  for (const store::LogRecord& r : h.Inputs()) {
    if (std::holds_alternative<model::Tick>(r.input)) by_tick[r.seq].push_back(r);
    if (const auto* i = std::get_if<model::ActionIntent>(&r.input)) {
      ASSERT_TRUE(by_tick.count(i->tick_seq)) << r.seq;
      by_tick[i->tick_seq].push_back(r);
      intent_tick[r.seq] = i->tick_seq;
      auto call = model::DecodeApiCall(model::ParseJson(i->payload).value());
      ASSERT_TRUE(call.ok());
      intended.push_back(*call);
    }
    if (const auto* o = std::get_if<model::ActionOutcome>(&r.input)) {
      ASSERT_TRUE(intent_tick.count(o->decision_seq)) << r.seq;
      by_tick[intent_tick[o->decision_seq]].push_back(r);
    }
    if (const auto* e = std::get_if<model::PassEnd>(&r.input)) by_tick[e->tick_seq].push_back(r);
  }
  // Every call the cluster saw had its intent committed first, in the same order. The intent names
  // the call; the body of a successful create is the createJob decision's Job.
  std::vector<model::ApiCall> performed = h.cluster().Calls();
  std::vector<model::Json> created_bodies;
  for (model::ApiCall& call : performed) {
    if (call.verb == model::ApiVerb::kCreate) created_bodies.push_back(call.object);
    call.object = nullptr;
  }
  EXPECT_EQ(intended, performed);
  std::vector<model::Json> decided_bodies;
  for (const model::Decision& d : h.Decisions()) {
    if (d.action == DecisionAction::kCreateJob) decided_bodies.push_back(d.job_object);
  }
  ASSERT_FALSE(decided_bodies.empty());
  for (const model::Json& body : decided_bodies) {
    EXPECT_NE(std::find(created_bodies.begin(), created_bodies.end(), body), created_bodies.end());
  }

  std::map<uint64_t, std::vector<model::Decision>> decisions;
  uint64_t last_seq = 0;
  for (const model::Decision& d : h.Decisions()) {
    EXPECT_GT(d.seq, last_seq);
    last_seq = d.seq;
    decisions[d.cause.tick_seq].push_back(d);
  }
  size_t with_calls = 0;
  for (const auto& [tick_seq, records] : by_tick) {
    ASSERT_GE(records.size(), 2u) << "pass " << tick_seq << " has no PassEnd";
    const auto& tick = std::get<model::Tick>(records.front().input);
    const auto* end = std::get_if<model::PassEnd>(&records.back().input);
    ASSERT_NE(end, nullptr) << tick_seq;
    EXPECT_EQ(end->calls * 2 + 2, records.size());
    for (uint32_t k = 0; k < end->calls; ++k) {  // intent k, then its outcome
      const auto& intent = std::get<model::ActionIntent>(records[1 + 2 * k].input);
      const auto& outcome = std::get<model::ActionOutcome>(records[2 + 2 * k].input);
      EXPECT_EQ(intent.call_index, k);
      EXPECT_EQ(outcome.decision_seq, records[1 + 2 * k].seq);
    }
    with_calls += end->calls > 0;
    EXPECT_LT(end->view_seq, tick_seq);
    for (const model::Decision& d : decisions[tick_seq]) {
      EXPECT_EQ(d.time, tick.now);
      EXPECT_EQ(d.cause.input_seq, end->view_seq);
      EXPECT_EQ(d.cause.trigger, tick.trigger);
    }
    decisions.erase(tick_seq);
  }
  EXPECT_TRUE(decisions.empty()) << "decisions without a pass";
  EXPECT_GT(with_calls, 10u);
}

// A pass whose only output is its requeue (no call, no other decision, the accounting unchanged)
// and that a Job's watch event or a CronJob update started leaves no record at all. Every pass
// that does anything, and every timer, start-up and add pass, is recorded; replay of the ledger
// reproduces the recorded decisions and accounting states without the unrecorded passes.
TEST(ControllerLedgerTest, PassesThatChangeNothingLeaveNoRecord) {
  Harness h(At(12, 0, 30));
  RunMixedScenario(h);
  const ControllerStats stats = h.controller().Stats();
  const std::vector<model::Tick> ticks = h.InputsOf<model::Tick>();
  // The passes of this process only (the scenario restarts the controller once).
  size_t ticks_since_restart = 0;
  for (const model::Tick& t : ticks) ticks_since_restart += t.now >= At(12, 15, 10);
  EXPECT_GT(stats.unrecorded_passes, 0u);
  EXPECT_GT(stats.echoes_skipped, 0u);
  EXPECT_EQ(stats.passes, ticks_since_restart + stats.unrecorded_passes);

  std::map<uint64_t, std::vector<model::Decision>> by_tick;
  for (const model::Decision& d : h.Decisions()) by_tick[d.cause.tick_seq].push_back(d);
  std::map<uint64_t, std::string> trigger;        // tick seq -> trigger
  std::map<std::string, std::string> accounting;  // CronJob -> its last PassEnd's accounting
  size_t timer = 0, eligible = 0;
  for (const store::LogRecord& r : h.Inputs()) {
    if (const auto* tick = std::get_if<model::Tick>(&r.input)) {
      trigger[r.seq] = tick->trigger;
      timer += tick->trigger == "timer";
      continue;
    }
    const auto* end = std::get_if<model::PassEnd>(&r.input);
    if (end == nullptr) continue;
    const std::string& why = trigger[end->tick_seq];
    auto before = accounting.find(end->name);
    if (why == "job-add" || why == "job-update" || why == "job-delete" || why == "cronjob-update") {
      ++eligible;
      // Recorded, so it did something besides requeueing.
      bool only_requeue = true;
      for (const model::Decision& d : by_tick[end->tick_seq]) {
        only_requeue = only_requeue && d.action == DecisionAction::kRequeue;
      }
      const bool changed = before == accounting.end() || before->second != end->accounting;
      EXPECT_TRUE(end->calls > 0 || !only_requeue || changed) << "tick " << end->tick_seq;
    }
    accounting[end->name] = end->accounting;
  }
  EXPECT_GT(timer, 10u);
  EXPECT_GT(eligible, 0u);

  auto replayed = testing::ReplayLedger(h.ledger());
  ASSERT_TRUE(replayed.ok()) << replayed.status().ToString();
  EXPECT_EQ(replayed->divergences, 0u) << testing::FirstProblem(*replayed);
  EXPECT_EQ(replayed->derived.size(), h.Decisions().size());
  EXPECT_EQ(replayed->derived_digest.sha256, replayed->recorded_digest.sha256);
}

// The Tick has no commit of its own: it leads the unit of the pass's first intent, or of its end
// when the pass calls nothing, with tick_seq 0 for the ledger to fill. A pass with n calls is
// n + 1 commits.
TEST(ControllerLedgerTest, EachPassCommitsItsTickWithItsFirstIntentOrItsEnd) {
  Harness h(At(12, 0, 30));
  std::vector<store::UnitOfWork> units;
  h.ledger().FailCommitsWhere([&units](const store::UnitOfWork& u) {
    units.push_back(u);
    return false;
  });
  h.cluster().PutCronJob(
      CronJobManifest("allow", "* * * * *", {{"successfulJobsHistoryLimit", 1}}));
  for (int m = 1; m <= 4; ++m) {
    h.RunUntil(At(12, m, 20));
    h.cluster().FinishJob("default", reconciler::JobName("allow", At(12, m)), "Complete");
  }
  h.RunUntil(At(12, 5, 30));
  h.ledger().FailCommitsWhere(nullptr);

  size_t ticks = 0, pass_units = 0, with_calls = 0;
  for (const store::UnitOfWork& u : units) {
    bool of_a_pass = false;
    for (size_t i = 0; i < u.inputs.size(); ++i) {
      const auto& in = u.inputs[i];
      if (std::holds_alternative<model::Tick>(in)) {
        ++ticks;
        ASSERT_EQ(i, 0u) << "a Tick leads its unit";
        ASSERT_EQ(u.inputs.size(), 2u) << "with the first intent or the end, nothing else";
        if (const auto* intent = std::get_if<model::ActionIntent>(&u.inputs[1])) {
          EXPECT_EQ(intent->tick_seq, 0u);
          EXPECT_EQ(intent->call_index, 0u);
          ++with_calls;
        } else {
          const auto* end = std::get_if<model::PassEnd>(&u.inputs[1]);
          ASSERT_NE(end, nullptr);
          EXPECT_EQ(end->tick_seq, 0u);
          EXPECT_EQ(end->calls, 0u);
        }
      } else if (const auto* intent = std::get_if<model::ActionIntent>(&in)) {
        if (!std::holds_alternative<model::Tick>(u.inputs[0])) {
          EXPECT_NE(intent->tick_seq, 0u) << "a later intent names its Tick";
        }
      } else if (const auto* end = std::get_if<model::PassEnd>(&in)) {
        if (i > 0 && std::holds_alternative<model::ActionOutcome>(u.inputs[i - 1])) {
          EXPECT_NE(end->tick_seq, 0u);
        }
      }
      of_a_pass = of_a_pass || !std::holds_alternative<model::WatchEvent>(in);
    }
    if (of_a_pass) ++pass_units;
  }
  // The recorded passes: n calls, n + 1 units each.
  size_t expected_units = 0;
  const auto ends = h.InputsOf<model::PassEnd>();
  for (const model::PassEnd& e : ends) expected_units += e.calls + 1;
  EXPECT_EQ(ticks, ends.size());
  EXPECT_EQ(pass_units, expected_units);
  EXPECT_GE(with_calls, 4u);           // the four creates (and their status updates)
  EXPECT_GT(ends.size(), with_calls);  // and passes that called nothing
}

TEST(ControllerLedgerTest, ReplayingEveryPassReproducesItsDecisionsByteForByte) {
  Harness h(At(12, 0, 30));
  RunMixedScenario(h);
  auto report = testing::ReplayLedger(h.ledger());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->passes_replayed, h.InputsOf<model::Tick>().size());
  EXPECT_EQ(report->interrupted_passes, 0u);
  EXPECT_EQ(report->divergences, 0u) << testing::FirstProblem(*report);
  EXPECT_EQ(report->derived.size(), h.Decisions().size());
  EXPECT_EQ(report->derived_digest.sha256, report->recorded_digest.sha256);

  // The comparison is not vacuous: a decision nobody decided is caught.
  ASSERT_FALSE(report->recorded.empty());
  model::Decision forged = report->recorded.back();
  forged.reason = "Forged";
  store::UnitOfWork unit;
  unit.decisions.push_back(forged);
  ASSERT_TRUE(h.ledger().Commit(std::move(unit)).ok());
  auto tampered = testing::ReplayLedger(h.ledger());
  ASSERT_TRUE(tampered.ok());
  EXPECT_GE(tampered->divergences, 1u);
  EXPECT_NE(tampered->derived_digest.sha256, tampered->recorded_digest.sha256);
}

bool HasCreateOutcome(const store::UnitOfWork& unit) {
  for (const auto& in : unit.inputs) {
    const auto* o = std::get_if<model::ActionOutcome>(&in);
    if (o != nullptr && o->verb == "create") return true;
  }
  return false;
}

// The outbox recovery: the Job was created but the pass stopped before its outcome was recorded.
// After the restart the pass re-decides, the same name meets AlreadyExists, and the Job is adopted.
TEST(ControllerLedgerTest, InterruptedPassIsRedecidedAndAdoptsTheJobItCreated) {
  Harness h(At(12, 0, 30));
  h.cluster().PutCronJob(CronJobManifest("ip", "* * * * *"));
  h.Pump();
  h.ledger().FailCommitsWhere(HasCreateOutcome);
  h.clock().AdvanceTo(At(12, 1, 0).Add(std::chrono::milliseconds(100)));
  ASSERT_EQ(*h.controller().RunReady(), 1u);  // the pass failed after the create
  const std::string job = reconciler::JobName("ip", At(12, 1));
  EXPECT_EQ(h.cluster().Created().at(job), 1);
  auto watch = h.cluster().TakeEvents();  // the Job's ADDED event, not yet seen by the view

  h.ledger().FailCommitsWhere(nullptr);
  h.Restart();
  ASSERT_EQ(*h.controller().RunReady(), 1u);  // "startup": re-decides the same slot
  ASSERT_TRUE(h.controller().Ingest(watch).ok());
  h.Pump();

  EXPECT_EQ(h.cluster().Created().at(job), 1);  // never created twice
  const auto decisions = h.Decisions();
  size_t creates = 0;
  for (const auto& d : decisions) {
    creates += d.action == DecisionAction::kCreateJob && d.scheduled_time == At(12, 1);
  }
  EXPECT_EQ(creates, 1u);
  auto cj = h.cluster().GetCronJobObject("default", "ip");
  ASSERT_TRUE(cj.has_value());
  ASSERT_EQ((*cj)["status"]["active"].size(), 1u);
  EXPECT_EQ((*cj)["status"]["active"][0]["name"], job);

  auto report = testing::ReplayLedger(h.ledger());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->interrupted_passes, 1u);
  EXPECT_EQ(report->divergences, 0u) << testing::FirstProblem(*report);
}

// Real-time workers: two threads, keys processed exclusively, Stop() drains the passes in flight.
TEST(ControllerLedgerTest, WorkersProcessKeysExclusivelyAndStopCleanly) {
  ControllerOptions options;
  options.workers = 2;
  Harness h(At(12, 0, 30), options);
  constexpr int kCronJobs = 20;
  for (int i = 0; i < kCronJobs; ++i) {
    // Appended rather than `"w" + std::to_string(i)`: g++ 12 at -O3 reports a false -Wrestrict
    // on that operator+ (GCC bug 105329).
    std::string name = "w";
    name += std::to_string(i);
    h.cluster().PutCronJob(CronJobManifest(name, "* * * * *"));
  }
  h.clock().AdvanceTo(At(12, 1, 1));
  h.controller().Start();
  ASSERT_TRUE(h.controller().Ingest(h.cluster().TakeEvents()).ok());
  h.cluster().WaitForCalls(2 * kCronJobs);  // create + updateStatus per CronJob
  h.controller().Stop();
  EXPECT_EQ(h.cluster().Created().size(), static_cast<size_t>(kCronJobs));
  for (const auto& [job, times] : h.cluster().Created()) EXPECT_EQ(times, 1) << job;

  // Per key, passes never overlap: each Tick is followed by its own PassEnd before the next one.
  std::map<std::string, uint64_t> open;  // key -> tick seq of the pass in flight
  for (const store::LogRecord& r : h.Inputs()) {
    if (const auto* t = std::get_if<model::Tick>(&r.input)) {
      EXPECT_EQ(open.count(t->name), 0u) << t->name << " has two passes in flight";
      open[t->name] = r.seq;
    }
    if (const auto* e = std::get_if<model::PassEnd>(&r.input)) {
      EXPECT_EQ(open[e->name], e->tick_seq);
      open.erase(e->name);
    }
  }
  EXPECT_TRUE(open.empty()) << "Stop() left a pass unfinished";
  auto report = testing::ReplayLedger(h.ledger());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->divergences, 0u) << testing::FirstProblem(*report);
  EXPECT_GE(report->passes_replayed, static_cast<uint64_t>(kCronJobs));
  h.controller().Start();  // restartable; a second Stop() is harmless
  h.controller().Stop();
  h.controller().Stop();
}

TEST(ControllerLedgerTest, ControllerStateBlobRoundTripsAndIsTiedToTheUid) {
  model::AccountingState s;
  s.accounted_through = At(12, 1);
  s.pending_slot = At(12, 2);
  s.pending_reason = "ConcurrencyForbid";
  const std::string blob = EncodeControllerState("uid-1", s);
  auto back = DecodeControllerState(blob);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->first, "uid-1");
  EXPECT_EQ(back->second, s);
  EXPECT_EQ(EncodeControllerState(back->first, back->second), blob);
  EXPECT_TRUE(DecodeControllerState("{}").status().IsCorruption());
  // The blob is written without a tree: the bytes the tree encoding had (blobs already stored).
  s.blocked_reason = "a \"quoted\" \\ reason\n";
  s.blocked_until = At(12, 3);
  for (const std::string uid : {"uid-1", "", "ü \"odd\" uid\t"}) {
    EXPECT_EQ(EncodeControllerState(uid, s),
              model::DumpJson(
                  model::Json{{"uid", uid}, {"accounting", model::EncodeAccountingState(s)}}));
  }
  EXPECT_EQ(
      EncodeControllerState("u", model::AccountingState{}),
      model::DumpJson(model::Json{
          {"uid", "u"}, {"accounting", model::EncodeAccountingState(model::AccountingState{})}}));
}

// A pass starts from the accounting state its CronJob's last completed pass committed. The
// controller reads the ledger's copy once per CronJob and process (the first pass of each) and
// keeps what each pass commits; a restart reads it again; a CronJob deleted and created again
// under its name before a pass saw the delete starts afresh. Replay, which takes every pass's
// starting state from the log alone, reproduces every pass.
TEST(ControllerLedgerTest, AccountingIsReadFromTheLedgerOncePerCronJobAndProcess) {
  Harness h(At(12, 0, 30));
  auto reads = [&h] {
    std::vector<std::string> r = h.ledger().TakeStateReads();
    std::sort(r.begin(), r.end());
    return r;
  };
  using Keys = std::vector<std::string>;
  h.cluster().PutCronJob(CronJobManifest("a", "* * * * *", {{"successfulJobsHistoryLimit", 1}}));
  h.cluster().PutCronJob(CronJobManifest("b", "*/2 * * * *"));
  h.Pump();
  EXPECT_EQ(reads(), (Keys{"default/a", "default/b"}));
  for (int m = 1; m <= 4; ++m) {
    ASSERT_GT(h.RunUntil(At(12, m, 20)), 0u);
    h.cluster().FinishJob("default", reconciler::JobName("a", At(12, m)), "Complete");
  }
  EXPECT_EQ(reads(), Keys{});

  h.Restart();
  h.RunUntil(At(12, 6, 20));
  EXPECT_EQ(reads(), (Keys{"default/a", "default/b"}));

  // "a" again, another object (a new uid): one pass sees both events.
  auto creates = [&h] {
    const auto all = h.Decisions();
    return std::count_if(all.begin(), all.end(),
                         [](const auto& d) { return d.action == DecisionAction::kCreateJob; });
  };
  const auto created = creates();
  h.cluster().DeleteCronJob("default", "a");
  h.cluster().PutCronJob(CronJobManifest("a", "* * * * *"));
  h.RunUntil(At(12, 8, 20));
  EXPECT_EQ(reads(), Keys{});
  EXPECT_GT(creates(), created);

  ExpectEveryPassReplays(h);
}

// The watch events of the controller's own writes (a created Job's ADDED, a written status's
// MODIFIED, a deleted Job's DELETED) start no pass: the pass that made the write went on with its
// answer. Everything another writer changes still does, and replay reproduces every pass.
TEST(ControllerLedgerTest, TheControllersOwnWritesComingBackStartNoPass) {
  Harness h(At(12, 0, 30));
  h.cluster().PutCronJob(CronJobManifest("echo", "* * * * *", {{"successfulJobsHistoryLimit", 1}}));
  h.Pump();
  auto stats = [&h] { return h.controller().Stats(); };
  const ControllerStats added = stats();
  EXPECT_EQ(added.passes, 1u);  // cronjob-add

  // Each minute's timer pass creates a Job and writes the status: two echoes, no other pass.
  h.RunUntil(At(12, 3, 30));
  ControllerStats s = stats();
  EXPECT_EQ(s.passes - added.passes, 3u);
  EXPECT_EQ(s.echoes_skipped, 6u);
  EXPECT_EQ(s.unrecorded_passes, 0u);

  // A Job finishing is another writer's change: its pass writes the status (and deletes the Job
  // over the history limit once a second one finished); those writes' echoes start nothing.
  h.cluster().FinishJob("default", reconciler::JobName("echo", At(12, 1)), "Complete");
  h.Pump();
  ControllerStats f = stats();
  EXPECT_EQ(f.passes - s.passes, 1u);
  EXPECT_EQ(f.echoes_skipped - s.echoes_skipped, 1u);  // the status
  h.cluster().FinishJob("default", reconciler::JobName("echo", At(12, 2)), "Complete");
  h.Pump();
  ControllerStats g = stats();
  EXPECT_FALSE(h.cluster().HasJob("default", reconciler::JobName("echo", At(12, 1))));
  EXPECT_EQ(g.passes - f.passes, 1u);
  EXPECT_EQ(g.echoes_skipped - f.echoes_skipped, 2u);  // the status, the deleted Job

  // Another writer's update of the CronJob starts a pass, which changes nothing.
  h.cluster().PutCronJob(CronJobManifest("echo", "* * * * *", {{"successfulJobsHistoryLimit", 1}}));
  h.Pump();
  ControllerStats u = stats();
  EXPECT_EQ(u.passes - g.passes, 1u);
  EXPECT_EQ(u.unrecorded_passes, 1u);
  EXPECT_EQ(u.echoes_skipped, g.echoes_skipped);

  // A restarted controller: the Job that finished while it was down starts the one pass.
  h.cluster().FinishJob("default", reconciler::JobName("echo", At(12, 3)), "Complete");
  h.Close();
  h.Open();
  h.Pump();
  EXPECT_EQ(stats().passes, 1u);
  EXPECT_EQ(stats().echoes_skipped, 2u);  // the status, the deleted Job

  ExpectEveryPassReplays(h);
}

// An echo can reach the controller before the answer of the call it echoes (the watch and the
// call's response race). The object's events that come while its write is in flight wait for the
// answer: the echo is skipped, another writer's event is handled as it would have been.
TEST(ControllerLedgerTest, AnEchoAheadOfItsAnswerStartsNoPassEither) {
  Harness h(At(12, 0, 30));
  bool another_writer = false;
  h.cluster().SetBeforeAnswerHook([&h, &another_writer](const model::ApiCall& call) {
    if (another_writer && call.verb == model::ApiVerb::kUpdateStatus) {
      // Someone applies the manifest again right after the controller's status write.
      h.cluster().PutCronJob(
          CronJobManifest("early", "* * * * *", {{"successfulJobsHistoryLimit", 1}}));
    }
    ASSERT_TRUE(h.controller().Ingest(h.cluster().TakeEvents()).ok());
  });
  h.cluster().PutCronJob(
      CronJobManifest("early", "* * * * *", {{"successfulJobsHistoryLimit", 1}}));
  h.Pump();
  const ControllerStats added = h.controller().Stats();
  h.RunUntil(At(12, 2, 30));
  const ControllerStats s = h.controller().Stats();
  EXPECT_EQ(s.passes - added.passes, 2u);  // the two timer passes
  EXPECT_EQ(s.echoes_skipped, 4u);
  EXPECT_EQ(s.unrecorded_passes, 0u);

  // History cleanup once the second Job finished: the status write's and the delete's echoes.
  h.cluster().FinishJob("default", reconciler::JobName("early", At(12, 1)), "Complete");
  h.Pump();
  const ControllerStats f = h.controller().Stats();
  EXPECT_EQ(f.passes - s.passes, 1u);
  h.cluster().FinishJob("default", reconciler::JobName("early", At(12, 2)), "Complete");
  h.Pump();
  const ControllerStats g = h.controller().Stats();
  EXPECT_FALSE(h.cluster().HasJob("default", reconciler::JobName("early", At(12, 1))));
  EXPECT_EQ(g.passes - f.passes, 1u);
  EXPECT_EQ(g.echoes_skipped - s.echoes_skipped, 3u);  // two statuses, the deleted Job

  // Another writer's update arrives with the echo, both ahead of the answer: the echo is
  // skipped, the update starts its pass (which changes nothing).
  another_writer = true;
  h.RunUntil(At(12, 3, 30));
  const ControllerStats u = h.controller().Stats();
  EXPECT_EQ(u.passes - g.passes, 2u);  // the timer pass, the update's
  EXPECT_EQ(u.unrecorded_passes, 1u);
  EXPECT_EQ(u.echoes_skipped - g.echoes_skipped, 2u);

  h.cluster().SetBeforeAnswerHook(nullptr);
  ExpectEveryPassReplays(h);
}

// With skip_own_echoes off (the shadow auditor), every event enqueues as upstream's handlers do:
// the same records, and the passes of the echoes, which leave none. (Here the two echoes of a
// create pass arrive in one batch, so they start one pass.)
TEST(ControllerLedgerTest, WithoutSkippingEchoesEveryEventStartsAPass) {
  ControllerOptions options;
  options.skip_own_echoes = false;
  Harness all(At(12, 0, 30), options);
  Harness skipping(At(12, 0, 30));
  for (Harness* h : {&all, &skipping}) {
    h->cluster().PutCronJob(CronJobManifest("echo", "* * * * *"));
    h->RunUntil(At(12, 3, 30));
  }
  EXPECT_EQ(all.controller().Stats().echoes_skipped, 0u);
  EXPECT_EQ(skipping.controller().Stats().echoes_skipped, 6u);
  EXPECT_EQ(all.controller().Stats().passes, skipping.controller().Stats().passes + 3);
  EXPECT_EQ(all.controller().Stats().unrecorded_passes, 3u);
  EXPECT_EQ(skipping.controller().Stats().unrecorded_passes, 0u);
  EXPECT_EQ(all.Decisions(), skipping.Decisions());
}

TEST(ControllerLedgerTest, RecordsTheIanaNameOfTheLocalZone) {
  // The localTimeZone ConfigChange names the zone (replay and `why` show it), not "Local".
  Harness utc(At(12, 0, 30));
  auto utc_config = utc.InputsOf<model::ConfigChange>();
  ASSERT_EQ(utc_config.size(), 2u);
  EXPECT_EQ(utc_config[1].key, "localTimeZone");
  EXPECT_EQ(utc_config[1].value, "UTC");

  ControllerOptions berlin_options;
  berlin_options.local_time_zone = "Europe/Berlin";
  Harness berlin(At(12, 0, 30), berlin_options);
  berlin.cluster().PutCronJob(CronJobManifest("local", "0 13 * * *"));  // 13:00 Berlin
  berlin.RunUntil(At(12, 1));
  auto config = berlin.InputsOf<model::ConfigChange>();
  ASSERT_EQ(config.size(), 2u);
  EXPECT_EQ(config[1].value, "Europe/Berlin");
  // The passes replay with the zone they ran with, which the replay reads from the record.
  auto same = testing::ReplayLedger(berlin.ledger());
  ASSERT_TRUE(same.ok()) << same.status().ToString();
  EXPECT_EQ(same->divergences, 0u) << testing::FirstProblem(*same);
  EXPECT_GE(same->passes_replayed, 1u);
  // 13:00 in Berlin is 12:00Z in January: the Job of that slot was created.
  berlin.RunUntil(At(12, 0).AddSeconds(24 * 3600 + 30));
  EXPECT_EQ(berlin.cluster().Created().count(
                reconciler::JobName("local", At(12, 0).AddSeconds(24 * 3600))),
            1u);
}

TEST(ControllerLedgerTest, OpenRefusesALocalZoneNameThatIsNotTheDatabasesLocal) {
  auto utc_db = model::OpenSystemTimeZoneDb({});
  ASSERT_TRUE(utc_db.ok());
  EXPECT_EQ(LocalZoneName(**utc_db, "").value(), "UTC");
  EXPECT_EQ(LocalZoneName(**utc_db, "Etc/UTC").value(), "Etc/UTC");  // the same zone
  EXPECT_FALSE(LocalZoneName(**utc_db, "Europe/Berlin").ok());
  EXPECT_FALSE(LocalZoneName(**utc_db, "Local").ok());
  EXPECT_FALSE(LocalZoneName(**utc_db, "No/Such_Zone").ok());
  auto kolkata = model::OpenSystemTimeZoneDb({.local_zone = "Asia/Kolkata"});
  ASSERT_TRUE(kolkata.ok());
  EXPECT_EQ(LocalZoneName(**kolkata, "Asia/Kolkata").value(), "Asia/Kolkata");
  EXPECT_FALSE(LocalZoneName(**kolkata, "UTC").ok());

  store::testing::TempDir dir;
  store::LedgerOptions lo;
  lo.path = dir.Sub("ledger");
  auto ledger = store::Ledger::Open(lo);
  ASSERT_TRUE(ledger.ok());
  ManualClock clock(At(12, 0));
  testing::FakeActuator cluster(clock);
  ControllerOptions wrong;
  wrong.local_time_zone = "Europe/Berlin";
  auto ctl = Controller::Open(wrong, **ledger, cluster, clock, clock, **utc_db);
  EXPECT_TRUE(ctl.status().IsInvalidArgument()) << ctl.status().ToString();
}

}  // namespace
}  // namespace cronledger::controller
