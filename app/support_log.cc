// The process log (app/log.h).
#include <charconv>
#include <memory>

#include "app/log.h"
#include "app/system_clock.h"
#include "model/json.h"

namespace cronledger::app {
namespace {

const char* LevelName(LogLevel level, LogFormat format) {
  switch (level) {
    case LogLevel::kError:
      return format == LogFormat::kJson ? "error" : "ERROR";
    case LogLevel::kWarning:
      return format == LogFormat::kJson ? "warn" : "WARN";
    case LogLevel::kInfo:
      break;
  }
  return format == LogFormat::kJson ? "info" : "INFO";
}

// Milliseconds, like zap's ISO 8601 encoder: "2026-11-27T15:41:00.123Z".
std::string Timestamp(Time t) {
  const std::string nano = FormatRfc3339Nano(t);  // "...:00Z" or "...:00.123456789Z"
  std::string out = nano.substr(0, 19);
  const size_t dot = nano.find('.');
  std::string frac = dot == std::string::npos ? "" : nano.substr(dot + 1, nano.size() - dot - 2);
  frac.resize(3, '0');
  return out + "." + frac + "Z";
}

std::unique_ptr<Logger>& ProcessLogger() {
  static std::unique_ptr<Logger> logger =
      std::make_unique<Logger>(stderr, RealClock(), LogOptions{});
  return logger;
}

Result<int> ParseVerbosity(const std::string& text) {
  int v = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || v < 0) {
    return Status::InvalidArgument("-v: a verbosity from 0 up, not \"" + text + "\"");
  }
  return v;
}

}  // namespace

Result<std::vector<std::string>> TakeLogFlags(const std::vector<std::string>& args,
                                              LogOptions* options) {
  std::vector<std::string> rest;
  bool only_positionals = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (only_positionals || arg == "--") {
      only_positionals = true;
      rest.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(0, eq);
    const bool format = name == "--log-format";
    const bool verbosity = name == "-v" || name == "--v";
    if (!format && !verbosity) {
      rest.push_back(arg);
      continue;
    }
    std::string value;
    if (eq != std::string::npos) {
      value = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return Status::InvalidArgument("flag " + name + " needs a value");
    }
    if (format) {
      if (value != "text" && value != "json") {
        return Status::InvalidArgument("--log-format must be text or json, not \"" + value + "\"");
      }
      options->format = value == "json" ? LogFormat::kJson : LogFormat::kText;
    } else {
      CL_ASSIGN_OR_RETURN(options->verbosity, ParseVerbosity(value));
    }
  }
  return rest;
}

Logger::Logger(std::FILE* out, const WallClock& clock, LogOptions options)
    : out_(out), clock_(clock), options_(options) {}

void Logger::Log(LogLevel level, std::string_view logger, std::string_view msg) const {
  const std::string ts = Timestamp(clock_.Now());
  std::string line;
  if (options_.format == LogFormat::kJson) {
    model::Json j = {{"ts", ts}, {"level", LevelName(level, LogFormat::kJson)}};
    if (!logger.empty()) j["logger"] = std::string(logger);
    j["msg"] = std::string(msg);
    line = model::DumpJson(j);
  } else {
    line = ts + " " + LevelName(level, LogFormat::kText) + " ";
    if (!logger.empty()) line.append(logger).append(": ");
    line.append(msg);
  }
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

void Logger::V(int n, std::string_view logger, std::string_view msg) const {
  if (VEnabled(n)) Log(LogLevel::kInfo, logger, msg);
}

std::function<void(const std::string&)> Logger::InfoFn(std::string logger) const {
  return [this, logger = std::move(logger)](const std::string& line) { Info(logger, line); };
}

const Logger& ProcessLog() { return *ProcessLogger(); }

void ConfigureLogging(const LogOptions& options) {
  ProcessLogger() = std::make_unique<Logger>(stderr, RealClock(), options);
}

}  // namespace cronledger::app
