#include "model/json_limits.h"

#include <cstring>
#include <string>

namespace cronledger::model {
namespace {

// The index just past the string whose opening quote is at text[open], or text.size() when it is
// unterminated. Long strings (annotations) are crossed with memchr rather than byte by byte.
size_t SkipString(std::string_view text, size_t open) {
  size_t i = open + 1;
  while (i < text.size()) {
    const void* q = std::memchr(text.data() + i, '"', text.size() - i);
    if (q == nullptr) return text.size();
    const size_t quote = static_cast<size_t>(static_cast<const char*>(q) - text.data());
    // The quote is escaped when an odd number of backslashes precede it.
    size_t backslashes = 0;
    while (quote - backslashes > open + 1 && text[quote - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return quote + 1;
    i = quote + 1;
  }
  return text.size();
}

}  // namespace

size_t JsonDepth(std::string_view text, size_t stop_above) {
  size_t depth = 0;
  size_t deepest = 0;
  size_t i = 0;
  while (i < text.size()) {
    switch (text[i]) {
      case '"':
        i = SkipString(text, i);
        continue;
      case '[':
      case '{':
        if (++depth > deepest) {
          deepest = depth;
          if (deepest > stop_above) return stop_above + 1;
        }
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
    ++i;
  }
  return deepest;
}

Status CheckJsonDepth(std::string_view text, size_t max_depth) {
  // Every level takes a byte, so text no longer than the limit cannot exceed it (most objects).
  if (text.size() <= max_depth) return Status::Ok();
  if (JsonDepth(text, max_depth) <= max_depth) return Status::Ok();
  return Status::InvalidArgument(std::string(kOverLimitReason) + ": JSON nesting deeper than " +
                                 std::to_string(max_depth) + " levels");
}

Status CheckObjectLimits(std::string_view object) {
  if (object.size() > kMaxObjectBytes) {
    return Status::InvalidArgument(std::string(kOverLimitReason) + ": object of " +
                                   std::to_string(object.size()) + " bytes, larger than " +
                                   std::to_string(kMaxObjectBytes));
  }
  return CheckJsonDepth(object, kMaxJsonDepth);
}

}  // namespace cronledger::model
