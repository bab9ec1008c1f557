// Replay restricted by a label selector (-l) on the recorded CronJobs' labels, over a ledger
// recorded by the real controller loop (tests/replay/sim_world.h).

#include <gtest/gtest.h>

#include <set>

#include "replay/engine.h"
#include "tests/replay/sim_world.h"

namespace cronledger::replay {
namespace {

using testing::At;
using testing::Manifest;
using testing::SimWorld;

model::CronJob Labelled(const std::string& name, const model::Json& labels) {
  model::Json j = model::EncodeCronJob(Manifest(name, "*/5 * * * *"));
  j["metadata"]["labels"] = labels;
  auto cj = model::DecodeCronJob(j);
  CL_CHECK(cj.ok());
  return *cj;
}

// web: app=web; batch: app=batch; plain: no labels until 10:17, then app=web.
class Selector : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    world_ = new SimWorld(At(9, 59, 30), std::chrono::minutes(2));
    world_->Apply(Labelled("web", {{"app", "web"}, {"tier", "front"}}));
    world_->Apply(Labelled("batch", {{"app", "batch"}}));
    world_->Apply(Manifest("plain", "*/5 * * * *"));
    world_->RunUntil(At(10, 17));
    world_->Apply(Labelled("plain", {{"app", "web"}}));
    world_->RunUntil(At(10, 31));
  }
  static void TearDownTestSuite() {
    delete world_;
    world_ = nullptr;
  }
  static ReplayResult Run(const std::string& selector) {
    ReplayOptions o;
    auto sel = LabelSelector::Parse(selector);
    CL_CHECK(sel.ok());
    o.scope.selector = std::move(*sel);
    LedgerSource src(world_->ledger());
    auto r = Replay(src, o);
    CL_CHECK(r.ok());
    return std::move(*r);
  }
  static std::set<std::string> Names(const ReplayResult& r) {
    std::set<std::string> out;
    for (const auto& d : r.derived) out.insert(d.cron_job.name);
    return out;
  }
  static SimWorld* world_;
};
SimWorld* Selector::world_ = nullptr;

TEST_F(Selector, EqualityPicksTheLabelledCronJobsAndFollowsALabelChange) {
  const ReplayResult r = Run("app=web");
  EXPECT_EQ(r.divergences, 0u) << (r.first_divergence ? r.first_divergence->what : "");
  EXPECT_EQ(r.derived_digest.sha256, r.recorded_digest.sha256);
  EXPECT_EQ(Names(r), (std::set<std::string>{"web", "plain"}));
  // plain is selected only by the passes after it got its label.
  for (const auto& d : r.derived) {
    if (d.cron_job.name == "plain") {
      EXPECT_GE(d.time, At(10, 17)) << FormatRfc3339(d.time);
    }
  }
  bool plain_after = false;
  for (const auto& d : r.derived) plain_after |= d.cron_job.name == "plain";
  EXPECT_TRUE(plain_after);
}

TEST_F(Selector, SetInequalityAndExistenceRequirements) {
  const ReplayResult batch = Run("app in (web,batch),app!=web");
  EXPECT_EQ(batch.divergences, 0u);
  EXPECT_EQ(Names(batch), (std::set<std::string>{"batch"}));
  const ReplayResult front = Run("tier");
  EXPECT_EQ(Names(front), (std::set<std::string>{"web"}));
  // !app: plain before its label, nothing after.
  const ReplayResult unlabelled = Run("!app");
  EXPECT_EQ(unlabelled.divergences, 0u);
  EXPECT_EQ(Names(unlabelled), (std::set<std::string>{"plain"}));
  for (const auto& d : unlabelled.derived) EXPECT_LT(d.time, At(10, 17));
  const ReplayResult none = Run("app notin (web,batch),app");
  EXPECT_TRUE(none.derived.empty());
  EXPECT_EQ(none.passes_replayed, 0u);
}

TEST_F(Selector, TheSelectedStreamsPartitionTheWholeStream) {
  const ReplayResult all = Run("");
  const ReplayResult a = Run("app=web");
  const ReplayResult b = Run("app!=web");
  EXPECT_EQ(a.derived.size() + b.derived.size(), all.derived.size());
  EXPECT_EQ(a.passes_replayed + b.passes_replayed, all.passes_replayed);
  EXPECT_EQ(b.divergences, 0u);
}

}  // namespace
}  // namespace cronledger::replay
