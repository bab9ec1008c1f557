#pragma once

// Running the cronledger binary from tests: one-shot commands, and `cronledger serve` as a child
// process whose readiness is its "listening on URL" line (no sleeps).

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/status.h"

extern char** environ;

namespace cronledger::audit::testing {

struct CliResult {
  int exit_code;
  std::string out;
};

// Runs `cronledger ARGS` with stderr discarded (or merged with `merge_stderr`).
inline CliResult Cli(const std::string& args, bool merge_stderr = false) {
  const std::string cmd =
      std::string(CRONLEDGER_BIN) + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  std::FILE* p = popen(cmd.c_str(), "r");
  CL_CHECK(p != nullptr);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

inline std::string SourceDir() {
  const char* s = std::getenv("CRONLEDGER_SOURCE_DIR");
  return s ? s : ".";
}

// `cronledger serve` on 127.0.0.1 with a free port. Stops (SIGTERM) when destroyed.
class ServeProcess {
 public:
  ServeProcess(const std::string& data_dir, const std::string& token_file) {
    int fds[2];
    CL_CHECK(pipe(fds) == 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::vector<std::string> args = {CRONLEDGER_BIN, "serve",       "--data-dir",   data_dir,
                                     "--listen",     "127.0.0.1:0", "--token-file", token_file,
                                     "--rate",       "1000",        "--burst",      "1000"};
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    CL_CHECK(posix_spawn(&pid_, CRONLEDGER_BIN, &fa, nullptr, argv.data(), environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    // Blocks until the server printed its address (or exited: then the line is empty).
    std::string line;
    char c;
    while (read(fds[0], &c, 1) == 1 && c != '\n') line += c;
    close(fds[0]);
    const std::string prefix = "listening on ";
    if (line.rfind(prefix, 0) == 0) url_ = line.substr(prefix.size());
  }
  ~ServeProcess() { Stop(); }
  // Sends SIGTERM and returns the exit code.
  int Stop() {
    if (pid_ <= 0) return exit_code_;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = 0;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return exit_code_;
  }
  const std::string& url() const { return url_; }  // "http://127.0.0.1:PORT", "" on failure
  int port() const {
    return url_.empty() ? 0 : std::atoi(url_.substr(url_.rfind(':') + 1).c_str());
  }

 private:
  pid_t pid_ = 0;
  int exit_code_ = -1;
  std::string url_;
};

}  // namespace cronledger::audit::testing
