// Schedule adherence per CronJob (audit/adherence.h, docs/audit.md "Adherence").
#include "audit/adherence.h"

#include <algorithm>
#include <memory>
#include <set>

#include "audit/adherence_internal.h"
#include "model/decision.h"
#include "model/json.h"
#include "reconciler/schedule.h"

namespace cronledger::audit {
namespace {

constexpr Time kLatest = Time::FromUnix(9'000'000'000);
constexpr Time kEarliest = Time::FromUnix(-9'000'000'000);

bool IsTerminal(const model::Decision& d) {
  return d.scheduled_time.has_value() && (d.action == model::DecisionAction::kCreateJob ||
                                          d.action == model::DecisionAction::kSkipped);
}

// Policies in force, as (last fire time they decide, inclusive; policy): fire times in
// (previous end, end] belong to the pass at `end` (see the header). The last one is open-ended.
struct PolicySpan {
  Time end;
  model::PolicySnapshot policy;
};

std::vector<PolicySpan> PolicySpans(const std::vector<model::Decision>& decisions) {
  std::vector<PolicySpan> spans;
  for (const model::Decision& d : decisions) {
    if (!spans.empty() && spans.back().policy == d.policy) {
      spans.back().end = d.time;
    } else {
      spans.push_back({d.time, d.policy});
    }
  }
  if (!spans.empty()) spans.back().end = kLatest;
  return spans;
}

// Expected fire times in (after, stop) under the spans; schedule errors are collected.
Status ExpectedTimes(const std::vector<PolicySpan>& spans, Time after, Time stop,
                     const model::TimeZoneDb& tzdb, size_t max_slots, std::vector<Time>* out,
                     std::vector<std::string>* errors) {
  Time prev_end = kEarliest;
  for (const PolicySpan& span : spans) {
    const Time lo = std::max(prev_end, after);
    const Time hi_incl = span.end;
    prev_end = span.end;
    if (!(lo < stop) || hi_incl <= lo) continue;
    reconciler::FormattedSchedule text =
        reconciler::FormatSchedule(span.policy.schedule, span.policy.time_zone);
    auto schedule = reconciler::ParseStandard(text.text, tzdb);
    if (!schedule.ok()) {
      std::string e = "\"" + text.text + "\": " + schedule.status().message();
      if (std::find(errors->begin(), errors->end(), e) == errors->end()) errors->push_back(e);
      continue;
    }
    for (std::optional<Time> t = (*schedule)->Next(lo); t && *t < stop && *t <= hi_incl;
         t = (*schedule)->Next(*t)) {
      if (out->size() >= max_slots) {
        return Status::InvalidArgument("more than " + std::to_string(max_slots) +
                                       " fire times in the window; narrow it");
      }
      out->push_back(*t);
    }
  }
  return Status::Ok();
}

// The controller's accounting for the CronJob (the `state` blob written with every pass:
// {"uid", "accounting": model::EncodeAccountingState}, controller/reconcile_pass.cc), when it
// belongs to this incarnation (same uid). nullopt when there is none (never reconciled, deleted, a
// ledger not written by the controller) or it does not decode.
Result<std::optional<model::AccountingState>> ControllerAccounting(store::Ledger& ledger,
                                                                   const std::string& ns,
                                                                   const std::string& name,
                                                                   const std::string& uid) {
  std::optional<model::AccountingState> none;
  Result<std::string> blob = ledger.GetControllerState(ns + "/" + name);
  if (blob.status().IsNotFound()) return none;
  if (!blob.ok()) return blob.status();
  // A blob the controller wrote but this build cannot read is no evidence either way: the slots
  // fall back to the horizon rule rather than failing the whole report.
  Result<model::Json> j = model::ParseJson(*blob);
  if (!j.ok() || !j->is_object() || !j->contains("uid") || !(*j)["uid"].is_string() ||
      !j->contains("accounting") || (*j)["uid"].get<std::string>() != uid) {
    return none;
  }
  Result<model::AccountingState> state = model::DecodeAccountingState((*j)["accounting"]);
  if (!state.ok()) return none;
  return std::optional<model::AccountingState>(std::move(*state));
}

// A fire time T without a terminal record, before the ledger horizon: is it still held by the
// controller's accounting? The accounting says every fire time at or before accounted_through has
// its terminal record; a later one is not decided yet: the pending slot (Forbid, suspended,
// waiting for its deadline, a failed create: docs/reconciler.md "Accounting"), a blocked one, or
// one the CronJob's next pass has not reached. Returns the reason it is held with ("" when the
// accounting names none), nullopt when it is not held (unaccounted).
std::optional<std::string> HeldBy(const model::AccountingState& s, Time t) {
  if (s.accounted_through && t <= *s.accounted_through) return std::nullopt;
  if (s.pending_slot && t == *s.pending_slot) return s.pending_reason;
  if (s.blocked_until && t <= *s.blocked_until) return s.blocked_reason;
  return std::string();
}

}  // namespace

Result<CronJobAdherence> CronJobSlots(store::Ledger& ledger, const model::TimeZoneDb& tzdb,
                                      const CronJobInput& in, const AdherenceOptions& options,
                                      std::optional<Time> horizon) {
  CronJobAdherence a;
  a.namespace_ = in.namespace_;
  a.name = in.name;
  a.uid = in.uid;
  a.in_view = in.cron_job.has_value() || !in.error.empty();
  a.error = in.error;
  // Terminal records for fire times in the window are made at or after the fire time, so the
  // scan starts at `since` and runs to the end of the CronJob's index.
  // Summaries: a slot needs no Job object or status, so this is the CronJob index alone.
  CL_ASSIGN_OR_RETURN(
      std::vector<model::Decision> decisions,
      ledger.DecisionSummariesByCronJob(in.namespace_, in.name, options.since, kLatest, 0));
  if (!a.in_view && decisions.empty()) {
    return Status::NotFound("no CronJob " + in.namespace_ + "/" + in.name + " in the ledger");
  }
  if (a.uid.empty() && !decisions.empty()) a.uid = decisions.back().cron_job.uid;
  CL_ASSIGN_OR_RETURN(std::optional<model::AccountingState> accounting,
                      ControllerAccounting(ledger, in.namespace_, in.name, a.uid));
  std::vector<PolicySpan> spans = PolicySpans(decisions);
  if (spans.empty() && in.cron_job) {
    spans.push_back({kLatest, model::SnapshotPolicy(in.cron_job->spec)});
  }
  // The CronJob's lifetime: fire times strictly after its creationTimestamp (upstream's earliest
  // time, docs/semantics.md §6: a CronJob created at 00:00 does not run at 00:00), or from its
  // first decision; up to its last decision when the view no longer holds it (deleted).
  Time after = options.since.Add(Duration(-1));
  if (in.created && *in.created > after) after = *in.created;
  if (!in.created) {
    CL_ASSIGN_OR_RETURN(auto first, ledger.DecisionSummariesByCronJob(in.namespace_, in.name,
                                                                      kEarliest, kLatest, 1));
    if (!first.empty() && first.front().time.Add(Duration(-1)) > after) {
      after = first.front().time.Add(Duration(-1));
    }
  }
  Time stop = options.until;
  if (!a.in_view && !decisions.empty() && decisions.back().time < stop) {
    stop = decisions.back().time.Add(Duration(1));
  }
  std::vector<Time> expected;
  if (after < stop) {
    Status s =
        ExpectedTimes(spans, after, stop, tzdb, options.max_slots, &expected, &a.schedule_errors);
    if (!s.ok()) return s;
  }
  // Index the terminal records by fire time.
  std::map<Time, const model::Decision*> points;
  std::vector<const model::Decision*> ranges;
  for (const model::Decision& d : decisions) {
    if (!IsTerminal(d)) continue;
    if (d.range_end && *d.range_end != *d.scheduled_time) {
      ranges.push_back(&d);
    } else {
      points.emplace(*d.scheduled_time, &d);  // the first record wins; replay flags duplicates
    }
  }
  std::set<Time> expected_set(expected.begin(), expected.end());
  std::vector<Slot> slots;
  for (Time t : expected) {
    Slot slot;
    slot.scheduled = t;
    const model::Decision* rec = nullptr;
    if (auto it = points.find(t); it != points.end()) rec = it->second;
    for (size_t i = 0; rec == nullptr && i < ranges.size(); ++i) {
      if (*ranges[i]->scheduled_time <= t && t <= *ranges[i]->range_end) rec = ranges[i];
    }
    if (rec == nullptr) {
      slot.status = "pending";
      if (horizon && t < *horizon) {
        std::optional<std::string> held =
            accounting ? HeldBy(*accounting, t) : std::optional<std::string>();
        if (held) {
          slot.held = true;
          slot.reason = *held;
        } else {
          slot.status = "unaccounted";
        }
      }
    } else {
      FillFromRecord(*rec, &slot);
    }
    slots.push_back(std::move(slot));
  }
  for (const auto& [t, rec] : points) {
    if (t < options.since || !(t < options.until) || expected_set.count(t)) continue;
    Slot slot;
    slot.scheduled = t;
    slot.expected = false;
    FillFromRecord(*rec, &slot);
    slots.push_back(std::move(slot));
  }
  std::sort(slots.begin(), slots.end(),
            [](const Slot& x, const Slot& y) { return x.scheduled < y.scheduled; });
  for (const Slot& slot : slots) Classify(slot, &a);
  a.slots = std::move(slots);
  return a;
}

void Classify(const Slot& slot, CronJobAdherence* a) {
  if (!slot.expected) {
    ++a->unexpected;
  } else {
    ++a->expected;
    if (slot.status == "created") ++a->created;
    if (slot.status == "skipped") {
      ++a->skipped;
      ++a->skipped_by_reason[slot.reason];
    }
    if (slot.status == "pending") ++a->pending;
    if (slot.held) ++a->pending_held;
    if (slot.status == "unaccounted") ++a->unaccounted;
  }
}

void FillFromRecord(const model::Decision& rec, Slot* slot) {
  slot->seq = rec.seq;
  slot->tick_seq = rec.cause.tick_seq;
  if (rec.action == model::DecisionAction::kCreateJob) {
    slot->status = "created";
    slot->job = rec.job_name.value_or("");
    slot->skew = rec.time.Sub(slot->scheduled);
    slot->outcome = "unknown";
  } else {
    slot->status = "skipped";
    slot->reason = rec.reason;
  }
}

std::optional<double> AdherencePercent(const CronJobAdherence& a) {
  uint64_t due = a.expected - a.pending;
  if (due == 0) return std::nullopt;
  return 100.0 * static_cast<double>(a.created + a.skipped) / static_cast<double>(due);
}

std::optional<double> ExecutedPercent(const CronJobAdherence& a) {
  uint64_t due = a.expected - a.pending;
  if (due == 0) return std::nullopt;
  return 100.0 * static_cast<double>(a.created) / static_cast<double>(due);
}

}  // namespace cronledger::audit
