#include "ingest/splitter.h"

namespace cronledger::ingest {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

bool DocumentSplitter::Next(std::string_view buf, size_t pos, bool eof, Document* doc) {
  uint64_t line = line_;
  size_t i = pos;
  while (i < buf.size() && IsSpace(buf[i])) {
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
        while (k < buf.size() && buf[k] != '\n' && IsSpace(buf[k])) ++k;
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

}  // namespace cronledger::ingest
