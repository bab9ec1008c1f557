#pragma once

// Schedule adherence (docs/audit.md "Adherence"): for each CronJob over a window, the fire times
// its recorded schedule expected, and what the ledger says happened to each of them.
//
// A fire time T is *expected* when the CronJob existed at T and T is an activation of the policy
// in force for T: the policy snapshot of the CronJob's first decision at or after T (the pass
// that considered T; upstream computes missed fire times with the spec it reads at that pass,
// docs/semantics.md §6), or of its last decision when none follows. Each expected T is
//   created      - a createJob record with scheduledTime T (skew = record time - T)
//   skipped      - a skipped record with scheduledTime T, or a range record covering T
//   pending      - no terminal record yet, and T is after the ledger horizon (the time of the last
//                  decision in the whole ledger: the controller has not looked at T yet), or the
//                  controller's accounting for the CronJob (its `state` blob) still holds T
//                  undecided: T is after its accounted_through (the pending slot of a Forbid or
//                  suspended CronJob, one waiting for its deadline, a pass not run yet). The
//                  latter are also counted as pendingHeld.
//   unaccounted  - no terminal record although the ledger went on past T and the controller's
//                  accounting (when there is one) does not hold T
// adherencePercent = 100 * (created + skipped) / (expected - pending);
// executedPercent  = 100 * created / (expected - pending); both null when the divisor is 0.
//
// Beside the fire times, each CronJob counts the shadow-mode divergences (audit/divergences.h)
// recorded for it in [since, until), by kind; the totals count every divergence of the window and
// namespace, those of CronJobs the report has no row for (deleted ones) included.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "audit/divergences.h"
#include "audit/query.h"
#include "model/json.h"
#include "model/result.h"
#include "model/time.h"
#include "model/timezone.h"
#include "store/ledger.h"

namespace cronledger::audit {

struct AdherenceOptions {
  Time since;  // fire times T with since <= T < until
  Time until;
  std::string namespace_;     // empty = every namespace
  std::string name;           // with namespace_: one CronJob (also one the view no longer holds)
  bool with_slots = false;    // fill CronJobAdherence::slots
  bool with_outcomes = true;  // read Job outcomes from the recorded Job watch events
  // Fire times enumerated per CronJob at most; more is InvalidArgument. Default: 2,000,000.
  size_t max_slots = 2'000'000;
};

struct Slot {
  Time scheduled;
  std::string status;  // "created" | "skipped" | "pending" | "unaccounted"
  std::string reason;  // skip reason; held pending: the reason the accounting holds it with
  std::string job;     // created: the Job name
  std::optional<Duration> skew;
  uint64_t seq = 0;       // the terminal record's seq; 0 when none
  uint64_t tick_seq = 0;  // the input seq of the pass (Tick) that made the record
  std::string outcome;    // created: "succeeded" | "failed" | "running" | "unknown"
  bool held = false;      // pending before the horizon: held by the controller's accounting
  bool expected = true;   // false: a terminal record for a time the schedule did not expect
  // Merged reports (ComputeMergedAdherence): the source whose record this slot counts (or, with
  // no record, whose view says pending/unaccounted), and the terminal records other sources made
  // for the same time (each with its source), kept but not counted. Empty for one ledger.
  std::string source;
  std::vector<Slot> also_decided_by;
};

struct CronJobAdherence {
  std::string namespace_;
  std::string name;
  std::string uid;
  bool in_view = true;  // false: deleted, known only from its decisions
  // The view holds the CronJob but its stored bytes do not decode: why. Its slots come from its
  // recorded decisions alone.
  std::string error;
  uint64_t expected = 0;
  uint64_t created = 0;
  uint64_t skipped = 0;
  uint64_t pending = 0;
  uint64_t pending_held = 0;  // of pending: before the horizon, held by the controller's accounting
  uint64_t unaccounted = 0;
  uint64_t unexpected = 0;  // terminal records at times the schedule did not expect
  std::map<std::string, uint64_t> skipped_by_reason;
  uint64_t succeeded = 0;
  uint64_t failed = 0;
  uint64_t running = 0;
  uint64_t outcome_unknown = 0;  // no Job watch event recorded (or raw bytes pruned)
  std::optional<Duration> max_skew;
  std::optional<Duration> mean_skew;
  std::vector<std::string> schedule_errors;  // policies whose schedule could not be evaluated
  std::vector<Slot> slots;                   // with_slots: every slot, by time
  // Divergences recorded in the window, by kind (every kind of DivergenceKinds() present).
  std::map<std::string, uint64_t> divergences_by_kind;
  std::vector<Divergence> divergences;  // with_slots: the records, oldest first
};

struct AdherenceReport {
  Time since;
  Time until;
  std::optional<Time> horizon;          // time of the last decision in the ledger
  std::vector<CronJobAdherence> items;  // by namespace, name
  CronJobAdherence totals;              // sums (name "", namespace "")
};

std::optional<double> AdherencePercent(const CronJobAdherence& a);
std::optional<double> ExecutedPercent(const CronJobAdherence& a);

// NotFound when a named CronJob has neither a view entry nor decisions; InvalidArgument for an
// empty window or too many fire times; the ledger's errors otherwise.
Result<AdherenceReport> ComputeAdherence(store::Ledger& ledger, const model::TimeZoneDb& tzdb,
                                         const AdherenceOptions& options);

// One source's ledger of a deployment's audit store (`cronledger audit-store`).
// The report over several sources' ledgers (replicas that owned CronJobs in turn), one row per
// CronJob. Per fire time: a terminal record of any source counts (createJob before skipped, then
// the first source by name), and the other sources' terminal records for that time are kept in
// Slot::also_decided_by, not counted; with no terminal record anywhere the time is pending when
// any source still has it pending, else unaccounted. The horizon is the latest source's. Counts,
// skew and outcomes are recomputed from the merged slots; divergences are summed.
Result<AdherenceReport> ComputeMergedAdherence(const std::vector<SourceLedger>& sources,
                                               const model::TimeZoneDb& tzdb,
                                               const AdherenceOptions& options);

// The time of the last decision in the ledger; nullopt when there is none.
Result<std::optional<Time>> LedgerHorizon(store::Ledger& ledger);
// The latest of the sources' horizons: where "now" is for a store whose writers may have stopped.
Result<std::optional<Time>> LatestHorizon(const std::vector<SourceLedger>& sources);

// JSON shapes (docs/audit.md): one CronJob's row (slots and divergence records included when
// present) and a slot.
model::Json EncodeAdherence(const CronJobAdherence& a);
model::Json EncodeSlot(const Slot& s);

}  // namespace cronledger::audit
