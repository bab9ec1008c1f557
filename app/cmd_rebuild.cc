// `cronledger rebuild`: recomputes the view from the input log and compares it with the stored
// view (rule 1: the view is a cache of the log).
#include <cstdio>

#include "app/command.h"
#include "app/flags.h"
#include "app/output.h"
#include "store/ledger.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger rebuild [--data-dir DIR] [--repair] [-o table|json|yaml|csv]\n"
    "Lists every difference between the stored view and a rebuild from the log; exits 1 when\n"
    "there is one (after replacing the view with the rebuild when --repair is given).\n";

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("data-dir").Value("output", "o").Switch("repair");
  Status parsed = flags.Parse(args);
  auto format = ParseOutputFormat(flags.GetOr("output", "table"));
  if (!parsed.ok() || !format.ok()) {
    std::fprintf(io.err, "cronledger rebuild: %s\n%s",
                 (parsed.ok() ? format.status() : parsed).message().c_str(), kUsage);
    return kExitUsage;
  }
  store::LedgerOptions lo;
  lo.path = flags.GetOr("data-dir", "./data");
  lo.create_if_missing = false;
  auto ledger = store::Ledger::Open(lo);
  if (!ledger.ok()) {
    std::fprintf(io.err, "cronledger rebuild: %s\n", ledger.status().ToString().c_str());
    return kExitFailure;
  }
  auto report = (*ledger)->Rebuild(flags.Has("repair"));
  if (!report.ok()) {
    std::fprintf(io.err, "cronledger rebuild: %s\n", report.status().ToString().c_str());
    return kExitFailure;
  }
  std::vector<model::Json> items;
  for (const auto& d : report->differences) {
    items.push_back({{"key", d.key}, {"stored", d.stored}, {"rebuilt", d.rebuilt}});
  }
  PrintItems(io.out, *format, {"key", "stored", "rebuilt"}, items);
  std::fprintf(io.err,
               "rebuild: folded %llu watch events into %llu view entries; %zu difference(s)%s\n",
               static_cast<unsigned long long>(report->records_folded),
               static_cast<unsigned long long>(report->view_entries), report->differences.size(),
               report->repaired ? ", view repaired" : "");
  return report->differences.empty() || report->repaired ? kExitOk : kExitFailure;
}

}  // namespace

CL_REGISTER_COMMAND("rebuild", "recompute the view from the log and verify the stored view", Run,
                    kUsage);

}  // namespace cronledger::app
