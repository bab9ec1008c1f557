#pragma once

// Fire-time accounting (docs/design.md §4, docs/reconciler.md "Accounting"): every fire time of a
// CronJob ends in exactly one terminal record — createJob, or skipped with a reason — without
// changing what the upstream semantics do. The state (model::AccountingState) is part of the view,
// so a pass records each fire time once and replay reproduces it.
//
// Upstream only ever starts the most recent due fire time, so fire times older than the one a pass
// looks at are dead and get their terminal record at once; the most recent one may still start
// later (Forbid, suspend, failed create...) and stays "pending" with the reason it will get if it
// never starts.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/decision.h"
#include "model/time.h"
#include "reconciler/schedule.h"

namespace cronledger::reconciler {

// At most this many fire times are recorded individually per pass; older ones are summarised in
// one TooManyMissed range record (an outage of years must not produce millions of records).
inline constexpr size_t kMaxIndividualSlots = 100;

// The message of a createJob record for a fire time whose Job was found, not created, by the pass
// that accounts it (SlotAccountant::AdoptNow).
inline constexpr std::string_view kAdoptedUnaccountedMessage =
    "the Job of this fire time exists but no completed pass accounted it (a pass that created it "
    "was interrupted); adopted";

struct DueSlots {
  // When set: every fire time in [range->first, range->second] (more than kMaxIndividualSlots
  // in total) is covered by one range record.
  std::optional<std::pair<Time, Time>> range;
  std::vector<Time> individual;  // ascending, all after the range
};

// The fire times in (anchor, now], bounded as above. Costs O(log(span) * kMaxIndividualSlots)
// schedule evaluations in the worst case.
DueSlots EnumerateDue(const Schedule& schedule, Time anchor, Time now,
                      size_t max_individual = kMaxIndividualSlots);

// One accounting record of a pass, converted to a model::Decision by the caller.
struct SlotRecord {
  model::DecisionAction action = model::DecisionAction::kSkipped;
  std::optional<Time> scheduled_time;
  std::optional<Time> range_end;
  std::string reason;
  std::string message;
};

class SlotAccountant {
 public:
  // `default_anchor` is used when the state has never accounted anything: fire times up to
  // lastScheduleTime (else creationTimestamp) are taken as handled before cronledger saw them.
  SlotAccountant(model::AccountingState state, Time default_anchor, Time now);

  // The schedule or time zone cannot be evaluated (UnknownTimeZone, InvalidSchedule): record the
  // condition once per `key`; fire times due meanwhile get `reason` when they are accounted.
  void Block(const std::string& reason, const std::string& key, const std::string& message);
  // Deletion: every due fire time ends now with `reason`.
  void EndAllDue(const Schedule& schedule, const std::string& reason);
  // No fire time is acted on (suspend, deadline passed, estimate overshoot): older due fire
  // times end with `reason`; the most recent stays pending with `reason` (or is adopted when its
  // Job exists, see AdoptExistingJobs). When the most recent one is at or before `too_late`
  // (now - startingDeadlineSeconds), the reason is TooLate.
  void EndOlderKeepLatest(const Schedule& schedule, const std::string& reason,
                          std::optional<Time> too_late = std::nullopt);
  // The pass acts on `slot`: due fire times before it end (Superseded, or TooManyMissed when
  // upstream reported too many missed starts); a `scheduled` record marks `slot` once.
  void Pick(const Schedule& schedule, Time slot, bool too_many_missed);
  // `slot` did not start in this pass and may still start later.
  void Pend(Time slot, const std::string& reason);
  // A Job exists for `slot` (created, or adopted after AlreadyExists). Returns true when the caller
  // must write the terminal createJob record (false: the slot was already accounted).
  bool Created(Time slot);
  // Recovery of an interrupted pass (docs/reconciler.md "Jobs the accounting has not seen"): a
  // fire time that ends now without being acted on, but whose Job exists (by its deterministic
  // name, or as lastScheduleTime / an active entry), gets a createJob record (adopted) instead of
  // a skip. `has_job` answers for a fire time; unset = no adoption (a first pass: fire times with
  // a Job before cronledger's first pass are taken as handled).
  void AdoptExistingJobs(std::function<bool(Time)> has_job);
  // The fire time is not yet accounted and a Job exists for it: ends it with createJob (adopted).
  // Returns false when it was already accounted or adoption is off.
  bool AdoptNow(Time slot);
  // Whether `slot` is after everything accounted so far.
  bool IsNew(Time slot) const { return slot > anchor(); }
  // The CronJob is suspended: fire times that end without a Job up to the first pass that finds it
  // resumed get Suspended (upstream processes the resume immediately, as an update event).
  void Suspend();
  // The schedule evaluates again (and the CronJob is not suspended): a later blocked condition is
  // recorded anew; a suspension ends now.
  void Unblock();

  // Records produced so far, in order; the caller drains them into decisions.
  std::vector<SlotRecord> TakeRecords();
  model::AccountingState Finish();

 private:
  Time anchor() const;
  std::string ReasonFor(Time slot, const std::string& situational) const;
  void EndBefore(const DueSlots& due, std::optional<Time> limit, const std::string& reason);
  void End(Time slot, const std::string& reason);

  model::AccountingState state_;
  Time default_anchor_;
  Time now_;
  std::function<bool(Time)> has_job_;
  std::vector<SlotRecord> records_;
};

}  // namespace cronledger::reconciler
