// `cronledger why NS/NAME --scheduled T | --at T`: what happened to a fire time, and why, from
// the replayed history (docs/replay.md "why").
#include <cstdio>
#include <utility>
#include <vector>

#include "app/command.h"
#include "app/support_audit.h"
#include "app/support_audit_store.h"
#include "app/support_replay.h"
#include "audit/sources.h"
#include "replay/explain.h"

namespace cronledger::app {
namespace {

using namespace replay_cli;  // NOLINT: the replay commands' shared plumbing

constexpr const char* kUsage =
    "usage: cronledger why NS/NAME (--scheduled T | --at T) [--data-dir DIR | --bundle F]\n"
    "                      [-o table|json|yaml|csv]\n"
    "On an audit store (cronledger audit-store) every source's ledger is asked: the answer\n"
    "comes from the source that recorded the fire time, and names what the others say.\n";

Result<replay::WhyQuery> Query(const Flags& flags) {
  if (flags.positionals().size() != 1) return Status::InvalidArgument("want one NS/NAME");
  replay::WhyQuery q;
  q.cron_job = flags.positionals()[0];
  CL_RETURN_IF_ERROR(CheckCronJobRef(q.cron_job));
  if (flags.Has("scheduled") == flags.Has("at")) {
    return Status::InvalidArgument("want exactly one of --scheduled and --at");
  }
  if (flags.Has("scheduled")) {
    CL_ASSIGN_OR_RETURN(q.scheduled, RequiredTimeFlag(flags, "scheduled"));
  }
  if (flags.Has("at")) {
    CL_ASSIGN_OR_RETURN(q.at, RequiredTimeFlag(flags, "at"));
  }
  q.zoneinfo_dir = ZoneinfoDir(flags);
  return q;
}

Result<replay::Why> ExplainOne(const Flags& flags, const replay::WhyQuery& query) {
  CL_ASSIGN_OR_RETURN(History history, OpenHistory(flags));
  return replay::Explain(*history.source, query);
}

// An audit store (`cronledger audit-store`): the question asked of every source's ledger
// (audit::ExplainAcrossSources).
Result<replay::Why> ExplainAcrossSources(const std::string& dir, const replay::WhyQuery& query) {
  CL_ASSIGN_OR_RETURN(audit_store::ReadSources read,
                      audit_store::OpenReadSources(dir, kOneShotRefresh));
  return audit::ExplainAcrossSources(read.sources, query);
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("output", "o").Value("scheduled").Value("at").Value("bundle");
  flags.Value("zoneinfo");
  Status parsed = flags.Parse(args);
  auto format = ParseOutputFormat(flags.GetOr("output", "table"));
  auto query = parsed.ok() ? Query(flags) : Result<replay::WhyQuery>(parsed);
  if (!query.ok() || !format.ok()) {
    std::fprintf(io.err, "cronledger why: %s\n%s",
                 (query.ok() ? format.status() : query.status()).message().c_str(), kUsage);
    return kExitUsage;
  }
  const std::string data_dir = flags.GetOr("data-dir", "./data");
  auto why = !flags.Has("bundle") && audit_store::IsAuditStoreDir(data_dir)
                 ? ExplainAcrossSources(data_dir, *query)
                 : ExplainOne(flags, *query);
  if (!why.ok()) {
    std::fprintf(io.err, "cronledger why: %s\n", why.status().ToString().c_str());
    return kExitFailure;
  }
  if (*format == OutputFormat::kTable) {
    for (const std::string& s : why->sentences) std::fprintf(io.out, "%s\n", s.c_str());
  } else {
    PrintItems(io.out, *format, {"cronJob", "scheduledTime", "verdict", "reason", "sentences"},
               {why->facts});
  }
  return why->verdict == "unknown CronJob" ? kExitFailure : kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("why", "explain what happened to a fire time of a CronJob, and why", Run,
                    kUsage);

}  // namespace cronledger::app
