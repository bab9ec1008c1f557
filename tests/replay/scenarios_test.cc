// Replay over ledgers recorded by the real controller loop (tests/replay/sim_world.h): verify,
// tamper detection, windows, bundles, why, state and what-if on the scripted incident day.

#include <gtest/gtest.h>

#include "reconciler/job_builder.h"
#include "replay/bundle.h"
#include "replay/diff.h"
#include "replay/engine.h"
#include "replay/explain.h"
#include "replay/state_at.h"
#include "tests/replay/sim_world.h"

namespace cronledger::replay {
namespace {

using testing::At;
using testing::SimWorld;

class IncidentDay : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    world_ = new SimWorld(At(9, 59, 30), std::chrono::minutes(12));
    testing::RecordIncidentDay(*world_);
  }
  static void TearDownTestSuite() {
    delete world_;
    world_ = nullptr;
  }
  static ReplayResult Run(const ReplayOptions& o = {}) {
    LedgerSource src(world_->ledger());
    auto r = Replay(src, o);
    if (!r.ok()) std::fprintf(stderr, "replay: %s\n", r.status().ToString().c_str());
    CL_CHECK(r.ok());
    return std::move(*r);
  }
  static Why Explain(const std::string& cj, Time t) {
    LedgerSource src(world_->ledger());
    WhyQuery q;
    q.cron_job = cj;
    q.scheduled = t;
    auto w = replay::Explain(src, q);
    CL_CHECK(w.ok());
    return std::move(*w);
  }
  static std::vector<SlotDifference> WhatIf(const std::string& cj,
                                            const std::vector<std::string>& settings) {
    ReplayOptions o;
    o.scope.cron_job = cj;
    for (const auto& s : settings) CL_CHECK(ApplySetting(s, &o.what_if).ok());
    const ReplayResult r = Run(o);
    return DiffTerminal(r.recorded, r.derived);
  }
  static std::string Joined(const Why& w) {
    std::string s;
    for (const auto& x : w.sentences) s += x + "\n";
    return s;
  }
  static std::vector<model::Decision> Recorded() {
    std::vector<model::Decision> out;
    CL_CHECK(world_->ledger()
                 .ScanDecisions(1,
                                [&](const model::Decision& d) {
                                  out.push_back(d);
                                  return true;
                                })
                 .ok());
    return out;
  }
  static std::optional<model::Decision> Terminal(const std::string& name, Time t) {
    for (const auto& d : Recorded()) {
      if (d.cron_job.name == name && d.scheduled_time == t &&
          (d.action == model::DecisionAction::kCreateJob ||
           d.action == model::DecisionAction::kSkipped)) {
        return d;
      }
    }
    return std::nullopt;
  }
  static SimWorld* world_;
};
SimWorld* IncidentDay::world_ = nullptr;

TEST_F(IncidentDay, TheScriptProducedTheIncidents) {
  EXPECT_EQ(Terminal("forbid", At(10, 5))->reason, "ConcurrencyForbid");
  // The 10:10 fire time was pending when the 10:00 Job finished at 10:12:01: it started then.
  EXPECT_EQ(Terminal("forbid", At(10, 10))->action, model::DecisionAction::kCreateJob);
  EXPECT_EQ(Terminal("forbid", At(10, 10))->time,
            At(10, 12, 1).Add(std::chrono::milliseconds(100)));
  EXPECT_EQ(Terminal("forbid", At(10, 15))->reason, "ConcurrencyForbid");
  for (int m : {5, 10}) EXPECT_EQ(Terminal("susp", At(10, m))->reason, "Suspended") << m;
  // The resume at 10:17 starts the pending 10:15 fire time at once (an update event).
  EXPECT_EQ(Terminal("susp", At(10, 15))->action, model::DecisionAction::kCreateJob);
  EXPECT_EQ(Terminal("deadline", At(10, 30))->reason, "TooLate");
  EXPECT_EQ(Terminal("every15", At(12, 45))->action, model::DecisionAction::kCreateJob);
  for (Time t = At(11, 0); t < At(12, 45); t = t.AddSeconds(900)) {
    EXPECT_EQ(Terminal("every15", t)->reason, "Superseded") << FormatRfc3339(t);
  }
}

