#include "app/manifests.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
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

TEST(Yaml, ATokenAfterTheDocumentIsAnErrorNotAnEndlessLoad) {
  // yaml-cpp alone keeps yielding empty documents at the stray comma until memory runs out.
  for (const char* text : {"{},", "[],", "\"a\",", "x: 1\n---\n{a: 1},"}) {
    auto docs = YamlDocumentsToJson(text);
    ASSERT_FALSE(docs.ok()) << text;
    EXPECT_NE(docs.status().message().find("unexpected content after the end of a document"),
              std::string::npos)
        << docs.status().message();
  }
  auto stray = YamlDocumentsToJson("x: 1\n---\n{a: 1},");
  ASSERT_FALSE(stray.ok());
  EXPECT_NE(stray.status().message().find("line 3"), std::string::npos) << stray.status().message();
  auto fine = YamlDocumentsToJson("{a: 1}\n---\n[1, 2]\n");
  ASSERT_TRUE(fine.ok()) << fine.status().message();
  EXPECT_EQ(fine->size(), 2u);
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

// A manifest file in a fresh temporary directory, removed with the object.
class TempManifest {
 public:
  TempManifest(const std::string& file_name, const std::string& text) {
    std::string tmpl = (std::filesystem::temp_directory_path() / "manifests-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    path_ = dir_ + "/" + file_name;
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempManifest() { std::filesystem::remove_all(dir_); }
  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
};

// A CronJob whose jobTemplate.spec.template nests `depth` levels of {"a": ...} in all.
std::string DeepCronJobJson(size_t levels) {
  std::string deep;
  for (size_t i = 1; i < levels; ++i) deep += R"({"a":)";
  deep += "{}" + std::string(levels - 1, '}');
  return R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"deep"},)"
         R"("spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":)" +
         deep + "}}}}";
}

TEST(Manifests, ObjectsWithinTheApiServersLimitsLoadAndDeeperOnesAreRefused) {
  // 4 levels around the template: the object, spec, jobTemplate, jobTemplate.spec.
  TempManifest at_limit("at.json", DeepCronJobJson(10000 - 4));
  auto ok = LoadManifests({at_limit.path()});
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->cron_jobs.size(), 1u);

  for (size_t levels : {size_t{10000 - 3}, size_t{100000}}) {
    TempManifest deep("deep.json", DeepCronJobJson(levels));
    auto loaded = LoadManifests({deep.path()});
    ASSERT_FALSE(loaded.ok()) << levels;
    EXPECT_NE(loaded.status().message().find("over limit: JSON nesting deeper than"),
              std::string::npos)
        << loaded.status().message();
  }
}

TEST(Manifests, DeepYamlIsAnErrorNotACrash) {
  TempManifest deep("deep.yaml", "a: " + std::string(100000, '[') + std::string(100000, ']'));
  auto loaded = LoadManifests({deep.path()});
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("YAML"), std::string::npos);
}

TEST(Manifests, ObjectsLargerThanTheApiServerAcceptsAreRefused) {
  const std::string big(size_t{3} << 20, 'x');
  TempManifest large("big.yaml",
                     "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: big\n"
                     "  annotations:\n    big: " +
                         big + "\nspec:\n  schedule: '* * * * *'\n");
  auto loaded = LoadManifests({large.path()});
  ASSERT_FALSE(loaded.ok());
  EXPECT_NE(loaded.status().message().find("over limit: object of"), std::string::npos)
      << loaded.status().message().substr(0, 200);
}

// Found by the fuzz smoke run: `kind:` with no value used to throw out of the loader.
TEST(Manifests, AKindThatIsNotAStringIsSkippedNotAnException) {
  ManifestLoadResult out;
  const Status s = LoadManifestText("m.yaml",
                                    "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: a\n"
                                    "spec:\n  schedule: '* * * * *'\n  jobTemplate: {}\n"
                                    "---\nkind:\n---\nkind: 5\n---\nkind: [CronJob]\n",
                                    &out);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_EQ(out.cron_jobs.size(), 1u);
  EXPECT_EQ(out.skipped, (std::vector<std::string>{"m.yaml:1: kind \"\" is not a CronJob",
                                                   "m.yaml:2: kind is not a string",
                                                   "m.yaml:3: kind is not a string"}));
}

TEST(Manifests, MissingPathIsNotFound) {
  auto loaded = LoadManifests({"/nonexistent/cronledger/manifests"});
  ASSERT_FALSE(loaded.ok());
  EXPECT_TRUE(loaded.status().IsNotFound());
}

}  // namespace
}  // namespace cronledger::app
