// `cronledger checkpoint [--data-dir DIR] [-o table|json]`: brings the audit trail's hash chains
// up to date and prints their heads (replay/trail.h, docs/audit.md "Prove the trail was not
// edited"). An auditor saves the JSON and later runs `cronledger verify-trail` against it.
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
    "when the trail starts).\n";

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
  store::LedgerOptions lo;
  lo.path = flags.GetOr("data-dir", "./data");
  lo.create_if_missing = false;
  if (Status s = audit_store::CheckNotAnAuditStore(lo.path); !s.ok()) {
    std::fprintf(io.err, "cronledger checkpoint: %s\n", s.ToString().c_str());
    return kExitFailure;
  }
  auto ledger = store::Ledger::Open(lo);
  if (!ledger.ok() && ledger.status().code() == Status::Code::kIoError) {
    // The writer holds the lock: chain the new records without keeping them.
    lo.read_only = true;
    lo.read_only_refresh = Duration::max();
    options.persist = false;
    ledger = store::Ledger::Open(lo);
  }
  auto checkpoint = ledger.ok() ? replay::trail::UpdateTrail(**ledger, options, RealClock().Now())
                                : Result<replay::trail::Checkpoint>(ledger.status());
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
    PrintItems(io.out, OutputFormat::kTable,
               {"source", "log", "firstSeq", "lastSeq", "records", "head"}, rows);
  }
  if (!options.persist) {
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