TEST_F(IncidentDay, VerifyReproducesTheRecordedStreamWithTheSameDigest) {
  const ReplayResult r = Run();
  EXPECT_EQ(r.divergences, 0u) << (r.first_divergence ? r.first_divergence->what : "");
  EXPECT_EQ(r.derived_digest.sha256, r.recorded_digest.sha256);
  EXPECT_EQ(r.derived_digest.decisions, Recorded().size());
  size_t ticks = 0;
  CL_CHECK(world_->ledger()
               .ScanInputs(1, false,
                           [&](const store::LogRecord& rec) {
                             ticks += std::holds_alternative<model::Tick>(rec.input);
                             return true;
                           })
               .ok());
  EXPECT_EQ(r.passes_replayed, ticks);
  EXPECT_GT(r.passes_replayed, 40u);
  EXPECT_EQ(r.interrupted_passes, 0u);
  // The digest is a function of the stream: a second replay gives the same one.
  EXPECT_EQ(Run().derived_digest.sha256, r.derived_digest.sha256);
}

// A verify-only replay (ReplayOptions::verify_only: recorded records compared by their stored
// bytes as the passes are decided), with the passes decided on the scanning thread or a second
// one, gives the full replay's counts and digests, also for windows and a single CronJob, where
// recorded records of other passes are passed over; it keeps no streams.
TEST_F(IncidentDay, VerifyOnlyGivesTheFullReplaysCountsAndDigests) {
  std::vector<ReplayOptions> scopes(4);
  scopes[1].scope.since = At(10, 30);
  scopes[2].scope.until = At(11, 0);
  scopes[3].scope.cron_job = "default/forbid";
  scopes[3].scope.since = At(10, 7);
  for (size_t i = 0; i < 2 * scopes.size(); ++i) {
    ReplayOptions o = scopes[i / 2];
    const ReplayResult full = Run(o);
    o.verify_only = true;
    o.decide_on_second_thread = i % 2 == 1;  // what replay --verify runs
    const ReplayResult fast = Run(o);
    EXPECT_EQ(full.divergences, 0u);
    EXPECT_EQ(fast.divergences, 0u);
    EXPECT_FALSE(fast.first_divergence.has_value());
    EXPECT_EQ(fast.derived_digest.sha256, full.derived_digest.sha256);
    EXPECT_EQ(fast.recorded_digest.sha256, full.recorded_digest.sha256);
    EXPECT_EQ(fast.derived_digest.decisions, full.derived_digest.decisions);
    EXPECT_EQ(fast.recorded_digest.decisions, full.recorded_digest.decisions);
    EXPECT_GT(fast.derived_digest.decisions, 0u);
    EXPECT_EQ(fast.passes_replayed, full.passes_replayed);
    EXPECT_EQ(fast.interrupted_passes, full.interrupted_passes);
    EXPECT_EQ(fast.inputs_scanned, full.inputs_scanned);
    EXPECT_EQ(fast.decisions_scanned, full.decisions_scanned);
    EXPECT_TRUE(fast.passes.empty());
    EXPECT_TRUE(fast.derived.empty());
    EXPECT_TRUE(fast.recorded.empty());
  }
}

// Passes decided on a second thread (ReplayOptions::decide_on_second_thread) give the result of
// the sequential replay: the same passes, decisions, divergences and digests, also for a window
// that starts with seeded accounting chains.
TEST_F(IncidentDay, PassesDecidedOnASecondThreadGiveTheSequentialResult) {
  for (const bool window : {false, true}) {
    ReplayOptions o;
    if (window) o.scope.since = At(10, 30, 0);
    const ReplayResult one = Run(o);
    o.decide_on_second_thread = true;
    const ReplayResult two = Run(o);
    EXPECT_EQ(two.derived_digest.sha256, one.derived_digest.sha256);
    EXPECT_EQ(two.recorded_digest.sha256, one.recorded_digest.sha256);
    EXPECT_EQ(two.derived_digest.decisions, one.derived_digest.decisions);
    EXPECT_EQ(two.divergences, one.divergences);
    EXPECT_EQ(two.passes_replayed, one.passes_replayed);
    EXPECT_GT(two.passes_replayed, 10u);
    ASSERT_EQ(two.passes.size(), one.passes.size());
    for (size_t i = 0; i < one.passes.size(); ++i) {
      EXPECT_EQ(two.passes[i].tick_seq, one.passes[i].tick_seq);
      EXPECT_EQ(two.passes[i].problem, one.passes[i].problem);
    }
    EXPECT_EQ(two.derived_pass, one.derived_pass);
  }
}

