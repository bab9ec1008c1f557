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
  // More than max_individual: find a cut W such that (W, now] holds at most max_individual fire
  // times and (W - 1s, now] more. The schedule resolution is one second, so (W, now] holds exactly
  // max_individual of them (fewer only if the walk meets a non-advancing schedule).
  int64_t lo = anchor.unix_seconds();
  int64_t hi = now.unix_seconds();
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    const size_t n = Walk(schedule, Time::FromUnix(mid), now, max_individual + 1).size();
    (n <= max_individual ? hi : lo) = mid;
  }
  const Time cut = std::max(Time::FromUnix(hi), head.front());
  due.range = std::make_pair(head.front(), cut);
  due.individual = Walk(schedule, cut, now, max_individual);
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

std::vector<SlotRecord> SlotAccountant::TakeRecords() { return std::exchange(records_, {}); }

model::AccountingState SlotAccountant::Finish() {
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
