#pragma once

// The controller's recorded passes replayed by the replay engine (replay/engine.h), the one that
// `cronledger replay --verify` runs: what the controller's tests check their ledgers with.

#include <string>

#include "model/result.h"
#include "replay/engine.h"
#include "replay/source.h"
#include "store/ledger.h"

namespace cronledger::controller::testing {

// Every pass of the ledger replayed; `divergences` is 0 when the derived decision stream and
// every pass's accounting state are the recorded ones byte for byte.
inline Result<replay::ReplayResult> ReplayLedger(store::Ledger& ledger) {
  replay::LedgerSource source(ledger);
  return replay::Replay(source, replay::ReplayOptions{});
}

// The first problem the replay found, for a failure message ("" when none).
inline std::string FirstProblem(const replay::ReplayResult& r) {
  if (r.first_divergence) return r.first_divergence->what;
  for (const replay::PassSummary& p : r.passes) {
    if (!p.problem.empty()) return "tick " + std::to_string(p.tick_seq) + ": " + p.problem;
  }
  return "";
}

}  // namespace cronledger::controller::testing
