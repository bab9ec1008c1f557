// `cronledger replay|why|state|export` end to end, on a data directory recorded by the real
// controller loop (sim_world.h).

#include "tests/testing/cli.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "model/json.h"
#include "reconciler/job_builder.h"
#include "tests/replay/sim_world.h"

namespace cronledger::replay {
namespace {

using testing::At;

using cli_test::Cli;
using cli_test::CliResult;

model::Json Json(const CliResult& r) {
  auto j = model::ParseJson(r.out);
  CL_CHECK(j.ok());
  return *j;
}

class ReplayCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    world_ = new testing::SimWorld(At(9, 59, 30), std::chrono::minutes(12));
    testing::RecordIncidentDay(*world_);
    world_->CloseLedger();
    data_ = " --data-dir " + world_->data_dir();
  }
  static void TearDownTestSuite() {
    delete world_;
    world_ = nullptr;
  }
  static testing::SimWorld* world_;
  static std::string data_;
};
testing::SimWorld* ReplayCli::world_ = nullptr;
std::string ReplayCli::data_;

TEST_F(ReplayCli, VerifyPrintsEqualDigestsAndExitsZero) {
  const CliResult r = Cli("replay --verify -o json" + data_);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const model::Json j = Json(r);
  EXPECT_EQ(j["match"], true);
  ASSERT_EQ(j["items"].size(), 2u);
  EXPECT_EQ(j["items"][0]["stream"], "recorded");
  EXPECT_EQ(j["items"][0]["sha256"], j["items"][1]["sha256"]);
  EXPECT_EQ(j["items"][0]["sha256"].get<std::string>().size(), 64u);

  const CliResult stream = Cli("replay -o json" + data_);
  ASSERT_EQ(stream.exit_code, 0);
  EXPECT_EQ(Json(stream)["items"].size(), j["items"][0]["decisions"].get<size_t>());
  const CliResult table = Cli("replay --verify" + data_);
  EXPECT_NE(table.out.find("derived"), std::string::npos) << table.out;
}

TEST_F(ReplayCli, LabelSelectorRestrictsTheReplay) {
  // The incident day's CronJobs carry no labels: "!app" selects all of them, "app" none.
  const CliResult all = Cli("replay --verify -o json" + data_);
  const CliResult unlabelled = Cli("replay --verify -o json -l '!app'" + data_);
  ASSERT_EQ(unlabelled.exit_code, 0) << unlabelled.out;
  EXPECT_EQ(Json(unlabelled)["items"][1]["sha256"], Json(all)["items"][1]["sha256"]);
  const CliResult labelled = Cli("replay --verify -o json --selector 'app in (web,batch)'" + data_);
  ASSERT_EQ(labelled.exit_code, 0) << labelled.out;
  EXPECT_EQ(Json(labelled)["items"][1]["decisions"], 0);
  EXPECT_EQ(Json(labelled)["passes"], 0);
  EXPECT_EQ(Cli("replay --verify -l 'app in (web'" + data_).exit_code, 2);
}

// The commands open the store read-only: they work while the controller holds it open.
TEST(ReplayCliLive, CommandsReadAStoreTheControllerHoldsOpen) {
  testing::SimWorld w(At(9, 59, 30), std::chrono::minutes(12));
  w.Apply(testing::Manifest("live", "*/5 * * * *", {{"concurrencyPolicy", "Forbid"}}));
  w.RunUntil(At(10, 21));
  const std::string data = " --data-dir " + w.data_dir();
  const CliResult v = Cli("replay --verify -o json" + data);
  ASSERT_EQ(v.exit_code, 0) << v.out;
  EXPECT_EQ(Json(v)["match"], true);
  EXPECT_GT(Json(v)["items"][0]["decisions"].get<int>(), 0);
  const CliResult why = Cli("why default/live --scheduled 2024-01-01T10:05:00Z -o json" + data);
  ASSERT_EQ(why.exit_code, 0) << why.out;
  EXPECT_EQ(Json(why)["items"][0]["reason"], "ConcurrencyForbid");
  // The writer goes on, and a later read sees what it wrote meanwhile.
  w.RunUntil(At(10, 31));
  const CliResult state = Cli("state default/live --at 2024-01-01T10:30:30Z -o json" + data);
  ASSERT_EQ(state.exit_code, 0) << state.out;
  EXPECT_NE(state.out.find("2024-01-01T10:30:00Z"), std::string::npos) << state.out;
}

