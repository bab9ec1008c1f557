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

// Opens an existing ledger for reading. store::Ledger has no read-only or secondary open, so
// this is a normal open (it takes RocksDB's lock: a running controller on the same directory
// makes it fail) that the audit commands never write to (docs/audit.md "Read-only").
Result<std::unique_ptr<store::Ledger>> OpenLedgerForAudit(const std::string& data_dir);

// An optional RFC 3339 flag; InvalidArgument names the flag.
Result<std::optional<Time>> TimeFlag(const Flags& flags, const std::string& name);

}  // namespace cronledger::app
