// `cronledger checkpoint [--data-dir DIR] [-o table|json]`: brings the audit trail's hash chains
// up to date and prints their heads (replay/trail.h, docs/audit.md "Prove the trail was not
// edited"). An auditor saves the JSON and later runs `cronledger verify-trail` against it. On an
// audit store, the heads of every source's copy, each chain naming the source (`copyOf`).
#include <cstdio>
#include <cstdlib>

#include "app/command.h"
#include "app/flags.h"
#include "app/output.h"
#include "app/support_audit_store.h"
#include "app/system_clock.h"
#include "replay/trail.h"
#include "store/ledger.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger checkpoint [--data-dir DIR] [--mark-every N] [-o table|json]\n"
    "Chains the records written since the last checkpoint (per source and log) and prints the\n"
    "chain heads; `-o json > FILE` is the checkpoint `cronledger verify-trail` reads.\n"
    "While another process holds the store (`run`, `ingest`) the new records are chained in\n"
    "memory only. --mark-every: an intermediate head after every N records (default 4096; fixed\n"
    "when the trail starts).\n"
    "On an audit store (cronledger audit-store): every source's copy, each chain with its\n"
    "\"copyOf\" (the audit store chains its copies after every round; this chains what came\n"
    "since in memory).\n";

// Every source's copy of the audit store `dir`, chained in memory from the heads the audit store
// keeps (it holds the copies), each chain labelled with its source.
Result<replay::trail::Checkpoint> AuditStoreCheckpoint(const std::string& dir,
                                                       replay::trail::UpdateOptions options) {
  CL_ASSIGN_OR_RETURN(auto copies, audit_store::OpenAuditStoreSources(dir, Duration::max()));
  options.persist = false;
  replay::trail::Checkpoint out;
  out.taken_at = RealClock().Now();
  for (auto& [source, ledger] : copies) {
    auto one = replay::trail::UpdateTrail(*ledger, options, out.taken_at);
    if (!one.ok()) {
      return Status::Internal("source " + source + ": " + one.status().ToString());
    }
    for (replay::trail::ChainHead& c : one->chains) {
      c.copy_of = source;
      out.chains.push_back(std::move(c));
    }
  }
  return out;
}

// The ledger at `dir`: its new records chained and kept, or, while another process holds it,
// chained in memory only (options->persist turns false).
Result<replay::trail::Checkpoint> LedgerCheckpoint(const std::string& dir,
                                                   replay::trail::UpdateOptions* options) {
  store::LedgerOptions lo;
  lo.path = dir;
  lo.create_if_missing = false;
  auto ledger = store::Ledger::Open(lo);
  if (!ledger.ok() && ledger.status().code() == Status::Code::kIoError) {
    lo.read_only = true;
    lo.read_only_refresh = Duration::max();
    options->persist = false;
    ledger = store::Ledger::Open(lo);
  }
  if (!ledger.ok()) return ledger.status();
  return replay::trail::UpdateTrail(**ledger, *options, RealClock().Now());
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("mark-every").Value("output", "o");
  Status parsed = flags.Parse(args);
  const std::string output = flags.GetOr("output", "table");
  replay::trail::UpdateOptions options;
  if (parsed.ok() && flags.Has("mark-every")) {
    const std::string v = *flags.Get("mark-every");
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || n == 0 || v[0] == '-') {
      parsed =
          Status::InvalidArgument("--mark-every: want a positive whole number, got \"" + v + "\"");
    }
    options.mark_every = n;
  }
  if (parsed.ok() && output != "table" && output != "json") {
    parsed = Status::InvalidArgument("-o: want table or json, got \"" + output + "\"");
  }
  if (parsed.ok() && !flags.positionals().empty()) {
    parsed = Status::InvalidArgument("unexpected argument " + flags.positionals()[0]);
  }
  if (!parsed.ok()) {
    std::fprintf(io.err, "cronledger checkpoint: %s\n%s", parsed.message().c_str(), kUsage);
    return kExitUsage;
  }
  const std::string dir = flags.GetOr("data-dir", "./data");
  const bool merged = audit_store::IsAuditStoreDir(dir);
  auto checkpoint = merged ? AuditStoreCheckpoint(dir, options) : LedgerCheckpoint(dir, &options);
  if (!checkpoint.ok()) {
    std::fprintf(io.err, "cronledger checkpoint: %s\n", checkpoint.status().ToString().c_str());
    return kExitFailure;
  }
  const model::Json j = replay::trail::CheckpointJson(*checkpoint);
  if (output == "json") {
    std::fprintf(io.out, "%s\n", j.dump(2).c_str());
  } else {
    std::vector<model::Json> rows;
    for (const model::Json& item : j["items"]) rows.push_back(item);
    std::vector<std::string> columns = {"source", "log", "firstSeq", "lastSeq", "records", "head"};
    if (merged) columns.insert(columns.begin(), "copyOf");
    PrintItems(io.out, OutputFormat::kTable, columns, rows);
  }
  if (!options.persist && !merged) {
    std::fprintf(io.err,
                 "checkpoint: the store is held by another process; the new records were chained "
                 "in memory only\n");
  }
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("checkpoint", "chain the ledger's new records and print the trail's heads", Run,
                    kUsage);

}  // namespace cronledger::app