TEST_F(IncidentDay, AWindowOfOneCronJobVerifiesAndItsBundleGivesTheSameDigest) {
  ReplayOptions o;
  o.scope.since = At(10, 30);
  o.scope.until = At(12, 55);
  o.scope.cron_job = "default/every15";
  const ReplayResult store = Run(o);
  ASSERT_EQ(store.divergences, 0u) << store.first_divergence->what;
  EXPECT_GT(store.derived_digest.decisions, 5u);
  EXPECT_LT(store.derived_digest.decisions, Recorded().size());

  LedgerSource src(world_->ledger());
  auto text = ExportBundle(src, o.scope, BundleHeader{});
  ASSERT_TRUE(text.ok());
  auto bundle = ReadBundle(*text);
  ASSERT_TRUE(bundle.ok()) << bundle.status().ToString();
  auto replayed = Replay(*bundle->source, ReplayOptions{});
  ASSERT_TRUE(replayed.ok());
  EXPECT_EQ(replayed->divergences, 0u);
  EXPECT_EQ(replayed->derived_digest.sha256, store.derived_digest.sha256);
  EXPECT_EQ(replayed->recorded_digest.sha256, store.recorded_digest.sha256);
}

TEST_F(IncidentDay, WhyForbidNamesTheActiveJobAndWhenItFinished) {
  const Why w = Explain("default/forbid", At(10, 5));
  EXPECT_EQ(w.verdict, "skipped");
  EXPECT_EQ(w.reason, "ConcurrencyForbid");
  const std::string text = Joined(w);
  EXPECT_NE(text.find("Job " + reconciler::JobName("forbid", At(10, 0))), std::string::npos)
      << text;
  EXPECT_NE(text.find("finished (Complete) at 2024-01-01T10:12:01Z"), std::string::npos) << text;
  EXPECT_EQ(w.facts["activeJobs"][0]["name"], reconciler::JobName("forbid", At(10, 0)));
}

TEST_F(IncidentDay, WhySuspendedNamesTheUpdateThatSetIt) {
  uint64_t set_seq = 0;
  CL_CHECK(world_->ledger()
               .ScanInputs(1, true,
                           [&](const store::LogRecord& r) {
                             const auto* ev = std::get_if<model::WatchEvent>(&r.input);
                             if (ev && ev->name == "susp" && set_seq == 0 &&
                                 ev->raw.find("\"suspend\":true") != std::string::npos) {
                               set_seq = r.seq;
                             }
                             return true;
                           })
               .ok());
  ASSERT_NE(set_seq, 0u);
  const Why w = Explain("default/susp", At(10, 10));
  EXPECT_EQ(w.reason, "Suspended");
  EXPECT_NE(Joined(w).find("set by the update at input #" + std::to_string(set_seq)),
            std::string::npos)
      << Joined(w);
  EXPECT_EQ(w.facts["suspend"]["setSeq"], set_seq);
}

TEST_F(IncidentDay, WhySupersededSaysTheControllerWasDown) {
  const Why w = Explain("default/every15", At(11, 0));
  EXPECT_EQ(w.reason, "Superseded");
  const std::string text = Joined(w);
  EXPECT_NE(text.find("later fire time 2024-01-01T12:45:00Z"), std::string::npos) << text;
  EXPECT_NE(text.find("no pass of any CronJob between 2024-01-01T10:"), std::string::npos) << text;
  EXPECT_NE(text.find(" and 2024-01-01T12:50:30Z: it was down"), std::string::npos) << text;
  EXPECT_EQ(w.facts["gap"]["controllerDown"], true);
}

TEST_F(IncidentDay, WhyTooLateShowsTheDeadlineArithmetic) {
  const Why w = Explain("default/deadline", At(10, 30));
  EXPECT_EQ(w.reason, "TooLate");
  EXPECT_NE(Joined(w).find("startingDeadlineSeconds is 60"), std::string::npos) << Joined(w);
  EXPECT_EQ(w.facts["deadline"]["lateBySeconds"], 120);
}

