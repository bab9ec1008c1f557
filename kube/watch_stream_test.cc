#include "kube/watch_stream.h"

#include <gtest/gtest.h>

#include "kube/client.h"
#include "kube/poco_transport.h"
#include "model/json.h"

namespace cronledger::kube {
namespace {

std::string Chunk(const std::string& payload) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", payload.size());
  return size + payload + "\r\n";
}

const char* kEvent1 =
    R"({"type":"ADDED","object":{"kind":"Job","metadata":{"name":"a{b}","resourceVersion":"5"}}})"
    "\n";
const char* kEvent2 =
    R"({"type":"MODIFIED","object":{"metadata":{"name":"q\"}{","resourceVersion":"6"}}})"
    "\n";

// The wire form: two events, the first split across two chunks, then the terminating chunk.
std::string Wire() {
  const std::string e1 = kEvent1;
  // Appended step by step: with precompiled headers g++ 12 -O2 inlines `std::string&& + const
  // char*` here differently and reports a false -Warray-bounds (a known g++ 12 false positive).
  std::string wire = Chunk(e1.substr(0, 17));
  wire += Chunk(e1.substr(17).append(kEvent2));
  wire += "0\r\n\r\n";
  return wire;
}

TEST(WatchStreamTest, DecodesAtEverySplitPoint) {
  const std::string wire = Wire();
  for (size_t split = 0; split <= wire.size(); ++split) {
    ChunkedDecoder chunks;
    JsonStreamSplitter splitter;
    std::vector<std::string> values;
    for (const std::string& part : {wire.substr(0, split), wire.substr(split)}) {
      std::string payload;
      ASSERT_TRUE(chunks.Feed(part, &payload).ok());
      ASSERT_TRUE(splitter.Feed(payload, &values).ok());
    }
    EXPECT_TRUE(chunks.finished()) << split;
    ASSERT_EQ(values.size(), 2u) << split;
    auto e1 = model::ParseJson(values[0]);
    auto e2 = model::ParseJson(values[1]);
    ASSERT_TRUE(e1.ok() && e2.ok());
    EXPECT_EQ((*e1)["type"], "ADDED");
    EXPECT_EQ((*e1)["object"]["metadata"]["name"], "a{b}");
    EXPECT_EQ((*e2)["type"], "MODIFIED");
    EXPECT_EQ((*e2)["object"]["metadata"]["name"], "q\"}{");
  }
}

TEST(WatchStreamTest, ByteAtATime) {
  const std::string wire = Wire();
  ChunkedDecoder chunks;
  JsonStreamSplitter splitter;
  std::vector<std::string> values;
  for (char c : wire) {
    std::string payload;
    ASSERT_TRUE(chunks.Feed(std::string(1, c), &payload).ok());
    ASSERT_TRUE(splitter.Feed(payload, &values).ok());
  }
  EXPECT_EQ(values.size(), 2u);
  EXPECT_TRUE(chunks.finished());
  EXPECT_FALSE(splitter.mid_value());
}

TEST(WatchStreamTest, UnfinishedStreamIsVisible) {
  const std::string e1 = kEvent1;
  ChunkedDecoder chunks;
  JsonStreamSplitter splitter;
  std::vector<std::string> values;
  std::string payload;
  ASSERT_TRUE(chunks.Feed(Chunk(e1.substr(0, 30)), &payload).ok());
  ASSERT_TRUE(splitter.Feed(payload, &values).ok());
  EXPECT_FALSE(chunks.finished());
  EXPECT_TRUE(splitter.mid_value());
  EXPECT_TRUE(values.empty());
}

TEST(WatchStreamTest, RejectsMalformedFraming) {
  ChunkedDecoder chunks;
  std::string out;
  EXPECT_FALSE(chunks.Feed("zz\r\n", &out).ok());
  ChunkedDecoder missing_crlf;
  EXPECT_FALSE(missing_crlf.Feed("2\r\nabX", &out).ok());
  JsonStreamSplitter splitter;
  std::vector<std::string> values;
  EXPECT_FALSE(splitter.Feed("nonsense", &values).ok());
  JsonStreamSplitter small(16);
  EXPECT_FALSE(small.Feed(R"({"a":"0123456789abcdef"})", &values).ok());
}

TEST(WatchStreamTest, ChunkExtensionsAndTrailersAreSkipped) {
  ChunkedDecoder chunks;
  std::string out;
  ASSERT_TRUE(chunks.Feed("3;ext=1\r\nabc\r\n0\r\nX-Trailer: y\r\n\r\n", &out).ok());
  EXPECT_EQ(out, "abc");
  EXPECT_TRUE(chunks.finished());
}

// A watch response body handed out in the pieces given (not chunked).
class ScriptedStream final : public internal::HttpStream {
 public:
  explicit ScriptedStream(std::vector<std::string> pieces) : pieces_(std::move(pieces)) {}
  int code() const override { return 200; }
  std::optional<int64_t> retry_after() const override { return std::nullopt; }
  bool chunked() const override { return false; }
  ReadResult Read(std::string* out, std::string*) override {
    if (next_ == pieces_.size()) return ReadResult::kEof;
    *out = pieces_[next_++];
    return ReadResult::kData;
  }
  void Interrupt() override {}

