#include "replay/diff.h"

#include <map>
#include <utility>

namespace cronledger::replay {
namespace {

using Key = std::pair<Time, std::string>;

std::map<Key, SlotOutcome> Terminals(const std::vector<model::Decision>& stream) {
  std::map<Key, SlotOutcome> out;
  for (const model::Decision& d : stream) {
    if (!d.scheduled_time) continue;
    if (d.action != model::DecisionAction::kCreateJob &&
        d.action != model::DecisionAction::kSkipped) {
      continue;
    }
    SlotOutcome o;
    o.action = d.action;
    if (d.action == model::DecisionAction::kSkipped) o.reason = d.reason;
    o.job = d.job_name.value_or("");
    o.range_end = d.range_end;
    out[{*d.scheduled_time, d.cron_job.namespace_ + "/" + d.cron_job.name}] = std::move(o);
  }
  return out;
}

std::string Change(const std::optional<SlotOutcome>& r, const std::optional<SlotOutcome>& w) {
  if (!r) return "only what-if";
  if (!w) return "only recorded";
  const bool rc = r->action == model::DecisionAction::kCreateJob;
  const bool wc = w->action == model::DecisionAction::kCreateJob;
  if (!rc && wc) return "would run";
  if (rc && !wc) return "would not run";
  return "reason changed";
}

bool Same(const SlotOutcome& a, const SlotOutcome& b) {
  return a.action == b.action && a.reason == b.reason && a.job == b.job &&
         a.range_end == b.range_end;
}

model::Json OutcomeJson(const std::optional<SlotOutcome>& o) {
  if (!o) return nullptr;
  model::Json j = {{"action", model::DecisionActionName(o->action)}};
  if (!o->reason.empty()) j["reason"] = o->reason;
  if (!o->job.empty()) j["job"] = o->job;
  if (o->range_end) j["rangeEnd"] = FormatRfc3339(*o->range_end);
  return j;
}

}  // namespace

std::string SlotOutcome::Describe() const {
  if (action == model::DecisionAction::kCreateJob) return "created " + job;
  std::string s = "skipped (" + reason + ")";
  if (range_end) s += " through " + FormatRfc3339(*range_end);
  return s;
}

std::vector<SlotDifference> DiffTerminal(const std::vector<model::Decision>& recorded,
                                         const std::vector<model::Decision>& what_if) {
  const auto r = Terminals(recorded);
  const auto w = Terminals(what_if);
  std::map<Key, SlotDifference> out;
  for (const auto& [key, o] : r) {
    auto it = w.find(key);
    if (it != w.end() && Same(o, it->second)) continue;
    SlotDifference& d = out[key];
    d.cron_job = key.second;
    d.scheduled = key.first;
    d.recorded = o;
    if (it != w.end()) d.what_if = it->second;
  }
  for (const auto& [key, o] : w) {
    if (r.count(key) != 0) continue;
    SlotDifference& d = out[key];
    d.cron_job = key.second;
    d.scheduled = key.first;
    d.what_if = o;
  }
  std::vector<SlotDifference> v;
  for (auto& [key, d] : out) {
    d.change = Change(d.recorded, d.what_if);
    v.push_back(std::move(d));
  }
  return v;
}

model::Json EncodeSlotDifference(const SlotDifference& d) {
  return {{"cronJob", d.cron_job},
          {"scheduledTime", FormatRfc3339(d.scheduled)},
          {"change", d.change},
          {"recorded", d.recorded ? d.recorded->Describe() : std::string("-")},
          {"whatIf", d.what_if ? d.what_if->Describe() : std::string("-")},
          {"recordedRecord", OutcomeJson(d.recorded)},
          {"whatIfRecord", OutcomeJson(d.what_if)}};
}

}  // namespace cronledger::replay
