// The timeline page end to end: `cronledger serve` over a simulated store with shadow-mode
// divergences added, loaded in headless Chromium with the token in the URL fragment; the rendered
// DOM must show the marks the API reports (the suspended CronJob's fire times as skipped
// Suspended) and a mark per divergence with its kind. A screenshot is kept in the build tree as a
// test artefact (audit-timeline.png).
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "model/json.h"
#include "store/test_util.h"
#include "tests/audit/divergence_store.h"
#include "tests/audit/serve.h"
#include "tests/testing/cli.h"

namespace cronledger::audit {
namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

std::string Chromium(const std::string& profile, const std::string& mode, const std::string& url) {
  return cli_test::Run({kChromium, "--headless", "--no-sandbox", "--disable-gpu",
                        "--disable-background-networking", "--disable-component-update",
                        "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                        "--virtual-time-budget=30000", "--window-size=1400,1800",
                        "--user-data-dir=" + profile, mode, url})
      .out;
}

// The HTML of the CronJob's section, from its data-cronjob attribute to the section's end.
std::string Section(const std::string& dom, const std::string& cron_job) {
  const size_t at = dom.find("data-cronjob=\"" + cron_job + "\"");
  if (at == std::string::npos) return "";
  const size_t end = dom.find("</section>", at);
  return dom.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

size_t Count(const std::string& s, const std::string& needle) {
  size_t n = 0;
  for (size_t at = s.find(needle); at != std::string::npos; at = s.find(needle, at + 1)) ++n;
  return n;
}

TEST(TimelinePage, RendersMarksForEveryFireTimeInHeadlessChromium) {
  if (access(kChromium, X_OK) != 0) {
    GTEST_SKIP() << "headless Chromium test skipped: " << kChromium
                 << " is not installed (Debian package `chromium`)";
  }
  store::testing::TempDir dir;
  const auto sim =
      cli_test::Cli("simulate " + cli_test::SourceDir() +
                    "/deploy/samples --duration 12h -o json --data-dir " + dir.Sub("data"));
  ASSERT_EQ(sim.exit_code, 0) << sim.out;
  // The API's own answer for the suspended CronJob, to compare the page against.
  const auto api = model::ParseJson(
      cli_test::Cli("report adherence --cronjob platform/legacy-migration -o json --data-dir " +
                    dir.Sub("data"))
          .out);
  ASSERT_TRUE(api.ok());
  const uint64_t expected = (*api)["items"][0]["expected"].get<uint64_t>();
  const uint64_t suspended = (*api)["items"][0]["skippedByReason"].value("Suspended", 0u);
  const uint64_t unaccounted = (*api)["items"][0]["unaccounted"].get<uint64_t>();
  const uint64_t held = (*api)["items"][0]["pendingHeld"].get<uint64_t>();
  ASSERT_GT(suspended, 0u);
  EXPECT_EQ(held, 1u);
  testing::AddSampleDivergences(dir.Sub("data"));

  // serve opens the store read-only; the report above is what the page must show.
  std::ofstream(dir.Sub("token")) << "page-token\n";
  ServeProcess serve(dir.Sub("data"), dir.Sub("token"));
  ASSERT_NE(serve.port(), 0);

  const std::string url = serve.url() + "/#token=page-token";
  const std::string dom = Chromium(dir.Sub("profile"), "--dump-dom", url);
  ASSERT_NE(dom.find("data-state=\"loaded\""), std::string::npos) << dom.substr(0, 4000);
  const std::string legacy = Section(dom, "platform/legacy-migration");
  ASSERT_FALSE(legacy.empty()) << dom.substr(0, 4000);
  EXPECT_NE(legacy.find("data-expected=\"" + std::to_string(expected) + "\""), std::string::npos);
  EXPECT_EQ(Count(legacy, "class=\"mark skipped\""), suspended) << legacy.substr(0, 2000);
  // The newest fire time is held pending by the controller's accounting, with reason Suspended.
  EXPECT_EQ(Count(legacy, "data-held=\"true\""), held);
  EXPECT_EQ(Count(legacy, "data-reason=\"Suspended\""), suspended + held);
  EXPECT_EQ(Count(legacy, "class=\"mark unaccounted\""), unaccounted);
  EXPECT_EQ(Count(legacy, "class=\"mark created"), 0u);
  // A running CronJob shows created marks.
  const std::string warmer = Section(dom, "platform/cache-warmer");
  EXPECT_GT(Count(warmer, "class=\"mark created"), 0u);
  // Divergences: a mark each on their CronJob's lane, with the kind in its class and tooltip.
  EXPECT_EQ(Count(warmer, "class=\"divergence MissedRun\""), 1u) << warmer.substr(0, 2000);
  EXPECT_EQ(Count(warmer, "class=\"divergence LateRun\""), 1u);
  EXPECT_EQ(Count(warmer, "class=\"divergence UnexpectedJob\""), 0u);
  EXPECT_NE(warmer.find("data-divergences=\"2\""), std::string::npos);
  EXPECT_NE(warmer.find("title=\"LateRun · cache-warmer-"), std::string::npos);
  const std::string heartbeat = Section(dom, "platform/heartbeat");
  EXPECT_EQ(Count(heartbeat, "class=\"divergence "), 1u);
  EXPECT_EQ(Count(heartbeat, "class=\"divergence UnexpectedJob\""), 1u);
  EXPECT_EQ(Count(legacy, "class=\"divergence "), 0u);
  // The namespace overview counts them per namespace (platform: cache-warmer's 2, heartbeat's 1).
  const size_t platform_row = dom.find("data-namespace=\"platform\"");
  ASSERT_NE(platform_row, std::string::npos);
  const std::string platform_tag =
      dom.substr(platform_row, dom.find('>', platform_row) - platform_row);
  EXPECT_NE(platform_tag.find("data-divergences=\"3\""), std::string::npos) << platform_tag;
  // The namespace overview lists both namespaces of the samples.
  EXPECT_NE(dom.find("data-namespace=\"platform\""), std::string::npos);
  EXPECT_NE(dom.find("data-namespace=\"finance\""), std::string::npos);
  // Without the token the page reports the API's refusal.
  const std::string refused =
      Chromium(dir.Sub("profile2"), "--dump-dom", serve.url() + "/#token=wrong");
  EXPECT_NE(refused.find("data-state=\"error\""), std::string::npos);
  EXPECT_NE(refused.find("401"), std::string::npos);

  const std::string shot = std::string(AUDIT_ARTIFACT_DIR) + "/audit-timeline.png";
  std::remove(shot.c_str());
  Chromium(dir.Sub("profile3"), "--screenshot=" + shot, url);
  EXPECT_EQ(access(shot.c_str(), R_OK), 0) << "no screenshot at " << shot;
  EXPECT_EQ(serve.Stop(), 0);
}

}  // namespace
}  // namespace cronledger::audit
