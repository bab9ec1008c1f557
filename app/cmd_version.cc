// `cronledger version`: the cronledger release and the tz database release its fire times come
// from (docs/schedule.md, "Which tz database").
#include <cstdio>

#include "app/command.h"
#include "app/flags.h"
#include "model/build_info.h"
#include "model/json.h"
#include "model/timezone.h"
#include "model/timezone_version.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger version [--zoneinfo DIR] [-o table|json]\n"
    "Prints the cronledger version and the tz database release in DIR (default\n"
    "/usr/share/zoneinfo, the directory run, serve and schedule read), from the first line of\n"
    "DIR/tzdata.zi. An unknown release is reported with its reason; the exit code stays 0.\n"
    "`cronledger --version` is the same as `cronledger version`.\n";

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("zoneinfo").Value("output", "o").Switch("help", "h");
  Status parsed = flags.Parse(args);
  const std::string output = flags.GetOr("output", "table");
  if (parsed.ok() && output != "table" && output != "json") {
    parsed = Status::InvalidArgument("--output must be table or json, got " + output);
  }
  if (parsed.ok() && !flags.positionals().empty()) {
    parsed = Status::InvalidArgument("unexpected argument " + flags.positionals()[0]);
  }
  if (!parsed.ok()) {
    std::fprintf(io.err, "cronledger version: %s\n%s", parsed.message().c_str(), kUsage);
    return kExitUsage;
  }
  if (flags.Has("help")) {
    std::fputs(kUsage, io.out);
    return kExitOk;
  }
  const std::string zoneinfo =
      flags.GetOr("zoneinfo", model::SystemTimeZoneDbOptions().zoneinfo_dir);
  const Result<std::string> release = model::ReadTzdataVersion(zoneinfo);
  const std::string version(model::CronledgerVersion());
  if (output == "json") {
    model::Json out = {{"version", version},
                       {"tzdata", release.ok() ? *release : model::kUnknownTzdata},
                       {"zoneinfo", zoneinfo}};
    if (!release.ok()) out["tzdataError"] = release.status().message();
    std::fprintf(io.out, "%s\n", model::DumpJson(out).c_str());
    return kExitOk;
  }
  std::fprintf(io.out, "cronledger %s\n", version.c_str());
  if (release.ok()) {
    std::fprintf(io.out, "tzdata %s (%s)\n", release->c_str(), zoneinfo.c_str());
  } else {
    std::fprintf(io.out, "tzdata %s (%s)\n", model::kUnknownTzdata,
                 release.status().message().c_str());
  }
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("version", "print the cronledger version and the tz database release", Run,
                    kUsage);

}  // namespace cronledger::app
