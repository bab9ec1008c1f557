// `cronledger audit`: decision records by CronJob, namespace, window, action and reason, served
// from the store's audit indexes (docs/audit.md "Queries").
#include <cstdio>
#include <limits>

#include "app/command.h"
#include "app/flags.h"
#include "app/output.h"
#include "app/support_audit.h"
#include "app/support_audit_store.h"
#include "app/system_clock.h"
#include "audit/encode.h"
#include "audit/query.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger audit [--cronjob NS/NAME] [-n NS] [--since T] [--until T] [--action A]\n"
    "                        [--reason R] [--limit N] [--continue TOKEN] [--count]\n"
    "                        [--data-dir DIR] [-o table|json|yaml|csv]\n"
    "Lists decision records (oldest first) from the audit indexes. --count prints counts by\n"
    "action and reason instead. With --limit, the token for the next page is printed on stderr.\n"
    "T: an RFC 3339 time, or a duration before now like kubectl's (--since 1h).\n"
    "On an audit store (cronledger audit-store) it lists every source's records, each with its\n"
    "source.\n";

Status BuildQuery(const Flags& flags, Time now, audit::DecisionQuery* q) {
  if (auto cj = flags.Get("cronjob")) {
    CL_ASSIGN_OR_RETURN(auto key, audit::ParseCronJobKey(*cj));
    q->cron_job_namespace = key.first;
    q->cron_job_name = key.second;
    if (flags.Has("namespace") && *flags.Get("namespace") != key.first) {
      return Status::InvalidArgument("--cronjob and -n name different namespaces");
    }
  }
  q->namespace_ = flags.GetOr("namespace", "");
  CL_ASSIGN_OR_RETURN(q->since, TimeFlag(flags, "since", now));
  CL_ASSIGN_OR_RETURN(q->until, TimeFlag(flags, "until", now));
  if (auto a = flags.Get("action")) {
    auto action = model::ParseDecisionAction(*a);
    if (!action.ok()) return Status::InvalidArgument("--action: unknown action \"" + *a + "\"");
    q->action = *action;
  }
  q->reason = flags.GetOr("reason", "");
  if (flags.Has("limit")) {
    CL_ASSIGN_OR_RETURN(q->limit, flags.Uint("limit", 1, std::numeric_limits<uint32_t>::max(), 0));
  }
  q->continue_token = flags.GetOr("continue", "");
  return Status::Ok();
}

void PrintCounts(const std::vector<audit::DecisionCount>& counts, OutputFormat format,
                 const CommandIo& io) {
  std::vector<model::Json> items;
  for (const auto& c : counts) {
    items.push_back({{"action", c.action}, {"reason", c.reason}, {"count", c.count}});
  }
  PrintItems(io.out, format, {"action", "reason", "count"}, items);
}

int Fail(const Status& s, const CommandIo& io) {
  std::fprintf(io.err, "cronledger audit: %s\n", s.ToString().c_str());
  return s.code() == Status::Code::kInvalidArgument ? kExitUsage : kExitFailure;
}

// An audit store (`cronledger audit-store`): every source's records, each with its `source`.
int RunMerged(const std::string& data_dir, const Flags& flags, audit::DecisionQuery q,
              OutputFormat format, const CommandIo& io) {
  auto read = audit_store::OpenReadSources(data_dir, kOneShotRefresh);
  if (!read.ok()) {
    std::fprintf(io.err, "cronledger audit: %s\n", read.status().ToString().c_str());
    return kExitFailure;
  }
  const std::vector<audit::SourceLedger>& sources = read->sources;
  if (flags.Has("count")) {
    auto counts = audit::CountMergedDecisions(sources, q);
    if (!counts.ok()) return Fail(counts.status(), io);
    PrintCounts(*counts, format, io);
    return kExitOk;
  }
  const bool records = format == OutputFormat::kJson || format == OutputFormat::kYaml;
  q.summary = !records;
  auto page = audit::QueryMergedDecisions(sources, q);
  if (!page.ok()) return Fail(page.status(), io);
  std::vector<model::Json> items;
  items.reserve(page->items.size());
  for (size_t i = 0; i < page->items.size(); ++i) {
    if (records) {
      items.push_back(audit::EncodeSourcedDecision(page->items[i], page->sources[i]));
    } else {
      items.push_back(audit::DecisionRow(page->items[i]));
      items.back()["source"] = page->sources[i];
    }
  }
  std::vector<std::string> columns = audit::DecisionRowColumns();
  columns.push_back("source");
  PrintItems(io.out, format, columns, items);
  if (!page->continue_token.empty()) {
    std::fprintf(io.err, "more results: --continue %s\n", page->continue_token.c_str());
  }
  return kExitOk;
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("cronjob").Value("namespace", "n").Value("since").Value("until");
  flags.Value("action").Value("reason").Value("limit").Value("continue").Switch("count");
  flags.Value("output", "o");
  Status s = flags.Parse(args);
  audit::DecisionQuery q;
  if (s.ok() && !flags.positionals().empty()) s = Status::InvalidArgument("unexpected argument");
  if (s.ok()) s = BuildQuery(flags, RealClock().Now(), &q);
  Result<OutputFormat> format = ParseOutputFormat(flags.GetOr("output", "table"));
  if (s.ok() && !format.ok()) s = format.status();
  if (!s.ok()) {
    std::fprintf(io.err, "cronledger audit: %s\n%s", s.message().c_str(), kUsage);
    return kExitUsage;
  }
  const std::string data_dir = flags.GetOr("data-dir", "./data");
  if (audit_store::IsAuditStoreDir(data_dir)) return RunMerged(data_dir, flags, q, *format, io);
  auto ledger = OpenLedgerForAudit(data_dir, kOneShotRefresh);
  if (!ledger.ok()) {
    std::fprintf(io.err, "cronledger audit: %s\n", ledger.status().ToString().c_str());
    return kExitFailure;
  }
  std::vector<model::Json> items;
  if (flags.Has("count")) {
    auto counts = audit::CountDecisions(**ledger, q);
    if (!counts.ok()) return Fail(counts.status(), io);
    PrintCounts(*counts, *format, io);
    return kExitOk;
  }
  // json and yaml carry the decision records (docs/design.md §4); table and csv a flat row of each,
  // which needs no Job object or status (served from the CronJob index entries alone).
  const bool records = *format == OutputFormat::kJson || *format == OutputFormat::kYaml;
  q.summary = !records;
  auto page = audit::QueryDecisions(**ledger, q);
  if (!page.ok()) return Fail(page.status(), io);
  if (*format == OutputFormat::kJson) {
    // The records' canonical bytes as they are: what PrintItems prints of their trees.
    std::string text = "{\"items\":";
    model::AppendCanonicalDecisionArray(page->items, &text);
    text += "}\n";
    std::fwrite(text.data(), 1, text.size(), io.out);
  } else {
    for (const model::Decision& d : page->items) {
      items.push_back(records ? model::EncodeDecision(d) : audit::DecisionRow(d));
    }
    PrintItems(io.out, *format, audit::DecisionRowColumns(), items);
  }
  if (!page->continue_token.empty()) {
    std::fprintf(io.err, "more results: --continue %s\n", page->continue_token.c_str());
  }
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("audit", "query decision records from the audit indexes", Run, kUsage);

}  // namespace cronledger::app
