#include "app/support_ledger.h"

#include <cstddef>
#include <string>

namespace cronledger::app {
namespace {

constexpr unsigned kMaxMib = 1u << 20;  // 1 TiB: anything larger is a typo

// A whole number of MiB in [min, kMaxMib], as bytes.
Result<size_t> Mebibytes(const Flags& flags, const char* name, unsigned min) {
  CL_ASSIGN_OR_RETURN(const uint64_t mib, flags.Uint(name, min, kMaxMib, 0, "MiB"));
  return static_cast<size_t>(mib) << 20;
}

}  // namespace

void DeclareLedgerMemoryFlags(Flags& flags) {
  flags.Value("ledger-write-buffer-mib").Value("ledger-block-cache-mib");
}

Status ApplyLedgerMemoryFlags(const Flags& flags, store::LedgerOptions& options) {
  if (flags.Has("ledger-write-buffer-mib")) {
    CL_ASSIGN_OR_RETURN(options.write_buffer_budget_bytes,
                        Mebibytes(flags, "ledger-write-buffer-mib", 0));
  }
  if (flags.Has("ledger-block-cache-mib")) {
    CL_ASSIGN_OR_RETURN(options.block_cache_bytes, Mebibytes(flags, "ledger-block-cache-mib", 1));
  }
  return Status::Ok();
}

}  // namespace cronledger::app
