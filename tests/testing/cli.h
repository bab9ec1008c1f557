#pragma once

// Running a binary (usually `cronledger`) from end-to-end tests, header-only:
//
//   Run(argv, options)          one command, no shell: stdout, stderr (kept, merged into stdout
//                               or discarded) and the exit code; optional stdin text.
//   RunShell(binary, args, ...) the same through /bin/sh -c "'binary' args", for tests that
//                               write their arguments as one shell string (quotes, redirections).
//   Cli(args, ...)              RunShell(CRONLEDGER_BIN, args) when the test defines
//                               CRONLEDGER_BIN (the path of the cronledger binary).
//   ChildProcess                a long-running child (serve, run) whose readiness is a line it
//                               prints on stdout (no sleeps); stopped with a signal.
//
// Every pipe is drained with poll(), so a child writing a lot on both streams never blocks the
// test. Namespace cronledger::cli_test (not `testing`, which would hide gtest's ::testing inside
// namespace cronledger).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "model/status.h"

extern char** environ;

namespace cronledger::cli_test {

enum class Stderr {
  kDiscard,  // /dev/null
  kCapture,  // CliResult::err
  kMerge,    // into CliResult::out, interleaved as written
};

struct CliOptions {
  Stderr stderr_mode = Stderr::kDiscard;  // Default: discarded
  std::string stdin_text;                 // written to the child's stdin, then closed
};

struct CliResult {
  int exit_code = -1;  // the exit status; 128 + signal when killed by a signal
  std::string out;
  std::string err;  // only with Stderr::kCapture
};

inline int ExitCode(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return -1;
}

// Single-quotes `s` for /bin/sh.
inline std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

namespace internal {

inline void Pipe(int fds[2]) { CL_CHECK(pipe2(fds, O_CLOEXEC) == 0); }

// Spawns argv[0] (a path) with the given child fds (-1: /dev/null) for 0, 1, 2.
inline pid_t Spawn(const std::vector<std::string>& argv, int in, int out, int err) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  const int fds[3] = {in, out, err};
  for (int i = 0; i < 3; ++i) {
    if (fds[i] >= 0) {
      posix_spawn_file_actions_adddup2(&fa, fds[i], i);
    } else {
      posix_spawn_file_actions_addopen(&fa, i, "/dev/null", i == 0 ? O_RDONLY : O_WRONLY, 0);
    }
  }
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  CL_CHECK(rc == 0);
  return pid;
}

}  // namespace internal

