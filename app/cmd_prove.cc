// `cronledger prove --decision SEQ --checkpoint FILE [--data-dir DIR] [--source ID]`: the
// inclusion proof of one decision in the trail a saved checkpoint names (replay/trail.h), which
// `cronledger verify-proof` checks with the checkpoint alone.
#include <cstdio>
#include <cstdlib>

#include "app/command.h"
#include "app/flags.h"
#include "app/support_audit.h"
#include "app/support_audit_store.h"
#include "app/support_replay.h"
#include "replay/trail.h"
#include "store/ledger.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger prove --decision SEQ --checkpoint FILE [--data-dir DIR] [--source ID]\n"
    "Prints the proof (JSON) that decision SEQ is in the trail the checkpoint (the JSON of\n"
    "`cronledger checkpoint`) names: its record and the Merkle audit path to the checkpoint's\n"
    "tree head. `cronledger verify-proof` checks it with the checkpoint alone, without the store.\n"
    "--source: on an audit store (cronledger audit-store), the source whose copy holds it.\n";

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("decision").Value("checkpoint").Value("source");
  Status parsed = flags.Parse(args);
  uint64_t seq = 0;
  if (parsed.ok() && (!flags.Has("decision") || !flags.Has("checkpoint"))) {
    parsed = Status::InvalidArgument("--decision and --checkpoint are required");
  } else if (parsed.ok()) {
    const std::string v = *flags.Get("decision");
    char* end = nullptr;
    seq = std::strtoull(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || seq == 0 || v[0] == '-') {
      parsed = Status::InvalidArgument("--decision: want a decision's seq, got \"" + v + "\"");
    }
  }
  if (parsed.ok() && !flags.positionals().empty()) {
    parsed = Status::InvalidArgument("unexpected argument " + flags.positionals()[0]);
  }
  const std::string dir = flags.GetOr("data-dir", "./data");
  const bool merged = parsed.ok() && audit_store::IsAuditStoreDir(dir);
  if (parsed.ok() && merged != flags.Has("source")) {
    parsed = Status::InvalidArgument(merged ? "on an audit store, --source names the copy"
                                            : "--source is for an audit store");
  }
  auto checkpoint = parsed.ok() ? replay_cli::ReadCheckpointFile(*flags.Get("checkpoint"))
                                : Result<replay::trail::Checkpoint>(parsed);
  if (!checkpoint.ok()) {
    std::fprintf(io.err, "cronledger prove: %s\n%s", checkpoint.status().message().c_str(),
                 parsed.ok() ? "" : kUsage);
    return kExitUsage;
  }
  const std::optional<std::string> source =
      merged ? flags.Get("source") : std::optional<std::string>();
  const replay::trail::ChainHead* chain = nullptr;
  for (const auto& c : checkpoint->chains) {
    if (c.log == store::trail::kDecisionsLog && c.copy_of == source) chain = &c;
  }
  if (chain == nullptr) {
    std::fprintf(io.err, "cronledger prove: the checkpoint has no chain of decisions%s\n",
                 source ? (" of source " + *source).c_str() : " of one ledger (no copyOf)");
    return kExitUsage;
  }
  // Read-only: works while run, ingest or audit-store holds the store.
  auto ledger =
      OpenLedgerForAudit(source ? audit_store::CopyDir(dir, *source) : dir, Duration::max());
  auto proof = ledger.ok() ? replay::trail::ProveDecision(**ledger, *chain, seq)
                           : Result<replay::trail::InclusionProof>(ledger.status());
  if (!proof.ok()) {
    std::fprintf(io.err, "cronledger prove: %s\n", proof.status().ToString().c_str());
    return kExitFailure;
  }
  std::fprintf(io.out, "%s\n", replay::trail::ProofJson(*proof).dump(2).c_str());
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("prove", "print the inclusion proof of one decision against a checkpoint", Run,
                    kUsage);

}  // namespace cronledger::app
