// The admin socket (app/support_admin.h).
#include "app/support_admin.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <optional>
#include <utility>

#include "app/log.h"
#include "replay/trail.h"

namespace cronledger::app {
namespace {

// A request is one short JSON line.
constexpr size_t kMaxRequestBytes = 64 * 1024;
// How long a connected client may take to send its request.
constexpr int kRequestTimeoutMs = 5000;

Result<sockaddr_un> Address(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    return Status::InvalidArgument("admin socket path " + path + " is longer than " +
                                   std::to_string(sizeof addr.sun_path - 1) + " bytes");
  }
  std::memcpy(addr.sun_path, path.data(), path.size());
  return addr;
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

// Connects to `path`: the fd, or -1 with errno set.
int Connect(const sockaddr_un& addr) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    close(fd);
    errno = err;
    return -1;
  }
  return fd;
}

bool WriteAll(int fd, const std::string& data) {
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = send(fd, data.data() + done, data.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

// Reads up to the first newline within `timeout_ms` overall; nullopt on timeout, error or a
// line longer than `max_bytes`.
std::optional<std::string> ReadLine(int fd, int timeout_ms, size_t max_bytes) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string line;
  char buf[4096];
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return std::nullopt;
    pollfd p{fd, POLLIN, 0};
    const int ready = poll(&p, 1, static_cast<int>(left));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return std::nullopt;
    const ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    line.append(buf, static_cast<size_t>(n));
    if (const size_t nl = line.find('\n'); nl != std::string::npos) return line.substr(0, nl);
    if (line.size() > max_bytes) return std::nullopt;
  }
}

model::Json Failure(const std::string& error) { return {{"ok", false}, {"error", error}}; }

}  // namespace

std::string AdminSocketPath(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "admin.sock").string();
}

std::mutex& TrailUpdateMutex() {
  static std::mutex mu;
  return mu;
}

AdminSocket::AdminSocket(std::string path, int fd, Handler handler)
    : path_(std::move(path)), fd_(fd), handler_(std::move(handler)) {
  thread_ = std::thread([this] { Serve(); });
}

Result<std::unique_ptr<AdminSocket>> AdminSocket::Start(const std::string& path, Handler handler) {
  CL_ASSIGN_OR_RETURN(const sockaddr_un addr, Address(path));
  if (const int live = Connect(addr); live >= 0) {
    close(live);
    return Status::AlreadyExists("another process serves the admin socket " + path);
  }
  // Nobody listens: a file left by a killed process, or none.
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return Status::IoError(Errno("removing the stale admin socket " + path));
  }
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::IoError(Errno("admin socket"));
  // Owner only from the moment it exists.
  const mode_t old_mask = umask(0177);
  const int bound = bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int bind_errno = errno;
  umask(old_mask);
  if (bound != 0 || listen(fd, 8) != 0) {
    const int err = bound != 0 ? bind_errno : errno;
    close(fd);
    return Status::IoError("admin socket " + path + ": " + std::strerror(err));
  }
  return std::unique_ptr<AdminSocket>(new AdminSocket(path, fd, std::move(handler)));
}

AdminSocket::~AdminSocket() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
  close(fd_);
  unlink(path_.c_str());
}

void AdminSocket::Serve() {
  while (!stop_.load()) {
    pollfd p{fd_, POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    const int connection = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) continue;
    Answer(connection);
    close(connection);
  }
}

void AdminSocket::Answer(int connection) {
  const std::optional<std::string> line = ReadLine(connection, kRequestTimeoutMs, kMaxRequestBytes);
  model::Json answer;
  if (!line) {
    answer = Failure("no request line within " + std::to_string(kRequestTimeoutMs / 1000) +
                     " s (at most " + std::to_string(kMaxRequestBytes) + " bytes)");
  } else if (auto request = model::ParseJson(*line); !request.ok()) {
    answer = Failure("request: " + request.status().message());
  } else {
    answer = handler_(*request);
  }
  WriteAll(connection, model::DumpJson(answer) + "\n");
}

