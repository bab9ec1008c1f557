// Replay over two calendar incidents recorded by the real controller loop
// (tests/replay/sim_world.h): a DST fall-back day (America/New_York, "30 1 * * *": 01:30 happens
// twice) and a schedule edited mid-day. Each: verify reproduces the stream with equal digests,
// `why` names the cause, and a what-if gives the expected difference.

#include <gtest/gtest.h>

#include "replay/diff.h"
#include "replay/engine.h"
#include "replay/explain.h"
#include "tests/replay/sim_world.h"

namespace cronledger::replay {
namespace {

using testing::At;
using testing::Manifest;
using testing::SimWorld;

// 2024-11-03 (the US fall-back day: 02:00 EDT = 06:00Z becomes 01:00 EST) + hh:mm:ss UTC.
Time Nov3(int hh, int mm, int ss = 0) {
  return Time::FromUnix(1730592000 + hh * 3600 + mm * 60 + ss);
}

ReplayResult Run(SimWorld& w, const ReplayOptions& o = {}) {
  LedgerSource src(w.ledger());
  auto r = Replay(src, o);
  CL_CHECK(r.ok());
  return std::move(*r);
}

Why Explain(SimWorld& w, const std::string& cj, Time t) {
  LedgerSource src(w.ledger());
  WhyQuery q;
  q.cron_job = cj;
  q.scheduled = t;
  auto why = replay::Explain(src, q);
  CL_CHECK(why.ok());
  return std::move(*why);
}

std::string Joined(const Why& w) {
  std::string s;
  for (const auto& x : w.sentences) s += x + "\n";
  return s;
}

std::vector<SlotDifference> WhatIf(SimWorld& w, const std::string& cj, const std::string& set) {
  ReplayOptions o;
  o.scope.cron_job = cj;
  CL_CHECK(ApplySetting(set, &o.what_if).ok());
  const ReplayResult r = Run(w, o);
  return DiffTerminal(r.recorded, r.derived);
}

const SlotDifference* Find(const std::vector<SlotDifference>& diffs, Time t) {
  for (const auto& d : diffs) {
    if (d.scheduled == t) return &d;
  }
  return nullptr;
}

// The terminal records (create or skip) of a CronJob, by fire time.
std::map<Time, model::Decision> Terminals(SimWorld& w, const std::string& name) {
  std::map<Time, model::Decision> out;
  CL_CHECK(w.ledger()
               .ScanDecisions(1,
                              [&](const model::Decision& d) {
                                if (d.cron_job.name == name && d.scheduled_time &&
                                    (d.action == model::DecisionAction::kCreateJob ||
                                     d.action == model::DecisionAction::kSkipped)) {
                                  out.emplace(*d.scheduled_time, d);
                                }
                                return true;
                              })
               .ok());
  return out;
}

void ExpectVerifies(SimWorld& w) {
  const ReplayResult r = Run(w);
  EXPECT_EQ(r.divergences, 0u) << (r.first_divergence ? r.first_divergence->what : "");
  EXPECT_EQ(r.derived_digest.sha256, r.recorded_digest.sha256);
  EXPECT_GT(r.derived_digest.decisions, 0u);
  EXPECT_GT(r.passes_replayed, 3u);
}

class FallBackDay : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    world_ = new SimWorld(Nov3(3, 59, 30), std::chrono::minutes(10));
    world_->Apply(Manifest("nightly", "30 1 * * *", {{"timeZone", "America/New_York"}}));
    world_->RunUntil(Nov3(8, 0));
  }
  static void TearDownTestSuite() {
    delete world_;
    world_ = nullptr;
  }
  static SimWorld* world_;
};
SimWorld* FallBackDay::world_ = nullptr;

TEST_F(FallBackDay, TheRepeatedHourRunsTwiceAndVerifies) {
  // 01:30 EDT (05:30Z) and 01:30 EST (06:30Z): the cron library matches wall-clock fields, so
  // both are fire times.
  const auto t = Terminals(*world_, "nightly");
  ASSERT_EQ(t.size(), 2u);
  EXPECT_EQ(t.at(Nov3(5, 30)).action, model::DecisionAction::kCreateJob);
  EXPECT_EQ(t.at(Nov3(6, 30)).action, model::DecisionAction::kCreateJob);
  ExpectVerifies(*world_);
}

TEST_F(FallBackDay, WhyTheSecondRunNamesTheRepeatedWallClockTime) {
  const Why w = Explain(*world_, "default/nightly", Nov3(6, 30));
  EXPECT_EQ(w.verdict, "created");
  const std::string text = Joined(w);
  EXPECT_NE(text.find("In America/New_York the fire time is 2024-11-03T01:30:00-05:00: the "
                      "clocks fell back, so the same wall-clock time also occurred at "
                      "2024-11-03T05:30:00Z (2024-11-03T01:30:00-04:00)"),
            std::string::npos)
      << text;
  EXPECT_EQ(w.facts["wallClock"]["repeatedAt"], "2024-11-03T05:30:00Z");
  // An ordinary fire time says nothing about the clocks.
  const Why first = Explain(*world_, "default/nightly", Nov3(5, 30));
  EXPECT_EQ(first.verdict, "created");
  EXPECT_NE(Joined(first).find("also occurred at 2024-11-03T06:30:00Z"), std::string::npos)
      << Joined(first);
}

