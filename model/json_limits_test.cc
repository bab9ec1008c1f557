#include "model/json_limits.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/resource.h>

#include <string>
#include <thread>
#include <vector>

#include "model/json.h"

namespace cronledger::model {
namespace {

std::string Nested(size_t depth, std::string_view open = "[", std::string_view close = "]") {
  std::string s;
  for (size_t i = 0; i < depth; ++i) s += open;
  for (size_t i = 0; i < depth; ++i) s += close;
  return s;
}

// An object {"a":{"a":...{}}} with `depth` levels.
std::string NestedObject(size_t depth) {
  std::string s;
  for (size_t i = 1; i < depth; ++i) s += "{\"a\":";
  s += "{}";
  for (size_t i = 1; i < depth; ++i) s += "}";
  return s;
}

TEST(JsonDepth, CountsOpenContainersOutsideStrings) {
  struct Case {
    std::string text;
    size_t depth;
  };
  const Case cases[] = {
      {"", 0},
      {"1", 0},
      {"{}", 1},
      {"[]", 1},
      {R"({"a":[1,{"b":2}]})", 3},
      {R"([[],[[]],[]])", 3},
      {R"({"s":"[[[[{{{{"})", 1},
      {R"({"s":"a\"[[[[\\"})", 1},        // an escaped quote does not end the string
      {R"({"s":"\\\\","t":[[]]})", 3},    // an even run of backslashes does not escape the quote
      {R"(["\\\"[[[", [[]]])", 3},        // an odd run does
      {R"({"s":"unterminated [[[[)", 1},  // nothing after an open quote counts
      {"]]]][[", 2},                      // malformed: the count never goes below zero
  };
  for (const Case& c : cases) {
    EXPECT_EQ(JsonDepth(c.text, 100), c.depth) << c.text;
  }
}

TEST(JsonDepth, StopsAboveTheLimit) {
  EXPECT_EQ(JsonDepth(Nested(50), 10), 11u);
  EXPECT_EQ(JsonDepth(Nested(10), 10), 10u);
}

TEST(CheckJsonDepth, TheApiServersLimitIsInclusive) {
  // Go's encoding/json refuses the 10001st open container, not the 10000th.
  EXPECT_TRUE(CheckJsonDepth(Nested(kMaxJsonDepth), kMaxJsonDepth).ok());
  const Status over = CheckJsonDepth(Nested(kMaxJsonDepth + 1), kMaxJsonDepth);
  EXPECT_EQ(over.code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(over.message(), "over limit: JSON nesting deeper than 10000 levels");
}

TEST(CheckObjectLimits, SizeAndDepth) {
  EXPECT_TRUE(CheckObjectLimits(NestedObject(kMaxJsonDepth)).ok());
  EXPECT_EQ(CheckObjectLimits(NestedObject(kMaxJsonDepth + 1)).message(),
            "over limit: JSON nesting deeper than 10000 levels");
  // A string the size of the limit fits once quoted only if the limit counts the whole object.
  std::string big = "\"" + std::string(kMaxObjectBytes - 2, 'x') + "\"";
  EXPECT_TRUE(CheckObjectLimits(big).ok());
  big.insert(1, "y");
  EXPECT_EQ(CheckObjectLimits(big).message(),
            "over limit: object of 3145729 bytes, larger than 3145728");
}

TEST(ParseJson, RefusesDocumentsNestedBeyondTheLimitWithoutParsing) {
  EXPECT_TRUE(ParseJson(Nested(kMaxDocumentDepth)).ok());
  for (size_t depth : {kMaxDocumentDepth + 1, size_t{100000}, size_t{1000000}}) {
    Result<Json> j = ParseJson(NestedObject(depth));
    ASSERT_FALSE(j.ok()) << depth;
    EXPECT_EQ(j.status().message(), "over limit: JSON nesting deeper than 10008 levels");
  }
}

// Everything the code does with a tree (copy, compare, serialize, CBOR round trip) recurses once
// per level; at the limit none of it may overflow the stack ReserveThreadStacks gave the thread.
void UseATreeAtTheLimit() {
  Result<Json> j = ParseJson(NestedObject(kMaxDocumentDepth));
  ASSERT_TRUE(j.ok());
  Json copy = *j;
  EXPECT_EQ(copy, *j);
  const std::string text = DumpJson(copy);
  EXPECT_EQ(text, NestedObject(kMaxDocumentDepth));
  const std::vector<uint8_t> cbor = Json::to_cbor(copy);
  EXPECT_EQ(Json::from_cbor(cbor), *j);
}

TEST(ReserveThreadStacks, EveryThreadGetsTheReservedStack) {
  // The test main() reserved them, as cronledger's main() does; a second call changes nothing.
  ASSERT_TRUE(ReserveThreadStacks().ok());
  rlimit limit{};
  ASSERT_EQ(getrlimit(RLIMIT_STACK, &limit), 0);
  EXPECT_TRUE(limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= kThreadStackBytes);
  size_t thread_stack = 0;
  std::thread([&] {
    pthread_attr_t attr;
    ASSERT_EQ(pthread_getattr_np(pthread_self(), &attr), 0);
    EXPECT_EQ(pthread_attr_getstacksize(&attr, &thread_stack), 0);
    pthread_attr_destroy(&attr);
  }).join();
  EXPECT_GE(thread_stack, kThreadStackBytes);
}

TEST(ParseJson, ATreeAtTheLimitSurvivesWhatTheCodeDoesWithTreesOnTheMainThread) {
  UseATreeAtTheLimit();
}

TEST(ParseJson, ATreeAtTheLimitSurvivesWhatTheCodeDoesWithTreesOnAnyThread) {
  std::thread(UseATreeAtTheLimit).join();
}

}  // namespace
}  // namespace cronledger::model