TEST_F(ReplayCli, ExportThenReplayBundleGivesTheSameDigestAsTheStore) {
  const std::string scope =
      " --cronjob default/every15 --since 2024-01-01T10:30:00Z --until 2024-01-01T12:55:00Z";
  const std::string bundle = world_->dir().Sub("incident.bundle");
  const CliResult exported = Cli("export" + scope + data_ + " > " + bundle);
  ASSERT_EQ(exported.exit_code, 0);
  const CliResult from_store = Cli("replay --verify -o json" + scope + data_);
  const CliResult from_bundle = Cli("replay --verify -o json --bundle " + bundle);
  ASSERT_EQ(from_store.exit_code, 0) << from_store.out;
  ASSERT_EQ(from_bundle.exit_code, 0) << from_bundle.out;
  EXPECT_EQ(Json(from_bundle)["items"][1]["sha256"], Json(from_store)["items"][1]["sha256"]);
  EXPECT_EQ(Json(from_bundle)["items"][0]["sha256"], Json(from_store)["items"][0]["sha256"]);

  // A bundle with a line removed is rejected (exit 1), not replayed.
  std::ifstream in(bundle);
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  const size_t second = s.find('\n') + 1;
  s.erase(second, s.find('\n', second) + 1 - second);
  std::ofstream(world_->dir().Sub("bad.bundle")) << s;
  EXPECT_EQ(Cli("replay --verify --bundle " + world_->dir().Sub("bad.bundle")).exit_code, 1);
}

TEST_F(ReplayCli, WhyExplainsInSentencesAndJson) {
  const CliResult text = Cli("why default/forbid --scheduled 2024-01-01T10:05:00Z" + data_);
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("did not happen: it was skipped (ConcurrencyForbid)"), std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(reconciler::JobName("forbid", At(10, 0))), std::string::npos);
  const CliResult j = Cli("why default/every15 --at 2024-01-01T11:07:00Z -o json" + data_);
  ASSERT_EQ(j.exit_code, 0);
  const model::Json item = Json(j)["items"][0];
  EXPECT_EQ(item["scheduledTime"], "2024-01-01T11:00:00Z");
  EXPECT_EQ(item["reason"], "Superseded");
  EXPECT_EQ(item["gap"]["controllerDown"], true);
}

TEST_F(ReplayCli, StateAndWhatIf) {
  const CliResult s = Cli("state default/forbid --at 2024-01-01T10:07:00Z -o json" + data_);
  ASSERT_EQ(s.exit_code, 0);
  EXPECT_EQ(Json(s)["items"][0]["cronJobObject"]["active"][0],
            reconciler::JobName("forbid", At(10, 0)));
  const CliResult w =
      Cli("replay --cronjob default/forbid --set spec.concurrencyPolicy=Replace -o json" + data_);
  ASSERT_EQ(w.exit_code, 0);
  bool found = false;
  const model::Json diffs = Json(w);
  for (const auto& d : diffs["items"]) {
    found |= d["scheduledTime"] == "2024-01-01T10:05:00Z" && d["change"] == "would run";
  }
  EXPECT_TRUE(found) << w.out;
}

TEST_F(ReplayCli, BadUsageExitsTwo) {
  EXPECT_EQ(Cli("replay --verify --set spec.suspend=false" + data_).exit_code, 2);
  EXPECT_EQ(Cli("replay --set spec.nothing=1" + data_).exit_code, 2);
  EXPECT_EQ(Cli("replay --since yesterday" + data_).exit_code, 2);
  EXPECT_EQ(Cli("why default/forbid" + data_).exit_code, 2);
  EXPECT_EQ(Cli("why forbid --scheduled 2024-01-01T10:05:00Z" + data_).exit_code, 2);
  EXPECT_EQ(Cli("state default/forbid" + data_).exit_code, 2);
  EXPECT_EQ(Cli("export extra" + data_).exit_code, 2);
  EXPECT_EQ(Cli("replay --data-dir " + world_->dir().Sub("missing")).exit_code, 1);
}

}  // namespace
}  // namespace cronledger::replay