 private:
  std::vector<std::string> pieces_;
  size_t next_ = 0;
};

std::string JobEvent(std::string_view type, std::string_view name, std::string_view rv,
                     std::string_view status = "{}") {
  return R"({"type":")" + std::string(type) +
         R"(","object":{"kind":"Job","apiVersion":"batch/v1","metadata":{"name":")" +
         std::string(name) + R"(","namespace":"ns","uid":"u-)" + std::string(name) +
         R"(","resourceVersion":")" + std::string(rv) + R"("},"status":)" + std::string(status) +
         "}}\n";
}

struct Seen {
  std::vector<model::WatchEvent> events;
  std::vector<model::Rejection> rejections;
};

WatchResult RunStream(std::vector<std::string> pieces, Seen* seen) {
  ScriptedStream stream(std::move(pieces));
  return internal::RunWatchStream(stream, WatchOptions{}, [seen](model::DecodedDocument& d) {
    for (auto& e : d.events) seen->events.push_back(std::move(e));
    for (auto& r : d.rejections) seen->rejections.push_back(std::move(r));
    return true;
  });
}

TEST(WatchStreamTest, EventsAreDecodedOnceAndKeepTheObjectsBytes) {
  // Whitespace and a field order no serializer of ours would write: the object's bytes are kept.
  const std::string object =
      R"({"kind":"Job",  "apiVersion":"batch/v1","metadata":{"resourceVersion":"7","uid":"u1",)"
      R"("namespace":"ns","name":"j1"},"status":{"active":1}})";
  Seen seen;
  WatchResult r = RunStream({R"({"type":"MODIFIED","object":)" + object.substr(0, 20),
                             object.substr(20) + "}\n" + JobEvent("DELETED", "j2", "8")},
                            &seen);
  EXPECT_EQ(r.end, WatchEnd::kClosed);
  EXPECT_EQ(r.events, 2);
  ASSERT_EQ(seen.events.size(), 2u);
  EXPECT_EQ(seen.events[0].type, model::WatchEventType::kModified);
  EXPECT_EQ(seen.events[0].name, "j1");
  EXPECT_EQ(seen.events[0].resource_version, "7");
  EXPECT_EQ(seen.events[0].raw, object);
  EXPECT_EQ(seen.events[1].type, model::WatchEventType::kDeleted);
  EXPECT_TRUE(seen.rejections.empty());
}

TEST(WatchStreamTest, ARefusedObjectGoesToTheHandlerWithWhatWasRead) {
  Seen seen;
  const std::string bad = JobEvent("MODIFIED", "j1", "9", R"({"startTime":"yesterday"})");
  WatchResult r = RunStream({bad, JobEvent("ADDED", "j2", "10")}, &seen);
  EXPECT_EQ(r.end, WatchEnd::kClosed);
  EXPECT_EQ(r.events, 2);
  ASSERT_EQ(seen.rejections.size(), 1u);
  const model::Rejection& refused = seen.rejections[0];
  EXPECT_NE(refused.reason.find("invalid Job"), std::string::npos) << refused.reason;
  EXPECT_EQ(refused.raw + "\n", bad);
  EXPECT_EQ(refused.event_type, model::WatchEventType::kModified);
  EXPECT_EQ(refused.resource_version, "9");
  EXPECT_EQ(refused.namespace_, "ns");
  EXPECT_EQ(refused.name, "j1");
  ASSERT_EQ(seen.events.size(), 1u);
  EXPECT_EQ(seen.events[0].name, "j2");
}

TEST(WatchStreamTest, AnErrorEventEndsTheWatchWithTheServersStatus) {
  Seen seen;
  WatchResult r = RunStream({JobEvent("ADDED", "j1", "5"),
                             R"({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1",)"
                             R"j("status":"Failure","message":"too old resource version: 5 (9)",)j"
                             R"("reason":"Expired","code":410}})"
                             "\n",
                             JobEvent("ADDED", "j2", "11")},
                            &seen);
  EXPECT_EQ(r.end, WatchEnd::kExpired);
  ASSERT_TRUE(r.error.has_value());
  EXPECT_EQ(r.error->code, 410);
  EXPECT_EQ(seen.events.size(), 1u);
}

TEST(WatchStreamTest, BytesThatAreNotAWatchEventEndTheWatch) {
  for (std::string line : {R"({"type":"ADDED"})", R"({"type":"WHAT","object":{}})",
                           R"({"type":"ADDED","object":[1]})", R"([1,2])"}) {
    Seen seen;
    WatchResult r = RunStream({line + "\n"}, &seen);
    EXPECT_EQ(r.end, WatchEnd::kError) << line;
    EXPECT_NE(r.detail.find("undecodable watch event"), std::string::npos) << r.detail;
    EXPECT_TRUE(seen.events.empty() && seen.rejections.empty()) << line;
  }
}

}  // namespace
}  // namespace cronledger::kube
