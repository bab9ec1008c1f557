#include "app/support_ledger.h"

#include <cstddef>
#include <string>

namespace cronledger::app {
namespace {

constexpr unsigned kMaxMib = 1u << 20;  // 1 TiB: anything larger is a typo

// A whole number of MiB in [min, kMaxMib], as bytes.
Result<size_t> Mebibytes(const Flags& flags, const char* name, unsigned min) {
  const std::string text = *flags.Get(name);
  const std::string range = "a whole number of MiB from " + std::to_string(min) + " to " +
                            std::to_string(kMaxMib) + ", not \"" + text + "\"";
  if (text.empty() || text.size() > 7 ||
      text.find_first_not_of("0123456789") != std::string::npos) {
    return Status::InvalidArgument(std::string("--") + name + ": " + range);
  }
  const unsigned long mib = std::stoul(text);
  if (mib < min || mib > kMaxMib) {
    return Status::InvalidArgument(std::string("--") + name + ": " + range);
  }
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
