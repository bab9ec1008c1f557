#pragma once

// `cronledger serve` on 127.0.0.1 with a free port, as a tests/testing/cli.h ChildProcess: ready
// when it prints "listening on URL"; stopped (SIGTERM) when destroyed.

#include <cstdlib>
#include <string>
#include <vector>

#include "tests/testing/cli.h"

namespace cronledger::audit {

class ServeProcess {
 public:
  ServeProcess(const std::string& data_dir, const std::string& token_file,
               const std::vector<std::string>& extra_flags = {})
      : child_(Args(data_dir, token_file, extra_flags), "listening on ") {}
  int Stop() { return child_.Stop(); }                            // SIGTERM; the exit code
  const std::string& url() const { return child_.ready_rest(); }  // "" when it did not start
  int port() const {
    return url().empty() ? 0 : std::atoi(url().substr(url().rfind(':') + 1).c_str());
  }

 private:
  static std::vector<std::string> Args(const std::string& data_dir, const std::string& token_file,
                                       const std::vector<std::string>& extra_flags) {
    std::vector<std::string> args = {CRONLEDGER_BIN, "serve",       "--data-dir",   data_dir,
                                     "--listen",     "127.0.0.1:0", "--token-file", token_file,
                                     "--rate",       "1000",        "--burst",      "1000"};
    args.insert(args.end(), extra_flags.begin(), extra_flags.end());
    return args;
  }
  cli_test::ChildProcess child_;
};

}  // namespace cronledger::audit
