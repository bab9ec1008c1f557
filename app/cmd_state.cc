// `cronledger state NS/NAME --at T`: the view of a CronJob as the controller held it at time T
// (docs/replay.md "state").
#include <cstdio>

#include "app/command.h"
#include "app/support_replay.h"
#include "replay/state_at.h"

namespace cronledger::app {
namespace {

using namespace replay_cli;  // NOLINT: the replay commands' shared plumbing

constexpr const char* kUsage =
    "usage: cronledger state NS/NAME --at T [--data-dir DIR | --bundle F] "
    "[-o table|json|yaml|csv]\n";

Result<replay::StateQuery> Query(const Flags& flags) {
  if (flags.positionals().size() != 1) return Status::InvalidArgument("want one NS/NAME");
  replay::StateQuery q;
  q.cron_job = flags.positionals()[0];
  CL_RETURN_IF_ERROR(CheckCronJobRef(q.cron_job));
  CL_ASSIGN_OR_RETURN(q.at, RequiredTimeFlag(flags, "at"));
  q.zoneinfo_dir = ZoneinfoDir(flags);
  return q;
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("output", "o").Value("at").Value("bundle").Value("zoneinfo");
  Status parsed = flags.Parse(args);
  auto format = ParseOutputFormat(flags.GetOr("output", "table"));
  auto query = parsed.ok() ? Query(flags) : Result<replay::StateQuery>(parsed);
  if (!query.ok() || !format.ok()) {
    std::fprintf(io.err, "cronledger state: %s\n%s",
                 (query.ok() ? format.status() : query.status()).message().c_str(), kUsage);
    return kExitUsage;
  }
  auto history = OpenHistory(flags);
  if (!history.ok()) {
    std::fprintf(io.err, "cronledger state: %s\n", history.status().ToString().c_str());
    return kExitFailure;
  }
  auto state = replay::StateAt(*history->source, *query);
  if (!state.ok()) {
    std::fprintf(io.err, "cronledger state: %s\n", state.status().ToString().c_str());
    return kExitFailure;
  }
  if (*format == OutputFormat::kTable) {
    for (const std::string& s : state->lines) std::fprintf(io.out, "%s\n", s.c_str());
  } else {
    PrintItems(io.out, *format, {"cronJob", "at", "viewSeq", "exists"}, {state->state});
  }
  return state->exists ? kExitOk : kExitFailure;
}

}  // namespace

CL_REGISTER_COMMAND("state", "the view of a CronJob as the controller held it at a time", Run,
                    kUsage);

}  // namespace cronledger::app
