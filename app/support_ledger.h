#pragma once

// The ledger's memory flags, shared by the commands that run the controller (`run`, `simulate`):
//   --ledger-write-buffer-mib N  all column families' memtables together (RocksDB's
//                                WriteBufferManager); 0 = RocksDB's per-family defaults
//                                (64 MiB, up to two, per column family: up to ~1.1 GiB)
//   --ledger-block-cache-mib N   the block cache shared by every column family (default 64)
// docs/run.md "Memory".

#include "app/flags.h"
#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::app {

void DeclareLedgerMemoryFlags(Flags& flags);

// Sets options.write_buffer_budget_bytes / block_cache_bytes from the flags that were given;
// InvalidArgument naming the flag for anything but a whole number in range.
Status ApplyLedgerMemoryFlags(const Flags& flags, store::LedgerOptions& options);

}  // namespace cronledger::app
