// `cronledger divergences`: what the shadow auditor recorded where the cluster's own controller did
// not do what the upstream semantics call for (MissedRun, LateRun, UnexpectedJob; docs/run.md
// "Shadow mode"), filtered by CronJob, namespace, window and kind.
#include <cstdio>
#include <limits>
#include <memory>
#include <utility>

#include "app/command.h"
#include "app/flags.h"
#include "app/output.h"
#include "app/support_audit.h"
#include "app/support_audit_store.h"
#include "app/system_clock.h"
#include "audit/divergences.h"
#include "audit/query.h"
#include "audit/sources.h"
#include "model/time.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger divergences [--cronjob NS/NAME] [-n NS] [--since T] [--until T] [--kind K]\n"
    "                              [--limit N] [--data-dir DIR] [-o table|json|yaml|csv]\n"
    "Lists the divergences the shadow auditor (run in shadow mode) recorded, oldest first.\n"
    "K is MissedRun, LateRun or UnexpectedJob. -o json prints {\"items\": [...]}, each item\n"
    "{seq, time, kind, namespace, cronJob, job, detail}.\n"
    "T: an RFC 3339 time, or a duration before now like kubectl's (--since 1h).\n"
    "On an audit store (cronledger audit-store): every source's divergences, each with its\n"
    "source.\n";

const std::vector<std::string>& Columns() {
  static const std::vector<std::string> columns = {"time", "kind",          "namespace",  "cronJob",
                                                   "job",  "scheduledTime", "skewSeconds"};
  return columns;
}

// The flat row of table and csv output: the detail members every kind may carry, blank if absent.
model::Json Row(const audit::Divergence& d) {
  model::Json row = {{"time", FormatRfc3339(d.time)},
                     {"kind", d.kind},
                     {"namespace", d.namespace_},
                     {"cronJob", d.cron_job},
                     {"job", d.job},
                     {"scheduledTime", ""},
                     {"skewSeconds", ""}};
  if (auto it = d.detail.find("scheduledTime"); it != d.detail.end()) row["scheduledTime"] = *it;
  if (auto it = d.detail.find("skewSeconds"); it != d.detail.end()) row["skewSeconds"] = *it;
  return row;
}

int Fail(const CommandIo& io, const Status& s, int code) {
  std::fprintf(io.err, "cronledger divergences: %s\n", s.message().c_str());
  if (code == kExitUsage) std::fputs(kUsage, io.err);
  return code;
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("cronjob").Value("namespace", "n").Value("since").Value("until");
  flags.Value("kind").Value("limit").Value("output", "o");
  Status s = flags.Parse(args);
  if (s.ok() && !flags.positionals().empty()) s = Status::InvalidArgument("unexpected argument");
  if (!s.ok()) return Fail(io, s, kExitUsage);

  audit::DivergenceQuery q;
  if (auto cj = flags.Get("cronjob")) {
    auto key = audit::ParseCronJobKey(*cj);
    if (!key.ok()) return Fail(io, key.status(), kExitUsage);
    q.namespace_ = key->first;
    q.cron_job = key->second;
    if (flags.Has("namespace") && *flags.Get("namespace") != key->first) {
      return Fail(io, Status::InvalidArgument("--cronjob and -n name different namespaces"),
                  kExitUsage);
    }
  } else {
    q.namespace_ = flags.GetOr("namespace", "");
  }
  q.kind = flags.GetOr("kind", "");
  if (!q.kind.empty()) {
    if (Status k = audit::CheckDivergenceKind(q.kind); !k.ok()) {
      return Fail(io, k.WithContext("--kind"), kExitUsage);
    }
  }
  const Time now = RealClock().Now();
  auto since = TimeFlag(flags, "since", now);
  if (!since.ok()) return Fail(io, since.status(), kExitUsage);
  q.since = *since;
  auto until = TimeFlag(flags, "until", now);
  if (!until.ok()) return Fail(io, until.status(), kExitUsage);
  q.until = *until;
  if (flags.Has("limit")) {
    auto limit = flags.Uint("limit", 1, std::numeric_limits<uint32_t>::max(), 0);
    if (!limit.ok()) return Fail(io, limit.status(), kExitUsage);
    q.limit = *limit;
  }
  Result<OutputFormat> format = ParseOutputFormat(flags.GetOr("output", "table"));
  if (!format.ok()) return Fail(io, format.status(), kExitUsage);

  // One ledger, or every source of an audit store (each item then names its source).
  auto read = audit_store::OpenReadSources(flags.GetOr("data-dir", "./data"), kOneShotRefresh);
  if (!read.ok()) return Fail(io, read.status(), kExitFailure);
  const bool merged = read->merged;
  auto all = audit::ListMergedDivergences(read->sources, q);
  if (!all.ok()) {
    const bool usage = all.status().code() == Status::Code::kInvalidArgument;
    return Fail(io, all.status(), usage ? kExitUsage : kExitFailure);
  }

  const bool records = *format == OutputFormat::kJson || *format == OutputFormat::kYaml;
  std::vector<model::Json> items;
  for (const audit::SourcedDivergence& f : *all) {
    items.push_back(records ? audit::DivergenceJson(f.divergence) : Row(f.divergence));
    if (merged) items.back()["source"] = f.source;
  }
  std::vector<std::string> columns = Columns();
  if (merged) columns.push_back("source");
  PrintItems(io.out, *format, columns, items);
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("divergences", "list the shadow auditor's divergences", Run, kUsage);

}  // namespace cronledger::app