Result<model::Json> CallAdminSocket(const std::string& path, const model::Json& request,
                                    Duration timeout) {
  CL_ASSIGN_OR_RETURN(const sockaddr_un addr, Address(path));
  const int fd = Connect(addr);
  if (fd < 0) {
    if (errno == ENOENT || errno == ECONNREFUSED) {
      return Status::NotFound("no process serves " + path);
    }
    return Status::Unavailable(Errno("connecting to " + path));
  }
  const int timeout_ms =
      static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(timeout).count());
  std::optional<std::string> line;
  if (WriteAll(fd, model::DumpJson(request) + "\n")) {
    line = ReadLine(fd, timeout_ms, kMaxRequestBytes);
  }
  close(fd);
  if (!line) return Status::Unavailable("no answer from " + path);
  auto answer = model::ParseJson(*line);
  if (!answer.ok())
    return Status::Corruption("answer from " + path + ": " + answer.status().message());
  return std::move(answer).value();
}

model::Json RunLedgerMaintenance(store::Ledger& ledger, const model::Json& request, Time now) {
  if (!request.is_object() || !request.contains("op") || !request["op"].is_string()) {
    return Failure("request: want an object with \"op\"");
  }
  const std::string op = request["op"];
  if (op == "backup") {
    if (!request.contains("to") || !request["to"].is_string()) {
      return Failure("backup: \"to\" (a directory) is required");
    }
    auto meta = ledger.Meta();
    if (!meta.ok()) return Failure(meta.status().ToString());
    const Status s = ledger.Backup(request["to"].get<std::string>());
    if (!s.ok()) return Failure(s.ToString());
    return {{"ok", true},
            {"lastInputSeq", meta->last_input_seq},
            {"lastDecisionSeq", meta->last_decision_seq}};
  }
  if (op == "retention") {
    store::RetentionOptions options;
    for (const auto& [field, out] : {std::pair{"rawMaxAgeNanos", &options.raw_max_age},
                                     std::pair{"logMaxAgeNanos", &options.log_max_age}}) {
      if (!request.contains(field)) continue;
      if (!request[field].is_number_integer() || request[field].get<int64_t>() < 0) {
        return Failure(std::string("retention: \"") + field + "\" must be a whole number >= 0");
      }
      *out = Duration(request[field].get<int64_t>());
    }
    if (request.contains("dryRun")) {
      if (!request["dryRun"].is_boolean())
        return Failure("retention: \"dryRun\" must be a boolean");
      options.dry_run = request["dryRun"].get<bool>();
    }
    // The trail chains what retention is about to delete or prune, so that what remains stays
    // verifiable against earlier checkpoints (replay/trail.h).
    std::unique_lock<std::mutex> trail_lock(TrailUpdateMutex(), std::defer_lock);
    if (!options.dry_run) {
      trail_lock.lock();
      auto has_trail = replay::trail::HasTrail(ledger);
      const Status trail = has_trail.ok() && *has_trail
                               ? replay::trail::UpdateTrail(ledger, {}, now).status()
                               : has_trail.status();
      if (!trail.ok()) return Failure("audit trail: " + trail.ToString());
    }
    auto report = ledger.ApplyRetention(options, now);
    if (!report.ok()) return Failure(report.status().ToString());
    return {{"ok", true},
            {"item",
             {{"rawPruned", report->raw_deleted},
              {"inputsPruned", report->inputs_deleted},
              {"pinned", report->pinned},
              {"unchained", report->unchained},
              {"dryRun", report->dry_run}}}};
  }
  return Failure("unknown op \"" + op + "\" (backup, retention)");
}

std::unique_ptr<AdminSocket> StartAdminSocket(const std::string& command,
                                              const std::string& data_dir, store::Ledger& ledger,
                                              const WallClock& clock) {
  auto started =
      AdminSocket::Start(AdminSocketPath(data_dir), [&ledger, &clock](const model::Json& r) {
        return RunLedgerMaintenance(ledger, r, clock.Now());
      });
  if (!started.ok()) {
    ProcessLog().Warning(command, "admin socket: " + started.status().ToString() +
                                      " (backup and retention need this process stopped)");
    return nullptr;
  }
  return std::move(started).value();
}

}  // namespace cronledger::app
