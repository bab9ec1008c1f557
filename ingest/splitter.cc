#include "ingest/splitter.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cronledger::ingest {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool IsStringSpecial(char c) { return c == '"' || c == '\\' || c == '\n'; }

// The first j' >= j with data[j'] one of '"', '\\', '\n' (what ends or escapes a string, or a
// line), or n. SSE2 (every x86-64) compares 16 bytes at a time; elsewhere byte by byte.
size_t NextStringSpecial(const char* data, size_t j, size_t n) {
#if defined(__SSE2__)
  const __m128i quote = _mm_set1_epi8('"');
  const __m128i backslash = _mm_set1_epi8('\\');
  const __m128i newline = _mm_set1_epi8('\n');
  for (; j + 16 <= n; j += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + j));
    const __m128i hit =
        _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)),
                     _mm_cmpeq_epi8(v, newline));
    const int mask = _mm_movemask_epi8(hit);
    if (mask != 0) return j + static_cast<size_t>(__builtin_ctz(static_cast<unsigned>(mask)));
  }
#endif
  while (j < n && !IsStringSpecial(data[j])) ++j;
  return j;
}

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
  uint64_t lines_inside = 0;
  const char* const data = buf.data();
  const size_t n = buf.size();
  size_t j = i;
  while (j < n) {
    if (in_string) {
      // Most of a document's bytes are inside strings: jump to the next byte that matters there.
      j = NextStringSpecial(data, j, n);
      if (j == n) break;
    }
    const char c = data[j];
    if (c == '\n') {
      // A document never contains a raw newline inside a string; a new document at column 0
      // means this one was cut off.
      if (j + 1 < n && (data[j + 1] == '{' || data[j + 1] == '[') && !in_string) {
        doc->end = j;
        doc->next = j + 1;
        doc->truncated = true;
        line_ = line + lines_inside + 1;
        return true;
      }
      if (j + 1 == n && !eof) return false;  // cannot tell yet
      ++lines_inside;
      in_string = false;
      ++j;
      continue;
    }
    if (in_string) {
      if (c == '"') {
        in_string = false;
        ++j;
      } else {
        // A backslash escapes the next byte, unless that is a newline (handled as one above).
        j += (j + 1 < n && data[j + 1] != '\n') ? 2 : 1;
      }
      continue;
    }
    ++j;
    if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth == 0) {
        // The document ends here; the rest of its line (normally just "\n") belongs to it.
        size_t k = j;
        while (k < n && data[k] != '\n' && IsSpace(data[k])) ++k;
        if (k == n && !eof) return false;  // the newline may still come
        if (k < n && data[k] != '\n') {
          // Trailing non-space bytes: the whole line is one malformed document.
          size_t nl = buf.find('\n', k);
          if (nl == std::string_view::npos && !eof) return false;
          doc->end = nl == std::string_view::npos ? n : nl;
          doc->next = nl == std::string_view::npos ? n : nl + 1;
          line_ = line + lines_inside + (nl == std::string_view::npos ? 0 : 1);
          return true;
        }
        doc->end = j;
        doc->next = k < n ? k + 1 : k;
        line_ = line + lines_inside + (k < n ? 1 : 0);
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
