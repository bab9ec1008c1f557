// Bearer tokens and rate limits (audit/auth.h).
#include "audit/auth.h"

#include <sys/stat.h>

#include <cmath>
#include <fstream>
#include <sstream>

namespace cronledger::audit {
namespace {

// A bucket map larger than this drops full buckets (clients idle long enough to be refilled):
// bounds memory under many distinct peers without forgetting anyone who is being limited.
constexpr size_t kMaxBuckets = 10000;

std::string Trim(std::string s) {
  const char* ws = " \t\r\n";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

}  // namespace

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  const size_t n = a.size() > b.size() ? a.size() : b.size();
  unsigned diff = a.size() == b.size() ? 0u : 1u;
  for (size_t i = 0; i < n; ++i) {
    const auto x = static_cast<unsigned char>(i < a.size() ? a[i] : 0);
    const auto y = static_cast<unsigned char>(i < b.size() ? b[i] : 0);
    diff |= static_cast<unsigned>(x ^ y);
  }
  return diff == 0;
}

void TokenFile::Refresh() {
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0) {
    token_.clear();
    have_stamp_ = false;
    return;
  }
  const int64_t mtime = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                        static_cast<int64_t>(st.st_mtim.tv_nsec);
  if (have_stamp_ && mtime == mtime_ns_ && st.st_size == size_ && st.st_ino == inode_) return;
  std::ifstream in(path_, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  token_ = in ? Trim(buf.str()) : "";
  have_stamp_ = true;
  mtime_ns_ = mtime;
  size_ = st.st_size;
  inode_ = st.st_ino;
}

bool TokenFile::Verify(std::string_view authorization) {
  constexpr std::string_view kPrefix = "Bearer ";
  if (authorization.substr(0, kPrefix.size()) != kPrefix) return false;
  std::string_view presented = authorization.substr(kPrefix.size());
  std::lock_guard lock(mu_);
  Refresh();
  if (token_.empty()) return false;
  return ConstantTimeEquals(presented, token_);
}

bool TokenFile::Loaded() {
  std::lock_guard lock(mu_);
  Refresh();
  return !token_.empty();
}

RateLimiter::RateLimiter(double rate, double burst, std::function<int64_t()> monotonic_nanos)
    : rate_(rate), burst_(burst), now_(std::move(monotonic_nanos)) {}

bool RateLimiter::Allow(const std::string& client, int* retry_after_seconds) {
  const int64_t now = now_();
  std::lock_guard lock(mu_);
  auto [it, fresh] = buckets_.try_emplace(client, Bucket{burst_, now});
  Bucket& b = it->second;
  if (!fresh) {
    b.tokens = std::min(burst_, b.tokens + static_cast<double>(now - b.at) / 1e9 * rate_);
    b.at = now;
  }
  if (b.tokens >= 1.0) {
    b.tokens -= 1.0;
    if (buckets_.size() > kMaxBuckets) {
      std::erase_if(buckets_, [&](const auto& kv) {
        return kv.first != client &&
               kv.second.tokens + static_cast<double>(now - kv.second.at) / 1e9 * rate_ >= burst_;
      });
    }
    return true;
  }
  *retry_after_seconds = static_cast<int>(std::ceil((1.0 - b.tokens) / rate_));
  return false;
}

}  // namespace cronledger::audit
