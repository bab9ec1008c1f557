// `cronledger state NS/NAME --at T`: the view of a CronJob as the controller held it at time T
// (docs/replay.md "state").
#include <cstdio>
#include <optional>

#include "app/command.h"
#include "app/support_audit.h"
#include "app/support_audit_store.h"
#include "app/support_replay.h"
#include "audit/query.h"
#include "audit/sources.h"
#include "replay/source.h"
#include "replay/state_at.h"

namespace cronledger::app {
namespace {

using namespace replay_cli;  // NOLINT: the replay commands' shared plumbing

constexpr const char* kUsage =
    "usage: cronledger state NS/NAME --at T [--data-dir DIR | --bundle F] "
    "[-o table|json|yaml|csv]\n"
    "On an audit store (cronledger audit-store): the view of the source that decided the\n"
    "CronJob last at or before T.\n";

Result<replay::StateQuery> Query(const Flags& flags) {
  if (flags.positionals().size() != 1) return Status::InvalidArgument("want one NS/NAME");
  replay::StateQuery q;
  q.cron_job = flags.positionals()[0];
  CL_RETURN_IF_ERROR(CheckCronJobRef(q.cron_job));
  CL_ASSIGN_OR_RETURN(q.at, RequiredTimeFlag(flags, "at"));
  q.zoneinfo_dir = ZoneinfoDir(flags);
  return q;
}

// An audit store: the view of the source that decided the CronJob last at or before T (its owner
// then), or else of the first source whose view holds it; the other sources are listed.
int RunMerged(const std::string& dir, const replay::StateQuery& query, OutputFormat format,
              const CommandIo& io) {
  auto opened = audit_store::OpenAuditStoreSources(dir, kOneShotRefresh);
  auto key = audit::ParseCronJobKey(query.cron_job);
  if (!opened.ok() || !key.ok()) {
    std::fprintf(io.err, "cronledger state: %s\n",
                 (opened.ok() ? key.status() : opened.status()).ToString().c_str());
    return kExitFailure;
  }
  struct Answer {
    std::string source;
    replay::StateAtResult state;
    std::optional<Time> decided;
  };
  std::vector<Answer> answers;
  for (auto& [source, ledger] : *opened) {
    replay::LedgerSource history(*ledger);
    auto state = replay::StateAt(history, query);
    auto decided = audit::LastDecisionAtOrBefore(*ledger, key->first, key->second, query.at);
    const Status s = !state.ok() ? state.status() : decided.status();
    if (!s.ok()) {
      std::fprintf(io.err, "cronledger state: source %s: %s\n", source.c_str(),
                   s.ToString().c_str());
      return kExitFailure;
    }
    answers.push_back({source, std::move(*state), *decided});
  }
  size_t pick = 0;
  for (size_t i = 0; i < answers.size(); ++i) {
    const Answer& a = answers[i];
    const Answer& best = answers[pick];
    const bool later = a.decided && (!best.decided || *best.decided < *a.decided);
    const bool holds = !best.decided && !a.decided && a.state.exists && !best.state.exists;
    if (later || holds) pick = i;
  }
  Answer& answer = answers[pick];
  model::Json others = model::Json::array();
  for (const Answer& a : answers) {
    if (&a == &answer) continue;
    others.push_back({{"source", a.source},
                      {"exists", a.state.exists},
                      {"lastDecision", a.decided ? model::Json(FormatRfc3339Nano(*a.decided))
                                                 : model::Json(nullptr)}});
  }
  if (format == OutputFormat::kTable) {
    std::fprintf(io.out, "From the ledger of source %s%s.\n", answer.source.c_str(),
                 answer.decided ? " (the last to decide the CronJob at or before this time)" : "");
    for (const std::string& s : answer.state.lines) std::fprintf(io.out, "%s\n", s.c_str());
    for (const model::Json& o : others) {
      std::fprintf(io.out, "Source %s: %s%s.\n", o["source"].get<std::string>().c_str(),
                   o["exists"].get<bool>() ? "holds the CronJob too" : "does not hold the CronJob",
                   o["lastDecision"].is_string()
                       ? (", last decided it at " + o["lastDecision"].get<std::string>()).c_str()
                       : "");
    }
  } else {
    model::Json item = answer.state.state;
    item["source"] = answer.source;
    item["otherSources"] = std::move(others);
    PrintItems(io.out, format, {"cronJob", "at", "viewSeq", "exists", "source"}, {item});
  }
  return answer.state.exists ? kExitOk : kExitFailure;
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
  if (!flags.Has("bundle") && audit_store::IsAuditStoreDir(flags.GetOr("data-dir", "./data"))) {
    return RunMerged(flags.GetOr("data-dir", "./data"), *query, *format, io);
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