TEST_F(FallBackDay, WhatIfUtcRunsNeitherRepeatedSlot) {
  const auto diffs = WhatIf(*world_, "default/nightly", "spec.timeZone=UTC");
  for (Time t : {Nov3(5, 30), Nov3(6, 30)}) {
    const SlotDifference* d = Find(diffs, t);
    ASSERT_NE(d, nullptr) << FormatRfc3339(t);
    // Not a fire time of the what-if schedule: no terminal record on that side.
    EXPECT_EQ(d->change, "only recorded");
    ASSERT_TRUE(d->recorded);
    EXPECT_EQ(d->recorded->action, model::DecisionAction::kCreateJob);
    EXPECT_FALSE(d->what_if);
  }
  EXPECT_EQ(diffs.size(), 2u);
}

class ScheduleEdit : public ::testing::Test {
 protected:
  // Hourly at :00 until 12:10, then edited to :30.
  static void SetUpTestSuite() {
    world_ = new SimWorld(At(9, 59, 30), std::chrono::minutes(5));
    world_->Apply(Manifest("edit", "0 * * * *"));
    world_->RunUntil(At(12, 10));
    world_->Apply(Manifest("edit", "30 * * * *"));
    world_->RunUntil(At(14, 0));
    CL_CHECK(world_->ledger()
                 .ScanInputs(1, true,
                             [&](const store::LogRecord& r) {
                               const auto* ev = std::get_if<model::WatchEvent>(&r.input);
                               if (ev && ev->name == "edit" && edit_seq_ == 0 &&
                                   ev->raw.find("30 * * * *") != std::string::npos) {
                                 edit_seq_ = r.seq;
                               }
                               return true;
                             })
                 .ok());
    CL_CHECK(edit_seq_ != 0);
  }
  static void TearDownTestSuite() {
    delete world_;
    world_ = nullptr;
  }
  static SimWorld* world_;
  static uint64_t edit_seq_;
};
SimWorld* ScheduleEdit::world_ = nullptr;
uint64_t ScheduleEdit::edit_seq_ = 0;

TEST_F(ScheduleEdit, TheEditMovesTheRunsAndVerifies) {
  const auto t = Terminals(*world_, "edit");
  std::vector<Time> created;
  for (const auto& [at, d] : t) {
    EXPECT_EQ(d.action, model::DecisionAction::kCreateJob) << FormatRfc3339(at);
    created.push_back(at);
  }
  EXPECT_EQ(created, (std::vector<Time>{At(10, 0), At(11, 0), At(12, 0), At(12, 30), At(13, 30)}));
  ExpectVerifies(*world_);
}

TEST_F(ScheduleEdit, WhyTheDroppedSlotNamesTheEdit) {
  const Why w = Explain(*world_, "default/edit", At(13, 0));
  EXPECT_EQ(w.verdict, "not a fire time");
  const std::string text = Joined(w);
  EXPECT_NE(text.find("2024-01-01T13:00:00Z was a fire time of the earlier schedule \"0 * * * "
                      "*\""),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("the update at input #" + std::to_string(edit_seq_) + " (resourceVersion "),
            std::string::npos)
      << text;
  EXPECT_EQ(w.facts["scheduleChange"]["changedSeq"], edit_seq_);
  EXPECT_EQ(w.facts["scheduleChange"]["schedule"], "30 * * * *");
  // The new slot was created by a pass that read the edited CronJob.
  const Why created = Explain(*world_, "default/edit", At(12, 30));
  EXPECT_EQ(created.verdict, "created");
  EXPECT_GE(created.facts["decidedBy"]["cronJobSeq"].get<uint64_t>(), edit_seq_);
  EXPECT_NE(Joined(created).find("schedule \"30 * * * *\""), std::string::npos) << Joined(created);
}

TEST_F(ScheduleEdit, WhatIfTheOldScheduleKeepsTheHourlyRuns) {
  const auto diffs = WhatIf(*world_, "default/edit", "spec.schedule=0 * * * *");
  const SlotDifference* at13 = Find(diffs, At(13, 0));
  ASSERT_NE(at13, nullptr);
  // 13:00 is a fire time only of the what-if schedule: the pass at 13:30 starts it late.
  EXPECT_EQ(at13->change, "only what-if");
  ASSERT_TRUE(at13->what_if);
  EXPECT_EQ(at13->what_if->action, model::DecisionAction::kCreateJob);
  for (Time t : {At(12, 30), At(13, 30)}) {
    const SlotDifference* d = Find(diffs, t);
    ASSERT_NE(d, nullptr) << FormatRfc3339(t);
    EXPECT_EQ(d->change, "only recorded");
    EXPECT_FALSE(d->what_if);
  }
  EXPECT_EQ(diffs.size(), 3u);
}

}  // namespace
}  // namespace cronledger::replay
