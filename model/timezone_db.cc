// The tz database on disk with Go's time.LoadLocation rules (docs/semantics.md §6.3): the error
// texts reach users through the UnknownTimeZone event and `provided bad location` parse errors, so
// they are Go's.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "model/timezone.h"
#include "model/timezone_version.h"

namespace cronledger::model {
namespace {

// Go refuses files over 10 MiB ("is too large"); no TZif file comes close.
constexpr size_t kMaxFileSize = 10 << 20;

// Reads a whole file. Like Go's readFile, the error is the errno text ("is a directory").
// ENOENT is reported as NotFound so the caller can fall through to "unknown time zone".
// Go's syscall error strings are glibc's with a lower-case first letter ("is a directory").
std::string ErrnoText(int err) {
  std::string text = std::strerror(err);
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z') text[0] = static_cast<char>(text[0] + 32);
  return text;
}

Result<std::string> ReadZoneFile(const std::string& path) {
  if (path.find('\0') != std::string::npos) return Status::IoError("invalid argument");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound(path);
    return Status::IoError(ErrnoText(err));
  }
  std::string out;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Status::IoError(ErrnoText(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > kMaxFileSize) {
      ::close(fd);
      return Status::IoError("time: file " + path + " is too large");
    }
  }
  ::close(fd);
  return out;
}

// The first line of a file, read through at most kMaxLine bytes (the rest is never read).
constexpr size_t kMaxLine = 256;

Result<std::string> ReadFirstLine(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) return Status::NotFound("no " + path);
    return Status::IoError(path + ": " + ErrnoText(err));
  }
  std::string out;
  char buf[kMaxLine];
  while (out.size() < kMaxLine && out.find('\n') == std::string::npos) {
    const ssize_t n = ::read(fd, buf, kMaxLine - out.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return Status::IoError(path + ": " + ErrnoText(err));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out.substr(0, out.find('\n'));
}

class SystemTimeZoneDb final : public TimeZoneDb {
 public:
  explicit SystemTimeZoneDb(std::string dir) : dir_(std::move(dir)) {}

  Status Init(const std::string& local_name) {
    if (local_name.empty() || local_name == "UTC") {
      local_ = TimeZone::Fixed("Local", 0);
      return Status::Ok();
    }
    auto loaded = LoadFile(local_name, "Local");
    if (!loaded.ok()) {
      return Status::InvalidArgument("local time zone " + local_name + ": " +
                                     loaded.status().message());
    }
    local_ = std::move(loaded).value();
    return Status::Ok();
  }

  Result<std::shared_ptr<const TimeZone>> Load(std::string_view name) const override {
    if (name.empty() || name == "UTC") return TimeZone::Utc();
    if (name == "Local") return local_;
    // No IANA name contains "..", and none starts with a slash (Go's errLocation).
    if (name.find("..") != std::string_view::npos || name[0] == '/' || name[0] == '\\') {
      return Status::InvalidArgument("time: invalid location name");
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = cache_.find(name);
      if (it != cache_.end()) return it->second;
    }
    CL_ASSIGN_OR_RETURN(auto zone, LoadFile(std::string(name), std::string(name)));
    std::lock_guard<std::mutex> lock(mu_);
    cache_.emplace(std::string(name), zone);
    return zone;
  }

  std::shared_ptr<const TimeZone> Local() const override { return local_; }

 private:
  Result<std::shared_ptr<const TimeZone>> LoadFile(const std::string& name,
                                                   std::string zone_name) const {
    auto bytes = ReadZoneFile(dir_ + "/" + name);
    if (!bytes.ok()) {
      if (bytes.status().IsNotFound()) return Status::NotFound("unknown time zone " + name);
      return Status::InvalidArgument(bytes.status().message());
    }
    auto zone = TimeZone::FromTzif(std::move(zone_name), *bytes);
    if (!zone.ok()) return Status::InvalidArgument(zone.status().message());
    return zone;
  }

  std::string dir_;
  std::shared_ptr<const TimeZone> local_;
  mutable std::mutex mu_;
  mutable std::map<std::string, std::shared_ptr<const TimeZone>, std::less<>> cache_;
};

}  // namespace

Result<std::unique_ptr<TimeZoneDb>> OpenSystemTimeZoneDb(const SystemTimeZoneDbOptions& options) {
  auto db = std::make_unique<SystemTimeZoneDb>(options.zoneinfo_dir);
  CL_RETURN_IF_ERROR(db->Init(options.local_zone));
  return std::unique_ptr<TimeZoneDb>(std::move(db));
}

Result<std::string> ReadTzdataVersion(std::string_view zoneinfo_dir) {
  const std::string path = std::string(zoneinfo_dir) + "/tzdata.zi";
  CL_ASSIGN_OR_RETURN(std::string line, ReadFirstLine(path));
  // zic's input format: "# version 2025b". A release name is digits and letters only.
  constexpr std::string_view kPrefix = "# version ";
  const std::string_view release = std::string_view(line).substr(
      line.compare(0, kPrefix.size(), kPrefix) == 0 ? kPrefix.size() : line.size());
  const bool valid = !release.empty() && std::all_of(release.begin(), release.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  });
  if (!valid) return Status::Corruption(path + " does not start with a \"# version\" line");
  return std::string(release);
}

}  // namespace cronledger::model
