#include "store/info_log.h"

#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace cronledger::store {
namespace {

class StdioInfoLog final : public rocksdb::Logger {
 public:
  StdioInfoLog(std::string path, size_t max_bytes)
      : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL),
        path_(std::move(path)),
        max_bytes_(max_bytes) {
    std::lock_guard lock(mu_);
    Reopen("a");
  }
  ~StdioInfoLog() override {
    std::lock_guard lock(mu_);
    if (file_ != nullptr) std::fclose(file_);
  }

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    std::lock_guard lock(mu_);
    if (file_ == nullptr) return;
    if (size_ >= max_bytes_) {
      std::fclose(file_);
      file_ = nullptr;
      std::rename(path_.c_str(), (path_ + ".old").c_str());
      Reopen("w");
      if (file_ == nullptr) return;
    }
    char stamp[32];
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    size_t n = std::strftime(stamp, sizeof stamp, "%Y/%m/%d-%H:%M:%S ", &tm);
    int wrote = std::fprintf(file_, "%.*s", static_cast<int>(n), stamp);
    int body = std::vfprintf(file_, format, ap);
    std::fputc('\n', file_);
    std::fflush(file_);  // a failed write (disk full) is dropped; nothing is retried
    if (wrote > 0) size_ += static_cast<size_t>(wrote);
    if (body > 0) size_ += static_cast<size_t>(body) + 1;
  }

  size_t GetLogFileSize() const override {
    std::lock_guard lock(mu_);
    return size_;
  }

  void Flush() override {
    std::lock_guard lock(mu_);
    if (file_ != nullptr) std::fflush(file_);
  }

 private:
  void Reopen(const char* mode) {
    file_ = std::fopen(path_.c_str(), mode);
    size_ = 0;
    if (file_ != nullptr && std::fseek(file_, 0, SEEK_END) == 0) {
      long at = std::ftell(file_);
      if (at > 0) size_ = static_cast<size_t>(at);
    }
  }

  const std::string path_;
  const size_t max_bytes_;
  mutable std::mutex mu_;
  std::FILE* file_ = nullptr;
  size_t size_ = 0;
};

}  // namespace

std::shared_ptr<rocksdb::Logger> NewInfoLog(const std::string& path, size_t max_bytes) {
  return std::make_shared<StdioInfoLog>(path, max_bytes);
}

}  // namespace cronledger::store
