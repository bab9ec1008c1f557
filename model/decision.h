#pragma once

// The decision record (docs/design.md §4): what the reconciler decided, why, and under which
// policy. It is the unit of the audit stream (RocksDB decision log, Kafka payload) and of replay
// verification, so its JSON encoding is canonical and byte-stable: keys sorted, absent optionals
// omitted, times at nanosecond precision in UTC. CanonicalDecisionBytes is that encoding; it is the
// replay digest's input, the Kafka payload and the JSON every command and the API print.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/json.h"
#include "model/result.h"
#include "model/time.h"

namespace cronledger::model {

enum class DecisionAction {
  kScheduled,     // a fire time became due and was picked up by this pass
  kSkipped,       // a fire time ends without a Job; `reason` says why (terminal)
  kCreateJob,     // a Job for `scheduledTime` is to be created (terminal for that fire time)
  kDeleteJob,     // history cleanup or Replace
  kUpdateStatus,  // the CronJob status is written
  kEvent,         // a Kubernetes Event is recorded on the CronJob
  kRequeue,       // the CronJob is looked at again after `requeueAfter`
};

std::string_view DecisionActionName(DecisionAction a);
Result<DecisionAction> ParseDecisionAction(std::string_view s);

// Reasons for kSkipped (docs/design.md §4). Kept as strings in the record; these are the known
// values.
namespace skip_reason {
inline constexpr std::string_view kTooLate = "TooLate";
inline constexpr std::string_view kConcurrencyForbid = "ConcurrencyForbid";
inline constexpr std::string_view kSuspended = "Suspended";
inline constexpr std::string_view kSuperseded = "Superseded";
inline constexpr std::string_view kTooManyMissed = "TooManyMissed";
inline constexpr std::string_view kDeleting = "Deleting";
inline constexpr std::string_view kInvalidSchedule = "InvalidSchedule";
inline constexpr std::string_view kUnknownTimeZone = "UnknownTimeZone";
inline constexpr std::string_view kAlreadyProcessed = "AlreadyProcessed";
}  // namespace skip_reason

struct CronJobRef {
  std::string namespace_;
  std::string name;
  std::string uid;
  friend bool operator==(const CronJobRef&, const CronJobRef&) = default;
};

// The spec fields that decide scheduling, as they were when the decision was made.
struct PolicySnapshot {
  std::string schedule;
  std::optional<std::string> time_zone;
  std::string concurrency_policy;
  std::optional<int64_t> starting_deadline_seconds;
  bool suspend = false;
  friend bool operator==(const PolicySnapshot&, const PolicySnapshot&) = default;
};

// What produced the decision: the tick (reconcile pass) and the last input folded into the view.
struct DecisionCause {
  uint64_t tick_seq = 0;
  uint64_t input_seq = 0;
  std::string trigger;  // e.g. "timer", "cronjob-update", "job-delete", "retry"
  friend bool operator==(const DecisionCause&, const DecisionCause&) = default;
};

struct Decision {
  uint64_t seq = 0;  // assigned by the ledger when committed; 0 before that
  Time time;         // the tick's `now`
  CronJobRef cron_job;
  DecisionAction action = DecisionAction::kScheduled;
  std::optional<Time> scheduled_time;
  // A skipped record may stand for a whole range of fire times (reason TooManyMissed): every fire
  // time in [scheduled_time, range_end] is accounted by this one record.
  std::optional<Time> range_end;
  std::string reason;  // skip reason, or the Kubernetes event reason for kEvent
  std::optional<std::string> job_name;
  Json job_object;                        // createJob: the Job as requested; null otherwise
  std::optional<std::string> event_type;  // kEvent: "Normal" | "Warning"
  std::optional<std::string> message;     // kEvent message, or a human explanation
  std::optional<Duration> requeue_after;  // kRequeue
  Json status;                            // kUpdateStatus: the status written; null otherwise
  DecisionCause cause;
  PolicySnapshot policy;

  friend bool operator==(const Decision&, const Decision&) = default;
};

// The canonical bytes of a decision, written directly (no Json tree, no copy of the job object
// or status).
std::string CanonicalDecisionBytes(const Decision& d);
// The same appended to `*out`.
void AppendCanonicalDecisionBytes(const Decision& d, std::string* out);
// A JSON array of the decisions' canonical bytes appended to `*out`: what DumpJson prints of an
// array of their trees, without building them.
void AppendCanonicalDecisionArray(const std::vector<Decision>& ds, std::string* out);
// The same bytes as a tree (DumpJson of it gives them back), for output that embeds decisions.
Json EncodeDecision(const Decision& d);
Result<Decision> DecodeDecision(const Json& j);

PolicySnapshot SnapshotPolicy(const struct CronJobSpec& spec);

// The reconciler's per-CronJob bookkeeping that makes the decision stream account for every fire
// time exactly once (docs/reconciler.md, "Accounting"). It is part of the view: an input and an
// output of every pass, persisted with the pass, so replay reproduces it exactly.
struct AccountingState {
  // Every fire time at or before this instant already has its terminal record.
  std::optional<Time> accounted_through;
  // The most recent due fire time that was looked at but may still start (Forbid, suspend,
  // deadline, failed create...), and the skip reason it gets if it ends without a Job.
  std::optional<Time> pending_slot;
  std::string pending_reason;
  // While the schedule or time zone cannot be evaluated: the skip reason, the condition key that
  // was last recorded (so it is recorded once), and the `now` of the last such pass. Fire times
  // up to `blocked_until` that end without a Job get `blocked_reason`.
  std::string blocked_reason;
  std::string blocked_key;
  std::optional<Time> blocked_until;

  friend bool operator==(const AccountingState&, const AccountingState&) = default;
};

// The accounting state's JSON (what a PassEnd records): keys sorted, absent times null.
std::string AccountingStateBytes(const AccountingState& s);
// The same appended to `*out`.
void AppendAccountingStateBytes(const AccountingState& s, std::string* out);
// The same bytes as a tree.
Json EncodeAccountingState(const AccountingState& s);
Result<AccountingState> DecodeAccountingState(const Json& j);

}  // namespace cronledger::model
