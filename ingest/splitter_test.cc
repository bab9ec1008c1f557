#include "ingest/splitter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace cronledger::ingest {
namespace {

struct Doc {
  std::string text;
  uint64_t line;
  bool truncated;
  friend bool operator==(const Doc&, const Doc&) = default;
};

std::vector<Doc> SplitAll(std::string_view in) {
  DocumentSplitter s;
  std::vector<Doc> out;
  size_t pos = 0;
  Document d;
  while (s.Next(in, pos, true, &d)) {
    out.push_back({std::string(in.substr(d.begin, d.end - d.begin)), d.line, d.truncated});
    pos = d.next;
  }
  return out;
}

TEST(SplitterTest, JsonLines) {
  EXPECT_EQ(SplitAll("{\"a\":1}\n{\"b\":\"}\\\"{\"}\n\n{\"c\":[1,{}]}"),
            (std::vector<Doc>{{"{\"a\":1}", 1, false},
                              {"{\"b\":\"}\\\"{\"}", 2, false},
                              {"{\"c\":[1,{}]}", 4, false}}));
}

TEST(SplitterTest, PrettyPrintedDocumentsAsKubectlPrintsThem) {
  const std::string in =
      "{\n    \"kind\": \"Job\",\n    \"x\": {\n        \"y\": 1\n    }\n}\n{\n}\n";
  auto docs = SplitAll(in);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[0].line, 1u);
  EXPECT_EQ(docs[0].text, in.substr(0, in.find("}\n{") + 1));
  EXPECT_EQ(docs[1], (Doc{"{\n}", 7, false}));
}

TEST(SplitterTest, JunkLinesAndTruncatedDocumentsAreTheirOwnDocuments) {
  auto docs = SplitAll("not json\n{\"a\":\n{\"b\":1}\n{\"c\":1} trailing\n{\"d\":");
  EXPECT_EQ(docs, (std::vector<Doc>{{"not json", 1, false},
                                    {"{\"a\":", 2, true},
                                    {"{\"b\":1}", 3, false},
                                    {"{\"c\":1} trailing", 4, false},
                                    {"{\"d\":", 5, true}}));
}

TEST(SplitterTest, WaitsForMoreInputWithoutConsuming) {
  DocumentSplitter s;
  Document d;
  EXPECT_FALSE(s.Next("{\"a\":1", 0, false, &d));
  EXPECT_FALSE(s.Next("{\"a\":1}", 0, false, &d));  // the newline may follow
  EXPECT_FALSE(s.Next("junk", 0, false, &d));
  EXPECT_EQ(s.line(), 1u);
  ASSERT_TRUE(s.Next("{\"a\":1}\n", 0, false, &d));
  EXPECT_EQ(d.end, 7u);
  EXPECT_EQ(d.next, 8u);
  EXPECT_EQ(s.line(), 2u);
}

}  // namespace
}  // namespace cronledger::ingest