TEST_F(IncidentDay, WhyCreatedAndWhyNotAFireTimeAndWhyAfterTheEnd) {
  const Why created = Explain("default/forbid", At(10, 10));
  EXPECT_EQ(created.verdict, "created");
  EXPECT_NE(Joined(created).find("ran at 2024-01-01T10:10:00Z"), std::string::npos)
      << Joined(created);
  const Why odd = Explain("default/every15", At(10, 7));
  EXPECT_EQ(odd.verdict, "not a fire time");
  EXPECT_EQ(odd.facts["neighbours"]["previous"], "2024-01-01T10:00:00Z");
  EXPECT_EQ(odd.facts["neighbours"]["next"], "2024-01-01T10:15:00Z");
  const Why later = Explain("default/every15", At(13, 30));
  EXPECT_EQ(later.verdict, "no record");
  EXPECT_NE(Joined(later).find("it has not run since"), std::string::npos) << Joined(later);
  const Why unknown = Explain("default/nope", At(10, 0));
  EXPECT_EQ(unknown.verdict, "unknown CronJob");
}

TEST_F(IncidentDay, StateAtShowsTheActiveJobAndThePendingTimer) {
  LedgerSource src(world_->ledger());
  auto s = StateAt(src, StateQuery{"default/forbid", At(10, 7), "/usr/share/zoneinfo"});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ASSERT_TRUE(s->exists);
  const model::Json& cj = s->state["cronJobObject"];
  EXPECT_EQ(cj["concurrencyPolicy"], "Forbid");
  EXPECT_EQ(cj["lastScheduleTime"], "2024-01-01T10:00:00Z");
  ASSERT_EQ(cj["active"].size(), 1u);
  EXPECT_EQ(cj["active"][0], reconciler::JobName("forbid", At(10, 0)));
  EXPECT_EQ(s->state["timer"]["due"], "2024-01-01T10:10:00.1Z");
  auto susp = StateAt(src, StateQuery{"default/susp", At(10, 10), "/usr/share/zoneinfo"});
  ASSERT_TRUE(susp.ok());
  EXPECT_EQ(susp->state["cronJobObject"]["suspend"], true);
  auto before = StateAt(src, StateQuery{"default/susp", At(9, 0), "/usr/share/zoneinfo"});
  ASSERT_TRUE(before.ok());
  EXPECT_FALSE(before->exists);
}

bool Has(const std::vector<SlotDifference>& diffs, Time t, const std::string& change) {
  for (const auto& d : diffs) {
    if (d.scheduled == t && d.change == change) return true;
  }
  return false;
}

TEST_F(IncidentDay, WhatIfReplaceRunsTheForbiddenSlots) {
  const auto diffs = WhatIf("default/forbid", {"spec.concurrencyPolicy=Replace"});
  EXPECT_TRUE(Has(diffs, At(10, 5), "would run"));
  EXPECT_TRUE(Has(diffs, At(10, 15), "would run"));
  EXPECT_FALSE(Has(diffs, At(10, 10), "would run"));  // it ran (late) anyway
  for (const auto& d : diffs) EXPECT_EQ(d.cron_job, "default/forbid");
}

TEST_F(IncidentDay, WhatIfALongerDeadlineRunsTheLateSlot) {
  const auto diffs = WhatIf("default/deadline", {"spec.startingDeadlineSeconds=300"});
  EXPECT_TRUE(Has(diffs, At(10, 30), "would run"));
  EXPECT_FALSE(Has(diffs, At(10, 20), "would run"));  // it ran anyway
}

TEST_F(IncidentDay, WhatIfNoDowntimeRunsEveryMissedSlotAndNoOpChangesNothing) {
  const auto diffs = WhatIf("default/every15", {"controller.noDowntime=true"});
  for (Time t = At(11, 0); t < At(12, 45); t = t.AddSeconds(900)) {
    EXPECT_TRUE(Has(diffs, t, "would run")) << FormatRfc3339(t);
  }
  EXPECT_TRUE(WhatIf("default/every15", {"spec.suspend=false"}).empty());
  const auto unsuspended = WhatIf("default/susp", {"spec.suspend=false"});
  EXPECT_TRUE(Has(unsuspended, At(10, 10), "would run"));
}

}  // namespace
}  // namespace cronledger::replay
