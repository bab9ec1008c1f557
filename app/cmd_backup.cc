// `cronledger backup --to DIR`: a consistent RocksDB checkpoint of a ledger, safe while it runs:
// when `run` or `ingest` holds the ledger, that process writes it (app/support_admin.h).
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "app/command.h"
#include "app/flags.h"
#include "app/support_admin.h"
#include "store/ledger.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger backup --to DIR [--data-dir DIR]\n"
    "Writes a checkpoint (hard links where possible) that opens as a ledger; DIR must not exist.\n"
    "While `run` or `ingest` holds the ledger, that process writes the checkpoint (through\n"
    "DIR/admin.sock of the data directory), so DIR is a path as that process sees it.\n";

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("to");
  Status parsed = flags.Parse(args);
  if (!parsed.ok() || !flags.Has("to")) {
    std::fprintf(io.err, "cronledger backup: %s\n%s",
                 parsed.ok() ? "--to is required" : parsed.message().c_str(), kUsage);
    return kExitUsage;
  }
  const std::string data_dir = flags.GetOr("data-dir", "./data");
  std::error_code ec;
  const std::string to = std::filesystem::absolute(*flags.Get("to"), ec).string();
  const model::Json request = {{"op", "backup"}, {"to", ec ? *flags.Get("to") : to}};
  // The process holding the ledger, if any, writes the checkpoint; else this one opens it.
  auto answer = CallAdminSocket(AdminSocketPath(data_dir), request, std::chrono::minutes(30));
  const bool by_holder = answer.ok();
  if (!answer.ok() && answer.status().code() != Status::Code::kNotFound) {
    std::fprintf(io.err, "cronledger backup: %s\n", answer.status().ToString().c_str());
    return kExitFailure;
  }
  if (!by_holder) {
    store::LedgerOptions lo;
    lo.path = data_dir;
    lo.create_if_missing = false;
    auto ledger = store::Ledger::Open(lo);
    if (!ledger.ok()) {
      std::fprintf(io.err, "cronledger backup: %s\n", ledger.status().ToString().c_str());
      return kExitFailure;
    }
    answer = RunLedgerMaintenance(**ledger, request, Time());
  }
  if (!model::BoolOr(*answer, "ok")) {
    std::fprintf(io.err, "cronledger backup: %s\n",
                 model::StringOr(*answer, "error", "failed").c_str());
    return kExitFailure;
  }
  if (by_holder) {
    std::fprintf(io.err, "cronledger backup: written by the process that holds %s\n",
                 data_dir.c_str());
  }
  std::fprintf(io.out,
               "backup written to %s (inputs through seq %llu, decisions through seq %llu)\n",
               flags.Get("to")->c_str(),
               static_cast<unsigned long long>(model::UintOr(*answer, "lastInputSeq")),
               static_cast<unsigned long long>(model::UintOr(*answer, "lastDecisionSeq")));
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("backup", "write a consistent checkpoint of the ledger", Run, kUsage);

}  // namespace cronledger::app
