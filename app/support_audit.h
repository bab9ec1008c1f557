#pragma once

// Shared by `cronledger audit`, `report` and `serve` (app/cmd_audit.cc, cmd_report.cc,
// cmd_serve.cc).

#include <memory>
#include <optional>
#include <string>

#include "app/flags.h"
#include "model/result.h"
#include "model/time.h"
#include "store/ledger.h"

namespace cronledger::app {

// Opens an existing ledger read-only (store::LedgerOptions::read_only: a RocksDB secondary
// instance), so the audit commands work while `cronledger run` or `ingest` holds the store open
// (docs/audit.md "Read-only"). The ledger catches up with the writer on open, and before a read
// call once the last catch-up is older than `refresh`. NotFound when there is no ledger.
Result<std::unique_ptr<store::Ledger>> OpenLedgerForAudit(const std::string& data_dir,
                                                          Duration refresh);

// One-shot commands (audit, report) answer from the state at open: no catch-up afterwards.
inline constexpr Duration kOneShotRefresh = std::chrono::hours(24);

}  // namespace cronledger::app
