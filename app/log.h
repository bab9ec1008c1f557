#pragma once

// The process's log: one line per message on stderr, each with a timestamp and a level, as text or
// as JSON lines, with klog's verbosity. The global flags every command takes set it up
// (RunCommand, app/command.h):
//
//   --log-format text|json   text (default): `2026-11-27T15:41:00.123Z INFO run: message`
//                            json: {"ts":"2026-11-27T15:41:00.123Z","level":"info","logger":"run",
//                                   "msg":"message"} (controller-runtime's zap keys)
//   -v N, --v N              klog verbosity: V(n) messages print when n <= N (default 0)
//
// Long-running commands (run, relay, emit) log through it; command results and usage errors stay
// on stdout / stderr as the command prints them.

#include <cstdio>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "model/clock.h"
#include "model/result.h"

namespace cronledger::app {

enum class LogLevel { kError, kWarning, kInfo };
enum class LogFormat { kText, kJson };

struct LogOptions {
  LogFormat format = LogFormat::kText;
  // klog's -v. Default: 0 (only V(0), i.e. ordinary info, warnings and errors).
  int verbosity = 0;
};

// Removes the global logging flags (before a `--`) from `args` into `options`. InvalidArgument
// for a bad format or verbosity, naming the flag.
Result<std::vector<std::string>> TakeLogFlags(const std::vector<std::string>& args,
                                              LogOptions* options);

class Logger {
 public:
  // `out` and `clock` must outlive the logger. Thread-safe: a line is written with one call.
  Logger(std::FILE* out, const WallClock& clock, LogOptions options);

  void Log(LogLevel level, std::string_view logger, std::string_view msg) const;
  void Info(std::string_view logger, std::string_view msg) const {
    Log(LogLevel::kInfo, logger, msg);
  }
  void Warning(std::string_view logger, std::string_view msg) const {
    Log(LogLevel::kWarning, logger, msg);
  }
  void Error(std::string_view logger, std::string_view msg) const {
    Log(LogLevel::kError, logger, msg);
  }
  // klog's V(n).Info: printed only when n <= the verbosity.
  void V(int n, std::string_view logger, std::string_view msg) const;
  bool VEnabled(int n) const { return n <= options_.verbosity; }

  // Info lines of `logger`, for the parts that take a plain line callback (RunLogFn).
  std::function<void(const std::string&)> InfoFn(std::string logger) const;

 private:
  std::FILE* out_;
  const WallClock& clock_;
  LogOptions options_;
};

// The process's logger (stderr, the system clock). ConfigureLogging replaces it: call it once,
// before anything logs or holds an InfoFn (RunCommand does, before the command runs).
const Logger& ProcessLog();
void ConfigureLogging(const LogOptions& options);

}  // namespace cronledger::app
