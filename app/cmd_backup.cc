// `cronledger backup --to DIR`: a consistent RocksDB checkpoint of a ledger, safe while it runs.
#include <cstdio>

#include "app/command.h"
#include "app/flags.h"
#include "store/ledger.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger backup --to DIR [--data-dir DIR]\n"
    "Writes a checkpoint (hard links where possible) that opens as a ledger; DIR must not exist.\n";

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("to");
  Status parsed = flags.Parse(args);
  if (!parsed.ok() || !flags.Has("to")) {
    std::fprintf(io.err, "cronledger backup: %s\n%s",
                 parsed.ok() ? "--to is required" : parsed.message().c_str(), kUsage);
    return kExitUsage;
  }
  store::LedgerOptions lo;
  lo.path = flags.GetOr("data-dir", "./data");
  lo.create_if_missing = false;
  auto ledger = store::Ledger::Open(lo);
  if (!ledger.ok()) {
    std::fprintf(io.err, "cronledger backup: %s\n", ledger.status().ToString().c_str());
    return kExitFailure;
  }
  auto meta = (*ledger)->Meta();
  Status s = (*ledger)->Backup(*flags.Get("to"));
  if (!s.ok() || !meta.ok()) {
    std::fprintf(io.err, "cronledger backup: %s\n",
                 (s.ok() ? meta.status() : s).ToString().c_str());
    return kExitFailure;
  }
  std::fprintf(io.out,
               "backup written to %s (inputs through seq %llu, decisions through seq %llu)\n",
               flags.Get("to")->c_str(), static_cast<unsigned long long>(meta->last_input_seq),
               static_cast<unsigned long long>(meta->last_decision_seq));
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("backup", "write a consistent checkpoint of the ledger", Run, kUsage);

}  // namespace cronledger::app
