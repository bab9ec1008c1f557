// `cronledger report adherence`: per CronJob, what happened to every expected fire time of a
// window (docs/audit.md "Adherence").
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "app/command.h"
#include "app/flags.h"
#include "app/output.h"
#include "app/support_audit.h"
#include "app/support_audit_store.h"
#include "app/system_clock.h"
#include "audit/adherence.h"
#include "audit/divergences.h"
#include "audit/encode.h"
#include "audit/query.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger report adherence [--since T] [--until T] [--cronjob NS/NAME] [-n NS]\n"
    "                                   [--slots] [--zoneinfo DIR] [--data-dir DIR]\n"
    "                                   [-o table|json|yaml|csv]\n"
    "Per CronJob: expected fire times, created (with skew), skipped by reason, unaccounted,\n"
    "pending, Job outcomes, the adherence percentage and the shadow auditor's divergences by\n"
    "kind. The window defaults to the 24 hours before the ledger's last decision. json and yaml\n"
    "add the totals beside the items. --slots adds every fire time and divergence record\n"
    "(json/yaml). On an audit store (cronledger audit-store), every source's ledger, merged:\n"
    "one counted record per fire time, the other sources' records kept in alsoDecidedBy.\n"
    "T: an RFC 3339 time, or a duration before now like kubectl's (--since 1h).\n";

int Usage(const CommandIo& io, const std::string& why) {
  std::fprintf(io.err, "cronledger report: %s\n%s", why.c_str(), kUsage);
  return kExitUsage;
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("since").Value("until").Value("cronjob").Value("namespace", "n");
  flags.Value("zoneinfo").Switch("slots").Value("output", "o");
  Status s = flags.Parse(args);
  if (!s.ok()) return Usage(io, s.message());
  if (flags.positionals() != std::vector<std::string>{"adherence"}) {
    return Usage(io, "expected the report name: adherence");
  }
  Result<OutputFormat> format = ParseOutputFormat(flags.GetOr("output", "table"));
  if (!format.ok()) return Usage(io, format.status().message());
  audit::AdherenceOptions o;
  o.with_slots = flags.Has("slots");
  o.namespace_ = flags.GetOr("namespace", "");
  if (auto cj = flags.Get("cronjob")) {
    auto key = audit::ParseCronJobKey(*cj);
    if (!key.ok()) return Usage(io, "--cronjob: " + key.status().message());
    o.namespace_ = key->first;
    o.name = key->second;
  }
  const Time now = RealClock().Now();
  auto since = TimeFlag(flags, "since", now);
  auto until = TimeFlag(flags, "until", now);
  if (!since.ok()) return Usage(io, since.status().message());
  if (!until.ok()) return Usage(io, until.status().message());
  auto tzdb = model::OpenSystemTimeZoneDb({flags.GetOr("zoneinfo", "/usr/share/zoneinfo"), "UTC"});
  if (!tzdb.ok()) return Usage(io, "--zoneinfo: " + tzdb.status().message());
  // A ledger, or an audit store (`cronledger audit-store`): every source's ledger, merged.
  auto read = audit_store::OpenReadSources(flags.GetOr("data-dir", "./data"), kOneShotRefresh);
  if (!read.ok()) {
    std::fprintf(io.err, "cronledger report: %s\n", read.status().ToString().c_str());
    return kExitFailure;
  }
  if (!*until) {
    auto latest = audit::LatestHorizon(read->sources);
    if (!latest.ok()) {
      std::fprintf(io.err, "cronledger report: %s\n", latest.status().ToString().c_str());
      return kExitFailure;
    }
    if (!*latest) return Usage(io, "--until is required: no decisions yet");
    *until = (*latest)->TruncateToSecond().AddSeconds(1);
  }
  o.until = **until;
  o.since = *since ? **since : o.until.AddSeconds(-24 * 3600);
  Result<audit::AdherenceReport> report =
      read->merged ? audit::ComputeMergedAdherence(read->sources, **tzdb, o)
                   : audit::ComputeAdherence(*read->ledgers.front(), **tzdb, o);
  if (!report.ok()) {
    std::fprintf(io.err, "cronledger report: %s\n", report.status().ToString().c_str());
    return report.status().code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
  }
  const model::Json j = audit::EncodeReport(*report);
  std::vector<model::Json> items(j["items"].begin(), j["items"].end());
  PrintItems(io.out, *format, audit::AdherenceColumns(), items, {{"totals", j["totals"]}});
  if (*format == OutputFormat::kTable) {
    const model::Json& t = j["totals"];
    std::string divergences;
    for (const std::string& kind : audit::DivergenceKinds()) {
      divergences += (divergences.empty() ? " " : ", ") + kind + " " +
                     t["divergencesByKind"].value(kind, model::Json(0)).dump();
    }
    std::fprintf(io.out,
                 "window %s .. %s: expected %s, created %s, skipped %s, unaccounted %s, "
                 "pending %s, adherence %s%%; divergences%s\n",
                 j["since"].get<std::string>().c_str(), j["until"].get<std::string>().c_str(),
                 t["expected"].dump().c_str(), t["created"].dump().c_str(),
                 t["skipped"].dump().c_str(), t["unaccounted"].dump().c_str(),
                 t["pending"].dump().c_str(), t["adherencePercent"].dump().c_str(),
                 divergences.c_str());
  }
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("report", "schedule adherence report per CronJob", Run, kUsage);

}  // namespace cronledger::app
