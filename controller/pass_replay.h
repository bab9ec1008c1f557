#pragma once

// Replays the controller's reconcile passes from the ledger (docs/design.md rule 4): for every pass
// that reached its PassEnd, rebuilds what the pass read — the CronJob and its Jobs as of the
// pass's view_seq, its Tick's `now` and trigger, the configuration then in effect, the accounting
// state of the previous completed pass of the same CronJob — feeds the recorded call outcomes to
// reconciler::Decide and compares the decisions and accounting it returns with the recorded ones,
// byte for byte. Interrupted passes (a Tick without a PassEnd) are reported, not replayed: they
// committed no decision (docs/controller.md).
//
// Cost: two scans of the input log and one of the decision log; memory holds the raw bytes of the
// objects live in the view. Meant for verification and tests, not for the hot path.

#include <cstdint>
#include <string>
#include <vector>

#include "model/decision.h"
#include "model/inputs.h"
#include "model/result.h"
#include "model/timezone.h"
#include "store/ledger.h"

namespace cronledger::controller {

struct ReplayedPass {
  uint64_t tick_seq = 0;
  model::Tick tick;
  std::vector<model::Decision> recorded;  // from the decision log, cause.tick_seq == tick_seq
  std::vector<model::Decision> replayed;  // from Decide, with seq and cause filled like the pass
  std::string mismatch;                   // empty when the replay reproduced the pass exactly
};

struct ReplayReport {
  std::vector<ReplayedPass> passes;         // completed passes, in log order
  std::vector<uint64_t> interrupted_ticks;  // Ticks without a PassEnd
  std::vector<uint64_t> dangling_intents;   // ActionIntents without an ActionOutcome
  size_t mismatches = 0;
};

// Corruption when the log is inconsistent (an outcome without its intent, a PassEnd without its
// Tick, records that cannot be decoded). `tzdb` must be the database the passes ran with: its
// Local() must be the zone the recorded "localTimeZone" names (FailedPrecondition otherwise).
Result<ReplayReport> ReplayPasses(store::Ledger& ledger, const model::TimeZoneDb& tzdb);

}  // namespace cronledger::controller
