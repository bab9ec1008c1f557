#include "model/json_limits.h"

#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
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

Status ReserveThreadStacks() {
  std::string failed;
  rlimit limit{};
  if (getrlimit(RLIMIT_STACK, &limit) != 0) {
    failed = std::string("reading RLIMIT_STACK: ") + std::strerror(errno);
  } else if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < kThreadStackBytes) {
    // The kernel checks the limit when the main thread's stack grows, so raising it now counts.
    const rlim_t wanted = static_cast<rlim_t>(kThreadStackBytes);
    limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
    if (setrlimit(RLIMIT_STACK, &limit) != 0) {
      failed = std::string("raising RLIMIT_STACK: ") + std::strerror(errno);
    } else if (limit.rlim_cur < wanted) {
      failed = "RLIMIT_STACK's hard limit is " + std::to_string(limit.rlim_max) + " bytes";
    }
  }
  pthread_attr_t attr;
  int err = pthread_getattr_default_np(&attr);
  if (err == 0) {
    size_t size = 0;
    err = pthread_attr_getstacksize(&attr, &size);
    if (err == 0 && size < kThreadStackBytes) {
      err = pthread_attr_setstacksize(&attr, kThreadStackBytes);
      if (err == 0) err = pthread_setattr_default_np(&attr);
    }
    pthread_attr_destroy(&attr);
  }
  if (err != 0) {
    if (!failed.empty()) failed += "; ";
    failed += std::string("setting the default thread stack size: ") + std::strerror(err);
  }
  if (failed.empty()) return Status::Ok();
  return Status::FailedPrecondition("stacks smaller than " +
                                    std::to_string(kThreadStackBytes >> 20) + " MiB (" + failed +
                                    "): objects nested near the " + std::to_string(kMaxJsonDepth) +
                                    "-level limit may overflow them");
}

}  // namespace cronledger::model
