#pragma once

// Splits a byte stream into JSON documents: one per line (JSON lines, as the watch API streams
// them) or pretty-printed across lines (as `kubectl get --watch -o json` prints them). A line that
// is not JSON becomes its own document, so the decoder can quarantine it; a document cut off by a
// new document starting at column 0 (or by the end of the stream) is returned as truncated.

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cronledger::ingest {

struct Document {
  size_t begin = 0;   // offsets into the buffer passed to Next()
  size_t end = 0;     // one past the last byte of the document
  size_t next = 0;    // where the following document's search starts (after the newline)
  uint64_t line = 0;  // 1-based line number of the document's first byte
  bool truncated = false;
};

class DocumentSplitter {
 public:
  // `line` is the line number of buffer offset 0.
  explicit DocumentSplitter(uint64_t line = 1) : line_(line) {}

  // Finds the next document in buf[pos..]. Returns false when more input is needed (nothing is
  // consumed) or, with eof, when only whitespace remains. Advances the line count past the
  // document it returns.
  bool Next(std::string_view buf, size_t pos, bool eof, Document* doc);

  uint64_t line() const { return line_; }

 private:
  uint64_t line_;
};

}  // namespace cronledger::ingest
