#pragma once

// Incremental decoding of a watch response: HTTP/1.1 chunked transfer coding, then a stream of
// concatenated JSON objects (the API server writes one per event, newline-terminated, but neither
// chunk nor read boundaries respect event boundaries). Both decoders take bytes as they arrive and
// keep partial state, so an event split across chunks — or a chunk split across reads — decodes
// the same as one delivered whole.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "model/result.h"

namespace cronledger::kube {

// RFC 9112 §7.1 chunked coding. Knowing where the terminating zero-length chunk is lets the watch
// tell a clean end of stream from a connection dropped mid-stream.
class ChunkedDecoder {
 public:
  // Decodes `in`, appending payload bytes to *out. Corruption on malformed framing. Bytes after
  // the last chunk (trailers) are consumed and ignored.
  Status Feed(std::string_view in, std::string* out);
  // The terminating chunk (and its trailer section) has been read.
  bool finished() const { return state_ == State::kDone; }

 private:
  enum class State { kSize, kSizeExt, kSizeLf, kData, kDataCr, kDataLf, kTrailer, kDone };
  State state_ = State::kSize;
  uint64_t remaining_ = 0;
  int size_digits_ = 0;
  std::string trailer_line_;
};

// Splits a byte stream into top-level JSON values by tracking nesting outside strings.
class JsonStreamSplitter {
 public:
  // A value longer than this is Corruption (a runaway stream must not exhaust memory).
  explicit JsonStreamSplitter(size_t max_value_bytes = 64u << 20) : max_(max_value_bytes) {}

  // Appends complete values from `in` to *out. Whitespace between values is skipped; any other
  // byte outside a value that does not start an object or array is Corruption.
  Status Feed(std::string_view in, std::vector<std::string>* out);
  // Bytes of an incomplete value are buffered.
  bool mid_value() const { return !buffer_.empty(); }

 private:
  size_t max_;
  std::string buffer_;
  int depth_ = 0;
  bool in_string_ = false;
  bool escape_ = false;
};

}  // namespace cronledger::kube
