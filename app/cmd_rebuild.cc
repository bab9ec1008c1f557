// `cronledger rebuild`: recomputes the view from the input log and the audit index from the
// decision log, and compares them with the stored ones (both are caches of the logs).
#include <cstdio>

#include "app/command.h"
#include "app/flags.h"
#include "app/output.h"
#include "store/ledger.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger rebuild [--data-dir DIR] [--repair] [-o table|json|yaml|csv]\n"
    "Lists every difference between the stored view and audit index and a rebuild from the\n"
    "logs; exits 1 when there is one (after replacing what differs with the rebuild when\n"
    "--repair is given; a repair also rewrites index entries of an older layout).\n";

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
               "rebuild: folded %llu watch events into %llu view entries; checked the %llu audit "
               "index entries of %llu decisions (%llu of an older layout%s); %zu difference(s)%s\n",
               static_cast<unsigned long long>(report->records_folded),
               static_cast<unsigned long long>(report->view_entries),
               static_cast<unsigned long long>(report->index_entries),
               static_cast<unsigned long long>(report->decisions_indexed),
               static_cast<unsigned long long>(report->index_older_layout),
               report->repaired && report->index_older_layout != 0 ? ", rewritten" : "",
               report->differences.size(), report->repaired ? ", repaired" : "");
  return report->differences.empty() || report->repaired ? kExitOk : kExitFailure;
}

}  // namespace

CL_REGISTER_COMMAND("rebuild",
                    "recompute the view and the audit index from the logs and verify them", Run,
                    kUsage);

}  // namespace cronledger::app
