// A ledger in the record model before passes that change nothing stopped being recorded, before
// intents stopped carrying their call's body and outcomes kept only what a pass reads
// (tests/replay/golden/manifests.yaml says how it was recorded). This build must still replay it
// byte for byte and answer why and state from it.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <utility>

#include "model/json.h"
#include "tests/testing/cli.h"

namespace cronledger::replay {
namespace {

using cli_test::Cli;
using cli_test::CliResult;

std::string Bundle() {
  const char* root = std::getenv("CRONLEDGER_SOURCE_DIR");
  return std::string(root ? root : ".") + "/tests/replay/golden/ledger-2026-11-29.bundle";
}

model::Json Json(const CliResult& r) {
  auto j = model::ParseJson(r.out);
  CL_CHECK(j.ok());
  return *j;
}

// The old record model shows in its decisions: passes that a Job's watch event started and that
// only requeued (this build leaves such passes unrecorded).
TEST(GoldenFormat, TheBundleIsInTheOldRecordModel) {
  ASSERT_TRUE(std::ifstream(Bundle()).good()) << Bundle();
  const CliResult replayed = Cli("replay -o json --bundle " + Bundle());
  ASSERT_EQ(replayed.exit_code, 0) << replayed.out;
  size_t only_requeue_job_passes = 0;
  std::map<uint64_t, std::pair<std::string, bool>> passes;  // tick seq -> trigger, only requeue
  const model::Json stream = Json(replayed);
  for (const model::Json& d : stream["items"]) {
    const uint64_t tick = d["cause"]["tickSeq"].get<uint64_t>();
    auto [it, added] = passes.try_emplace(tick, d["cause"]["trigger"].get<std::string>(), true);
    it->second.second = it->second.second && d["action"] == "requeue";
  }
  for (const auto& [tick, pass] : passes) {
    only_requeue_job_passes += pass.second && pass.first.rfind("job-", 0) == 0;
  }
  EXPECT_GT(only_requeue_job_passes, 5u);
}

TEST(GoldenFormat, ReplayVerifiesItByteForByte) {
  const CliResult r = Cli("replay --verify -o json --bundle " + Bundle());
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const model::Json j = Json(r);
  EXPECT_EQ(j["match"], true);
  ASSERT_EQ(j["items"].size(), 2u);
  EXPECT_EQ(j["items"][0]["sha256"], j["items"][1]["sha256"]);
  // The digest of the recorded stream as the recording build printed it.
  EXPECT_EQ(j["items"][0]["sha256"],
            "f7bf89c30e8a7b327c2a8faa6d8b5811d93cfd6e875c3f8e9eae013f2102dca6");
  EXPECT_EQ(j["items"][0]["decisions"], 175);
}

TEST(GoldenFormat, WhyAndStateAnswerFromIt) {
  const CliResult why =
      Cli("why golden/forbid --scheduled 2026-11-29T10:04:00Z -o json --bundle " + Bundle());
  ASSERT_EQ(why.exit_code, 0) << why.out;
  EXPECT_NE(why.out.find("10:04"), std::string::npos) << why.out;
  const CliResult state =
      Cli("state golden/every-minute --at 2026-11-29T10:05:30Z -o json --bundle " + Bundle());
  ASSERT_EQ(state.exit_code, 0) << state.out;
  EXPECT_NE(state.out.find("every-minute"), std::string::npos) << state.out;
}

}  // namespace
}  // namespace cronledger::replay
