// Helpers of the audit commands (app/support_audit.h).
#include "app/support_audit.h"

#include <filesystem>

#include "app/support_audit_store.h"

namespace cronledger::app {

Result<std::unique_ptr<store::Ledger>> OpenLedgerForAudit(const std::string& data_dir,
                                                          Duration refresh) {
  std::error_code ec;
  if (!std::filesystem::is_directory(data_dir, ec)) {
    return Status::NotFound("no ledger at " + data_dir);
  }
  CL_RETURN_IF_ERROR(audit_store::CheckNotAnAuditStore(data_dir));
  store::LedgerOptions o;
  o.path = data_dir;
  o.read_only = true;
  o.read_only_refresh = refresh;
  return store::Ledger::Open(o);
}

}  // namespace cronledger::app
