#pragma once

// The CronJobs the view holds, each decoded on its own: one stored object that cannot be decoded
// becomes a row with its error instead of failing a query over many CronJobs (docs/audit.md
// "Objects that cannot be read").

#include <optional>
#include <string>
#include <vector>

#include "model/objects.h"
#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::audit {

struct ViewCronJob {
  std::string namespace_;
  std::string name;
  std::string uid;                         // from the view's entry, also when decoding failed
  std::optional<model::CronJob> cron_job;  // nullopt when the stored bytes do not decode
  std::string error;                       // why not, when cron_job is nullopt
};

// Every CronJob in the view, ordered by (namespace, name). A CronJob whose stored bytes do not
// parse or decode is an item with `error` (InvalidArgument from the decoder); one deleted between
// the listing and its read is left out; any other error of the ledger fails the call.
Result<std::vector<ViewCronJob>> ListViewCronJobs(store::Ledger& ledger);

// One CronJob of the view: NotFound when absent, an item with `error` when it does not decode.
Result<ViewCronJob> GetViewCronJob(store::Ledger& ledger, const std::string& ns,
                                   const std::string& name);

}  // namespace cronledger::audit
