#pragma once

// The bearer token for each request. A projected service-account token is rewritten by the kubelet
// (atomically, through a symlink swap) well before it expires; client-go re-reads the file, and so
// do we: the file is stat()ed on every request and re-read when its inode, size or modification
// time changed.

#include <cstdint>
#include <mutex>
#include <string>

#include "model/result.h"

namespace cronledger::kube {

class BearerTokenSource {
 public:
  // With an empty `token_file`, Token() returns `static_token` (possibly empty: no auth).
  BearerTokenSource(std::string static_token, std::string token_file);

  // The current token, whitespace-trimmed. If the file cannot be read the last good token is kept
  // (a rotation in progress must not fail requests); IoError only when no token was ever read.
  // Thread-safe.
  Result<std::string> Token();

 private:
  struct FileId {
    uint64_t dev = 0, ino = 0;
    int64_t size = -1, mtime_ns = 0;
    bool operator==(const FileId&) const = default;
  };

  const std::string static_token_;
  const std::string token_file_;
  std::mutex mu_;
  FileId seen_;
  std::string token_;
  bool have_token_ = false;
};

}  // namespace cronledger::kube