// Runs argv (argv[0] is a path; no shell, no quoting) to completion.
inline CliResult Run(const std::vector<std::string>& argv, const CliOptions& options = {}) {
  int in[2], out[2], err[2] = {-1, -1};
  internal::Pipe(in);
  internal::Pipe(out);
  if (options.stderr_mode == Stderr::kCapture) internal::Pipe(err);
  const int child_err = options.stderr_mode == Stderr::kMerge     ? out[1]
                        : options.stderr_mode == Stderr::kCapture ? err[1]
                                                                  : -1;
  const pid_t pid = internal::Spawn(argv, in[0], out[1], child_err);
  close(in[0]);
  close(out[1]);
  if (err[1] >= 0) close(err[1]);
  // A child that exits without reading its stdin must not kill the test with SIGPIPE.
  signal(SIGPIPE, SIG_IGN);
  CliResult result;
  size_t written = 0;
  int in_fd = in[1];
  if (options.stdin_text.empty()) {
    close(in_fd);
    in_fd = -1;
  } else {
    CL_CHECK(fcntl(in_fd, F_SETFL, O_NONBLOCK) == 0);
  }
  int out_fd = out[0], err_fd = err[0];
  std::array<char, 65536> buf;
  while (in_fd >= 0 || out_fd >= 0 || err_fd >= 0) {
    std::vector<pollfd> fds;
    if (in_fd >= 0) fds.push_back({in_fd, POLLOUT, 0});
    if (out_fd >= 0) fds.push_back({out_fd, POLLIN, 0});
    if (err_fd >= 0) fds.push_back({err_fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0) {
      CL_CHECK(errno == EINTR);
      continue;
    }
    for (const pollfd& p : fds) {
      if (p.revents == 0) continue;
      if (p.fd == in_fd) {
        const ssize_t n =
            write(in_fd, options.stdin_text.data() + written, options.stdin_text.size() - written);
        if (n > 0) written += static_cast<size_t>(n);
        if (n < 0 && errno != EAGAIN) written = options.stdin_text.size();  // EPIPE: it stopped
        if (written == options.stdin_text.size()) {
          close(in_fd);
          in_fd = -1;
        }
        continue;
      }
      const ssize_t n = read(p.fd, buf.data(), buf.size());
      if (n > 0) {
        (p.fd == out_fd ? result.out : result.err).append(buf.data(), static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(p.fd);
        (p.fd == out_fd ? out_fd : err_fd) = -1;
      }
    }
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) CL_CHECK(errno == EINTR);
  result.exit_code = ExitCode(status);
  return result;
}

// Runs "'binary' args" through /bin/sh -c (args is shell text: quoting and redirections apply).
inline CliResult RunShell(const std::string& binary, const std::string& args,
                          const CliOptions& options = {}) {
  return Run({"/bin/sh", "-c", ShellQuote(binary) + " " + args}, options);
}

#ifdef CRONLEDGER_BIN
// `cronledger ARGS` (shell text); stderr discarded, or merged into out with `merge_stderr`.
inline CliResult Cli(const std::string& args, bool merge_stderr = false) {
  CliOptions o;
  o.stderr_mode = merge_stderr ? Stderr::kMerge : Stderr::kDiscard;
  return RunShell(CRONLEDGER_BIN, args, o);
}
#endif

// The repository root, from CRONLEDGER_SOURCE_DIR (set by ctest), else ".".
inline std::string SourceDir() {
  const char* s = std::getenv("CRONLEDGER_SOURCE_DIR");
  return s ? s : ".";
}

// A child that runs until stopped. The constructor blocks until the child printed a stdout line
// starting with `ready_prefix` (the rest of that line is ready_rest()), or closed stdout / exited
// (then ready() is false); an empty prefix returns at once. Stderr is inherited unless `quiet`.
// With `pipe_stdin` the test writes the child's stdin (WriteStdin, CloseStdin); otherwise it is
// /dev/null. Later stdout lines are read with WaitForLine, or stay in the pipe (64 KiB) until
// Stop(). Destroying it stops the child (SIGTERM) and reaps it.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::string& ready_prefix,
               bool quiet = false, bool pipe_stdin = false) {
    int out[2], in[2] = {-1, -1};
    internal::Pipe(out);
    if (pipe_stdin) internal::Pipe(in);
    pid_ = internal::Spawn(argv, in[0], out[1], quiet ? -1 : 2);
    close(out[1]);
    if (in[0] >= 0) close(in[0]);
    out_fd_ = out[0];
    in_fd_ = in[1];
    if (ready_prefix.empty()) {
      ready_ = true;
      return;
    }
    if (std::optional<std::string> line = WaitForLine(ready_prefix)) {
      ready_ = true;
      ready_rest_ = line->substr(ready_prefix.size());
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess() { Stop(); }

  bool ready() const { return ready_; }
  const std::string& ready_rest() const { return ready_rest_; }
  pid_t pid() const { return pid_; }

  // Reads stdout lines until one starts with `prefix` and returns it (without the newline);
  // nullopt when stdout closed first.
  std::optional<std::string> WaitForLine(const std::string& prefix) {
    std::string line;
    char c;
    for (;;) {
      const ssize_t n = read(out_fd_, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n != 1) return std::nullopt;
      if (c != '\n') {
        line += c;
        continue;
      }
      if (line.rfind(prefix, 0) == 0) return line;
      line.clear();
    }
  }

  // pipe_stdin: writes all of `text`; false when the child closed its stdin.
  bool WriteStdin(const std::string& text) {
    signal(SIGPIPE, SIG_IGN);
    size_t done = 0;
    while (in_fd_ >= 0 && done < text.size()) {
      const ssize_t n = write(in_fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return in_fd_ >= 0;
  }
  void CloseStdin() {
    if (in_fd_ >= 0) close(in_fd_);
    in_fd_ = -1;
  }

  // Sends `sig` and waits for the child; returns its exit code (ExitCode). Idempotent.
  int Stop(int sig = SIGTERM) {
    if (pid_ <= 0) return exit_code_;
    kill(pid_, sig);
    return Wait();
  }
  // Waits for the child to exit by itself (e.g. after CloseStdin); returns its exit code.
  int Wait() {
    if (pid_ <= 0) return exit_code_;
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = 0;
    exit_code_ = ExitCode(status);
    CloseStdin();
    if (out_fd_ >= 0) close(out_fd_);
    out_fd_ = -1;
    return exit_code_;
  }

 private:
  pid_t pid_ = 0;
  int out_fd_ = -1;
  int in_fd_ = -1;
  int exit_code_ = -1;
  bool ready_ = false;
  std::string ready_rest_;
};

}  // namespace cronledger::cli_test
