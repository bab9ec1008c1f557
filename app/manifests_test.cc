#include "app/manifests.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace cronledger::app {
namespace {

TEST(Yaml, ScalarsAreTypedLikeKubernetes) {
  auto docs = YamlDocumentsToJson(R"(
a: "0 2 * * *"
b: true
c: "true"
d: 600
e: "600"
f: ~
g: [1, x]
h: 1.5
---
second: doc
)");
  ASSERT_TRUE(docs.ok()) << docs.status().ToString();
  ASSERT_EQ(docs->size(), 2u);
  const auto& d = (*docs)[0];
  EXPECT_EQ(d["a"], "0 2 * * *");
  EXPECT_EQ(d["b"], true);
  EXPECT_EQ(d["c"], "true");
  EXPECT_EQ(d["d"], 600);
  EXPECT_EQ(d["e"], "600");
  EXPECT_TRUE(d["f"].is_null());
  EXPECT_EQ(d["g"][0], 1);
  EXPECT_EQ(d["g"][1], "x");
  EXPECT_DOUBLE_EQ(d["h"].get<double>(), 1.5);
  EXPECT_EQ((*docs)[1]["second"], "doc");
}

TEST(Yaml, SyntaxErrorIsAStatus) {
  auto docs = YamlDocumentsToJson("a: [1, 2\nb: }");
  ASSERT_FALSE(docs.ok());
  EXPECT_NE(docs.status().message().find("YAML"), std::string::npos);
}

TEST(Manifests, LoadsTheShippedSamples) {
  const char* src = std::getenv("CRONLEDGER_SOURCE_DIR");
  ASSERT_NE(src, nullptr);
  auto loaded = LoadManifests({std::string(src) + "/deploy/samples"});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->cron_jobs.size(), 9u);
  EXPECT_TRUE(loaded->skipped.empty());
  bool saw_berlin = false;
  for (const auto& m : loaded->cron_jobs) {
    if (m.cron_job.metadata.name == "nightly-backup") {
      saw_berlin = m.cron_job.spec.time_zone == "Europe/Berlin" &&
                   m.cron_job.spec.starting_deadline_seconds == 600 &&
                   m.cron_job.spec.concurrency_policy == "Forbid";
    }
  }
  EXPECT_TRUE(saw_berlin);
}

TEST(Manifests, MissingPathIsNotFound) {
  auto loaded = LoadManifests({"/nonexistent/cronledger/manifests"});
  ASSERT_FALSE(loaded.ok());
  EXPECT_TRUE(loaded.status().IsNotFound());
}

}  // namespace
}  // namespace cronledger::app
