#include "kube/token_source.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <utility>

namespace cronledger::kube {
namespace {

std::string Trim(std::string s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  const size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

}  // namespace

BearerTokenSource::BearerTokenSource(std::string static_token, std::string token_file)
    : static_token_(std::move(static_token)), token_file_(std::move(token_file)) {}

Result<std::string> BearerTokenSource::Token() {
  if (token_file_.empty()) return static_token_;
  std::lock_guard<std::mutex> lock(mu_);
  struct stat st {};
  if (::stat(token_file_.c_str(), &st) != 0) {
    if (have_token_) return token_;
    return Status::IoError("cannot stat token file " + token_file_);
  }
  FileId id;
  id.dev = st.st_dev;
  id.ino = st.st_ino;
  id.size = st.st_size;
  id.mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
  if (have_token_ && id == seen_) return token_;
  std::ifstream in(token_file_, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  std::string token = Trim(text.str());
  if (!in || token.empty()) {
    // Mid-rotation or unreadable: keep the last good token (client-go does the same).
    if (have_token_) return token_;
    return Status::IoError("cannot read a token from " + token_file_);
  }
  seen_ = id;
  token_ = std::move(token);
  have_token_ = true;
  return token_;
}

}  // namespace cronledger::kube
