#include "audit/view_cronjobs.h"

#include <algorithm>
#include <tuple>
#include <utility>

namespace cronledger::audit {
namespace {

// A decode failure is the object's own (InvalidArgument); anything else is the ledger's.
Result<ViewCronJob> Read(store::Ledger& ledger, const std::string& ns, const std::string& name,
                         const std::string& uid) {
  ViewCronJob v{ns, name, uid, std::nullopt, ""};
  Result<model::CronJob> cj = ledger.GetCronJob(ns, name);
  if (cj.ok()) {
    if (v.uid.empty()) v.uid = cj->metadata.uid;
    v.cron_job = std::move(*cj);
    return v;
  }
  if (cj.status().code() != Status::Code::kInvalidArgument) return cj.status();
  v.error = cj.status().message();
  return v;
}

}  // namespace

Result<std::vector<ViewCronJob>> ListViewCronJobs(store::Ledger& ledger) {
  CL_ASSIGN_OR_RETURN(std::vector<store::ObjectEntry> entries, ledger.ListCronJobEntries());
  std::vector<ViewCronJob> out;
  out.reserve(entries.size());
  for (const store::ObjectEntry& e : entries) {
    Result<ViewCronJob> v = Read(ledger, e.namespace_, e.name, e.uid);
    if (v.status().IsNotFound()) continue;  // deleted since the listing
    if (!v.ok()) return v.status();
    out.push_back(std::move(*v));
  }
  std::sort(out.begin(), out.end(), [](const ViewCronJob& a, const ViewCronJob& b) {
    return std::tie(a.namespace_, a.name) < std::tie(b.namespace_, b.name);
  });
  return out;
}

Result<ViewCronJob> GetViewCronJob(store::Ledger& ledger, const std::string& ns,
                                   const std::string& name) {
  return Read(ledger, ns, name, "");
}

}  // namespace cronledger::audit
