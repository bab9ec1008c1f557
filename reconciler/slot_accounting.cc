#include "reconciler/slot_accounting.h"

#include <algorithm>
#include <utility>

namespace cronledger::reconciler {
namespace {

namespace reason = model::skip_reason;

// Fire times in (from, now], at most `limit` of them.
std::vector<Time> Walk(const Schedule& schedule, Time from, Time now, size_t limit) {
  std::vector<Time> out;
  for (std::optional<Time> t = schedule.Next(from); t && *t <= now && out.size() < limit;
       t = schedule.Next(*t)) {
    if (!out.empty() && *t <= out.back()) break;  // a schedule must advance; never loop
    out.push_back(*t);
  }
  return out;
}

}  // namespace

DueSlots EnumerateDue(const Schedule& schedule, Time anchor, Time now, size_t max_individual) {
  DueSlots due;
  std::vector<Time> head = Walk(schedule, anchor, now, max_individual + 1);
  if (head.size() <= max_individual) {
    due.individual = std::move(head);
    return due;
  }
  // More than max_individual: pick a cut W such that (W, now] holds at most max_individual fire
  // times; everything in (anchor, W] becomes one range record. Start from the observed spacing
  // (half of max_individual slots back from now) and halve the distance until it fits; a regular
  // schedule fits at once, and any schedule within ~64 halvings (1 s resolution).
  const int64_t spacing =
      std::max<int64_t>(1, (head.back().unix_seconds() - head.front().unix_seconds()) /
                               static_cast<int64_t>(max_individual));
  int64_t back = std::max<int64_t>(1, spacing * static_cast<int64_t>(max_individual / 2));
  Time cut = now.AddSeconds(-back);
  std::vector<Time> tail = Walk(schedule, cut, now, max_individual + 1);
  while (tail.size() > max_individual && back > 1) {
    back /= 2;
    cut = now.AddSeconds(-back);
    tail = Walk(schedule, cut, now, max_individual + 1);
  }
  if (tail.size() > max_individual) tail.resize(max_individual);  // > 1 fire time per second
  // (anchor, cut] holds more than the tail's complement, so cut is after the first fire time.
  due.range = std::make_pair(head.front(), std::max(cut, head.front()));
  due.individual = std::move(tail);
  return due;
}

SlotAccountant::SlotAccountant(model::AccountingState state, Time default_anchor, Time now)
    : state_(std::move(state)), default_anchor_(default_anchor), now_(now) {}

Time SlotAccountant::anchor() const { return state_.accounted_through.value_or(default_anchor_); }

std::string SlotAccountant::ReasonFor(Time slot, const std::string& situational) const {
  if (state_.pending_slot == slot && !state_.pending_reason.empty()) return state_.pending_reason;
  if (state_.blocked_until && slot <= *state_.blocked_until && !state_.blocked_reason.empty()) {
    return state_.blocked_reason;
  }
  return situational;
}

void SlotAccountant::End(Time slot, const std::string& reason) {
  if (!IsNew(slot)) return;
  if (AdoptNow(slot)) return;
  records_.push_back({model::DecisionAction::kSkipped, slot, std::nullopt, ReasonFor(slot, reason),
                      "fire time ended without a Job"});
  state_.accounted_through = slot;
}

void SlotAccountant::EndBefore(const DueSlots& due, std::optional<Time> limit,
                               const std::string& reason) {
  if (due.range && (!limit || due.range->first < *limit)) {
    Time end = due.range->second;
    if (limit && end >= *limit) end = limit->Add(Duration(-1));
    records_.push_back(
        {model::DecisionAction::kSkipped, due.range->first, end,
         std::string(reason::kTooManyMissed),
         "more than " + std::to_string(kMaxIndividualSlots) +
             " fire times were missed in one pass; all fire times in this range ended without a "
             "Job (" +
             reason + ")"});
    state_.accounted_through = end;
  }
  for (Time slot : due.individual) {
    if (limit && slot >= *limit) break;
    End(slot, reason);
  }
}

void SlotAccountant::Block(const std::string& reason, const std::string& key,
                           const std::string& message) {
  if (state_.blocked_key != key) {
    records_.push_back(
        {model::DecisionAction::kSkipped, std::nullopt, std::nullopt, reason, message});
    state_.blocked_key = key;
  }
  state_.blocked_reason = reason;
  state_.blocked_until = now_;
}

constexpr const char* kSuspendedKey = "Suspended";

void SlotAccountant::Suspend() {
  state_.blocked_reason = std::string(reason::kSuspended);
  state_.blocked_key = kSuspendedKey;
  state_.blocked_until = now_;
}

void SlotAccountant::Unblock() {
  if (state_.blocked_key == kSuspendedKey) state_.blocked_until = now_;
  state_.blocked_key.clear();
}

void SlotAccountant::EndAllDue(const Schedule& schedule, const std::string& reason) {
  EndBefore(EnumerateDue(schedule, anchor(), now_), std::nullopt, reason);
}

void SlotAccountant::EndOlderKeepLatest(const Schedule& schedule, const std::string& reason,
                                        std::optional<Time> too_late) {
  const DueSlots due = EnumerateDue(schedule, anchor(), now_);
  if (due.individual.empty()) return;
  const Time latest = due.individual.back();
  const std::string why = too_late && latest <= *too_late ? std::string(reason::kTooLate) : reason;
  EndBefore(due, latest, why);
  // Not started in this pass, but its Job may exist already (lastScheduleTime = it after a pass
  // that was cut off past its status write): then it is accounted now, not kept pending.
  if (AdoptNow(latest)) return;
  Pend(latest, why);
}

void SlotAccountant::Pick(const Schedule& schedule, Time slot, bool too_many_missed) {
  const std::string older(too_many_missed ? reason::kTooManyMissed : reason::kSuperseded);
  EndBefore(EnumerateDue(schedule, anchor(), now_), slot, older);
  if (IsNew(slot) && state_.pending_slot != slot) {
    records_.push_back({model::DecisionAction::kScheduled, slot, std::nullopt, "",
                        "fire time is due and picked up"});
  }
}

void SlotAccountant::Pend(Time slot, const std::string& reason) {
  if (!IsNew(slot)) return;
  state_.pending_slot = slot;
  state_.pending_reason = reason;
}

bool SlotAccountant::Created(Time slot) {
  if (!IsNew(slot)) return false;
  state_.accounted_through = slot;
  return true;
}

void SlotAccountant::AdoptExistingJobs(std::function<bool(Time)> has_job) {
  has_job_ = std::move(has_job);
}

bool SlotAccountant::AdoptNow(Time slot) {
  if (!has_job_ || !IsNew(slot) || !has_job_(slot)) return false;
  records_.push_back({model::DecisionAction::kCreateJob, slot, std::nullopt, "",
                      std::string(kAdoptedUnaccountedMessage)});
  state_.accounted_through = slot;
  return true;
}

std::vector<SlotRecord> SlotAccountant::TakeRecords() { return std::exchange(records_, {}); }

model::AccountingState SlotAccountant::Finish() {
  // Pin the initial anchor: later passes must not take it from lastScheduleTime again, which a
  // pass interrupted after its status write may have moved past a fire time it never accounted.
  if (!state_.accounted_through) state_.accounted_through = default_anchor_;
  // Forget bookkeeping that no longer refers to unaccounted fire times.
  const Time through = anchor();
  if (state_.pending_slot && *state_.pending_slot <= through) {
    state_.pending_slot.reset();
    state_.pending_reason.clear();
  }
  if (state_.blocked_until && *state_.blocked_until <= through) {
    state_.blocked_until.reset();
    state_.blocked_reason.clear();
  }
  return state_;
}

}  // namespace cronledger::reconciler
