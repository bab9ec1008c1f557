// Bundle encoding: base64, the file's checks (checksum, counts, version), and a round trip of
// every record kind through export and read.

#include "replay/bundle.h"

#include <gtest/gtest.h>

#include "model/json.h"

namespace cronledger::replay {
namespace {

TEST(Base64, Rfc4648Vectors) {
  const std::pair<std::string, std::string> kVectors[] = {{"", ""},
                                                          {"f", "Zg=="},
                                                          {"fo", "Zm8="},
                                                          {"foo", "Zm9v"},
                                                          {"foob", "Zm9vYg=="},
                                                          {"fooba", "Zm9vYmE="},
                                                          {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, encoded] : kVectors) {
    EXPECT_EQ(Base64Encode(plain), encoded);
    auto back = Base64Decode(encoded);
    ASSERT_TRUE(back.ok()) << encoded;
    EXPECT_EQ(*back, plain);
  }
  std::string all;
  for (int i = 0; i < 256; ++i) all.push_back(static_cast<char>(i));
  EXPECT_EQ(*Base64Decode(Base64Encode(all)), all);
  for (const char* bad : {"Zg=", "Z===", "Zm9v!A==", "=Zm9", "Zg==Zg=="}) {
    EXPECT_FALSE(Base64Decode(bad).ok()) << bad;
  }
}

Time At(int m) { return Time::FromUnix(1704067200 + m * 60); }

MemorySource Sample() {
  std::vector<store::LogRecord> in;
  auto add = [&](model::Input i) {
    store::LogRecord r;
    r.seq = in.size() + 1;
    r.recorded_at = At(static_cast<int>(r.seq));
    r.input = std::move(i);
    in.push_back(std::move(r));
  };
  add(model::ConfigChange{At(0), "localTimeZone", "UTC"});
  model::WatchEvent ev;
  ev.kind = model::ObjectKind::kCronJob;
  ev.namespace_ = "default";
  ev.name = "a";
  ev.uid = "u";
  ev.raw = R"({"metadata":{"name":"a"}})";
  add(ev);
  add(model::Tick{At(1), "default", "a", "cronjob-add"});
  add(model::PassEnd{At(1), 3, 2, "default", "a", "u", 0, "requeue", "{}"});
  model::Decision d;
  d.seq = 1;
  d.time = At(1);
  d.cron_job = {"default", "a", "u"};
  d.action = model::DecisionAction::kRequeue;
  d.cause = {3, 2, "cronjob-add"};
  return MemorySource(std::move(in), {d});
}

TEST(Bundle, RoundTripKeepsEveryRecordAndTheHeader) {
  MemorySource src = Sample();
  BundleHeader h;
  h.schema_version = 1;
  h.tzdata = "2025b";
  auto text = ExportBundle(src, ReplayScope{}, h);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto loaded = ReadBundle(*text);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->header.tzdata, "2025b");
  EXPECT_EQ(loaded->header.inputs, 4u);
  ASSERT_EQ(loaded->source->inputs().size(), src.inputs().size());
  for (size_t i = 0; i < src.inputs().size(); ++i) {
    EXPECT_EQ(loaded->source->inputs()[i].seq, src.inputs()[i].seq);
    EXPECT_EQ(loaded->source->inputs()[i].input, src.inputs()[i].input);
    EXPECT_EQ(loaded->source->inputs()[i].recorded_at, src.inputs()[i].recorded_at);
  }
  EXPECT_EQ(loaded->source->decisions(), src.decisions());
  // Export of the loaded bundle is byte-identical.
  auto again = ExportBundle(*loaded->source, ReplayScope{}, h);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *text);
}

TEST(Bundle, DetectsTamperingTruncationAndOtherVersions) {
  MemorySource src = Sample();
  const std::string text = *ExportBundle(src, ReplayScope{}, BundleHeader{});
  std::string flipped = text;
  flipped[text.find("\"input\":2") + 8] = '7';  // a changed seq breaks the checksum
  EXPECT_TRUE(ReadBundle(flipped).status().IsCorruption());
  const size_t last_line = text.rfind('\n', text.size() - 2) + 1;
  EXPECT_TRUE(ReadBundle(text.substr(0, last_line)).status().IsCorruption());
  std::string v2 = text;
  v2.replace(v2.find("\"version\":1"), 11, "\"version\":2");
  EXPECT_EQ(ReadBundle(v2).status().code(), Status::Code::kFailedPrecondition);
  EXPECT_TRUE(ReadBundle("{\"hello\":1}\n").status().IsCorruption());
}

// Members of the wrong type are errors of the bundle, never an exception out of the reader.
TEST(Bundle, MembersOfTheWrongTypeAreErrorsNotExceptions) {
  MemorySource src = Sample();
  const std::string text = *ExportBundle(src, ReplayScope{}, BundleHeader{});
  const std::string header = text.substr(0, text.find('\n'));
  const std::vector<std::pair<std::string, std::string>> edits = {
      {"\"bundle\":\"cronledger\"", "\"bundle\":5"},
      {"\"version\":1", "\"version\":\"1\""},
      {"\"inputs\":", "\"inputs\":\"x\",\"was\":"},
      {"\"tzdata\":", "\"tzdata\":[],\"was\":"},
  };
  for (const auto& [from, to] : edits) {
    std::string bad = text;
    const size_t at = bad.find(from);
    ASSERT_NE(at, std::string::npos) << from << " in " << header;
    bad.replace(at, from.size(), to);
    auto read = ReadBundle(bad);
    EXPECT_FALSE(read.ok()) << to;
    EXPECT_FALSE(read.status().message().empty()) << to;
  }
  for (const char* line : {"[1,2]\n", "{\"bundle\":\"cronledger\",\"scope\":7}\n",
                           "{\"bundle\":{\"a\":1},\"version\":true}\n"}) {
    EXPECT_FALSE(ReadBundle(line).ok()) << line;
  }
}

}  // namespace
}  // namespace cronledger::replay
