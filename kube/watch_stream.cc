#include "kube/watch_stream.h"

#include <algorithm>

namespace cronledger::kube {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Status ChunkedDecoder::Feed(std::string_view in, std::string* out) {
  size_t i = 0;
  while (i < in.size() && state_ != State::kDone) {
    const char c = in[i];
    switch (state_) {
      case State::kSize: {
        const int v = HexValue(c);
        if (v >= 0) {
          if (++size_digits_ > 15) return Status::Corruption("chunk size too large");
          remaining_ = remaining_ * 16 + static_cast<uint64_t>(v);
          ++i;
          break;
        }
        if (size_digits_ == 0) return Status::Corruption("missing chunk size");
        if (c == ';' || c == ' ' || c == '\t') {
          state_ = State::kSizeExt;
          ++i;
        } else if (c == '\r') {
          state_ = State::kSizeLf;
          ++i;
        } else if (c == '\n') {
          state_ = State::kSizeLf;  // a bare LF: handled as the line end next round
        } else {
          return Status::Corruption("invalid chunk size");
        }
        break;
      }
      case State::kSizeExt:
        if (c == '\n') {
          state_ = State::kSizeLf;
        } else {
          if (c == '\r') state_ = State::kSizeLf;
          ++i;
        }
        break;
      case State::kSizeLf:
        if (c != '\n') return Status::Corruption("expected LF after chunk size");
        ++i;
        size_digits_ = 0;
        state_ = remaining_ == 0 ? State::kTrailer : State::kData;
        break;
      case State::kData: {
        const size_t n = std::min<uint64_t>(remaining_, in.size() - i);
        out->append(in.substr(i, n));
        remaining_ -= n;
        i += n;
        if (remaining_ == 0) state_ = State::kDataCr;
        break;
      }
      case State::kDataCr:
        if (c == '\r') {
          state_ = State::kDataLf;
          ++i;
        } else if (c == '\n') {
          state_ = State::kDataLf;
        } else {
          return Status::Corruption("expected CRLF after chunk data");
        }
        break;
      case State::kDataLf:
        if (c != '\n') return Status::Corruption("expected LF after chunk data");
        ++i;
        state_ = State::kSize;
        break;
      case State::kTrailer:
        ++i;
        if (c == '\n') {
          // An empty line ends the trailer section.
          if (trailer_line_.empty() || trailer_line_ == "\r") {
            state_ = State::kDone;
          }
          trailer_line_.clear();
        } else {
          trailer_line_ += c;
        }
        break;
      case State::kDone:
        break;
    }
  }
  return Status::Ok();
}

Status JsonStreamSplitter::Feed(std::string_view in, std::vector<std::string>* out) {
  for (char c : in) {
    if (depth_ == 0) {
      if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
      if (c != '{' && c != '[') return Status::Corruption("watch stream: unexpected byte");
    }
    buffer_ += c;
    if (buffer_.size() > max_) return Status::Corruption("watch stream: event too large");
    if (in_string_) {
      if (escape_) {
        escape_ = false;
      } else if (c == '\\') {
        escape_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      continue;
    }
    if (c == '"') {
      in_string_ = true;
    } else if (c == '{' || c == '[') {
      ++depth_;
    } else if (c == '}' || c == ']') {
      if (--depth_ == 0) {
        out->push_back(std::move(buffer_));
        buffer_.clear();
      }
    }
  }
  return Status::Ok();
}

}  // namespace cronledger::kube
