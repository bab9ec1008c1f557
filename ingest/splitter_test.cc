#include "ingest/splitter.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace cronledger::ingest {
namespace {

bool RefIsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The splitter as it was before its string scan used SSE2 (commit cf71a20), byte by byte: the
// reference the fast one must agree with.
bool ReferenceNext(uint64_t& line_, std::string_view buf, size_t pos, bool eof, Document* doc) {
  uint64_t line = line_;
  size_t i = pos;
  while (i < buf.size() && RefIsSpace(buf[i])) {
    if (buf[i] == '\n') ++line;
    ++i;
  }
  if (i == buf.size()) return false;  // only whitespace so far
  doc->begin = i;
  doc->line = line;
  doc->truncated = false;
  if (buf[i] != '{' && buf[i] != '[') {
    // Not JSON: the rest of the line is one (malformed) document.
    size_t nl = buf.find('\n', i);
    if (nl == std::string_view::npos && !eof) return false;
    doc->end = nl == std::string_view::npos ? buf.size() : nl;
    doc->next = nl == std::string_view::npos ? buf.size() : nl + 1;
    line_ = line + (nl == std::string_view::npos ? 0 : 1);
    return true;
  }
  int depth = 0;
  bool in_string = false;
  bool escaped = false;
  uint64_t lines_inside = 0;
  for (size_t j = i; j < buf.size(); ++j) {
    const char c = buf[j];
    if (c == '\n') {
      // A document never contains a raw newline inside a string; a new document at column 0
      // means this one was cut off.
      if (j + 1 < buf.size() && (buf[j + 1] == '{' || buf[j + 1] == '[') && !in_string) {
        doc->end = j;
        doc->next = j + 1;
        doc->truncated = true;
        line_ = line + lines_inside + 1;
        return true;
      }
      if (j + 1 == buf.size() && !eof) return false;  // cannot tell yet
      ++lines_inside;
      in_string = false;
      escaped = false;
      continue;
    }
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) {
        // The document ends here; the rest of its line (normally just "\n") belongs to it.
        size_t k = j + 1;
        while (k < buf.size() && buf[k] != '\n' && RefIsSpace(buf[k])) ++k;
        if (k == buf.size() && !eof) return false;  // the newline may still come
        if (k < buf.size() && buf[k] != '\n') {
          // Trailing non-space bytes: the whole line is one malformed document.
          size_t nl = buf.find('\n', k);
          if (nl == std::string_view::npos && !eof) return false;
          doc->end = nl == std::string_view::npos ? buf.size() : nl;
          doc->next = nl == std::string_view::npos ? buf.size() : nl + 1;
          line_ = line + lines_inside + (nl == std::string_view::npos ? 0 : 1);
          return true;
        }
        doc->end = j + 1;
        doc->next = k < buf.size() ? k + 1 : k;
        line_ = line + lines_inside + (k < buf.size() ? 1 : 0);
        return true;
      }
    }
  }
  if (!eof) return false;
  doc->end = buf.size();
  doc->next = buf.size();
  doc->truncated = true;
  line_ = line + lines_inside;
  return true;
}

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

// Random byte soups of JSON's structural bytes, escapes, newlines and long strings (longer than
// the 16-byte SIMD step), split whole and in growing prefixes: the fast splitter returns exactly
// what the byte-by-byte reference returns, document for document, line for line.
TEST(SplitterTest, AgreesWithTheByteByByteReferenceOnRandomInput) {
  std::mt19937 rng(4);
  const std::string pieces[] = {"{",
                                "}",
                                "[",
                                "]",
                                "\"",
                                "\\",
                                "\\\"",
                                "\\\\",
                                "\n",
                                " ",
                                "\t",
                                ":",
                                ",",
                                "a",
                                "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
                                "\n{",
                                "\"managedFields\":[{\"f:spec\":{}}]",
                                "\\\n",
                                "}\n",
                                "\r\n"};
  for (int round = 0; round < 3000; ++round) {
    std::string in;
    const int len = static_cast<int>(rng() % 60);
    for (int k = 0; k < len; ++k) in += pieces[rng() % std::size(pieces)];
    for (const bool eof : {true, false}) {
      for (size_t cut = eof ? in.size() : 0; cut <= in.size(); cut += eof ? 1 : 7) {
        const std::string_view buf(in.data(), cut);
        DocumentSplitter fast;
        uint64_t ref_line = 1;
        size_t pos = 0;
        for (int guard = 0; guard < 1000; ++guard) {
          Document a, b;
          const bool got_a = fast.Next(buf, pos, eof, &a);
          const bool got_b = ReferenceNext(ref_line, buf, pos, eof, &b);
          ASSERT_EQ(got_a, got_b) << "input: " << ::testing::PrintToString(std::string(buf));
          ASSERT_EQ(fast.line(), ref_line);
          if (!got_a) break;
          ASSERT_EQ(a.begin, b.begin);
          ASSERT_EQ(a.end, b.end);
          ASSERT_EQ(a.next, b.next);
          ASSERT_EQ(a.line, b.line);
          ASSERT_EQ(a.truncated, b.truncated);
          pos = a.next;
        }
      }
    }
  }
}

}  // namespace
}  // namespace cronledger::ingest
