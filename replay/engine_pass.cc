// The replay engine's deciding half: one recorded pass re-decided from what it read, what-if
// passes against an emulated API, and the passes controller.noDowntime synthesizes.

#include "model/json.h"
#include "reconciler/api_emulator.h"
#include "reconciler/cronjob_time.h"
#include "reconciler/invalid_object.h"
#include "reconciler/schedule.h"
#include "replay/engine_internal.h"

namespace cronledger::replay::internal {
namespace {

std::string DescribeCall(const model::ApiCall& c) {
  return std::string(model::ApiVerbName(c.verb)) + " " + std::string(model::ApiKindName(c.kind)) +
         " " + c.namespace_ + "/" + c.name;
}

bool SameCall(const RecordedCall& r, const model::ApiCall& c) {
  return r.verb == model::ApiVerbName(c.verb) && r.kind == model::ObjectKindOf(c.kind) &&
         r.namespace_ == c.namespace_ && r.name == c.name;
}

}  // namespace

reconciler::SyncResult Engine::DecideRecorded(const reconciler::SyncInputRef& in,
                                              PassSummary* summary) {
  reconciler::Step step = reconciler::Decide(in);
  if (step.next_call) {
    summary->problem = "the derived pass needs call " + std::to_string(in.outcomes.size()) + " (" +
                       DescribeCall(*step.next_call) + ") that the recorded pass did not make";
    reconciler::SyncResult none;
    none.accounting = *in.accounting;
    return none;
  }
  if (step.result.actions.size() != in.outcomes.size()) {
    summary->problem = "the derived pass made " + std::to_string(step.result.actions.size()) +
                       " API calls, the recorded pass " + std::to_string(in.outcomes.size());
  }
  return std::move(step.result);
}

// What-if passes answer a call with the recorded outcome while the pass makes the same calls as
// the recorded one, and from an API emulated over the recorded view after that (docs/replay.md).
reconciler::SyncResult Engine::DecideWhatIf(reconciler::SyncInput in, const OpenPass& p,
                                            const FamilyView& view) {
  reconciler::EmulatedApiOptions eo;
  for (const auto& [name, entry] : view.jobs) {
    eo.jobs[entry.job->metadata.namespace_ + "/" + name] = model::EncodeJob(*entry.job);
  }
  eo.created_uid = "what-if-uid";
  reconciler::EmulatedApi api(std::move(eo), model::EncodeCronJob(in.cron_job));
  size_t k = 0;
  bool same = true;
  auto perform = [&](const model::ApiCall& call) {
    if (same && k < p.outcomes.size() && SameCall(p.calls[k], call)) return p.outcomes[k++];
    same = false;
    return api.Perform(call);
  };
  return reconciler::RunPass(std::move(in), perform);
}

reconciler::SyncInput& Engine::InputFor(const std::string& key, const FamilyView& view) {
  CachedInput& c = inputs_[key];
  if (c.cron_job != view.cron_job) {
    c.in.cron_job = options_.what_if.changes_spec() ? ApplyWhatIf(options_.what_if, *view.cron_job)
                                                    : *view.cron_job;
    c.cron_job = view.cron_job;
  }
  bool same = c.jobs.size() == view.jobs.size();
  if (same) {
    size_t i = 0;
    for (const auto& [name, entry] : view.jobs) {
      if (c.jobs[i++] != entry.job) {
        same = false;
        break;
      }
    }
  }
  if (same) return c.in;
  // Both lists are ordered by name: keep (move) the Jobs whose version did not change, copy the
  // others. A Job is reused only when it is the very object the view holds.
  std::vector<model::Job> jobs;
  std::vector<std::shared_ptr<const model::Job>> sources;
  jobs.reserve(view.jobs.size());
  sources.reserve(view.jobs.size());
  size_t k = 0;
  for (const auto& [name, entry] : view.jobs) {
    while (k < c.jobs.size() && c.jobs[k]->metadata.name < name) ++k;
    if (k < c.jobs.size() && c.jobs[k] == entry.job) {
      jobs.push_back(std::move(c.in.jobs[k]));
      ++k;
    } else {
      jobs.push_back(*entry.job);
    }
    sources.push_back(entry.job);
  }
  c.in.jobs = std::move(jobs);
  c.jobs = std::move(sources);
  return c.in;
}

void Engine::RunPass(const std::string& view_key, PassSummary summary, const FamilyView& view,
                     OpenPass& p, const std::string& recorded_accounting) {
  // The accounting chain is the Tick's CronJob's. That is the family whose view the pass reads
  // (`view_key`, the PassEnd's) unless a log says otherwise; only then is the key built again.
  const std::string& ns = summary.tick.namespace_;
  const std::string& cj = summary.tick.name;
  const bool same = view_key.size() == ns.size() + 1 + cj.size() &&
                    view_key.compare(0, ns.size(), ns) == 0 && view_key[ns.size()] == '/' &&
                    view_key.compare(ns.size() + 1, cj.size(), cj) == 0;
  const std::string tick_key = same ? std::string() : FamilyKey(ns, cj);
  const std::string& key = same ? view_key : tick_key;
  summary.cron_job_seq = view.cron_job_seq;
  if (!fast_) {  // a verify-only replay keeps no pass summaries
    for (const auto& [name, entry] : view.jobs) summary.job_seqs[name] = entry.seq;
  }
  ChainEntry& chain = chain_[key];
  model::AccountingState before;
  const std::string* uid = view.cron_job           ? &view.cron_job->metadata.uid
                           : view.invalid_cron_job ? &view.invalid_cron_job->ref.uid
                                                   : nullptr;
  if (uid != nullptr && chain.uid == *uid) before = chain.accounting;
  reconciler::SyncResult result;
  result.accounting = before;
  // The stored CronJob does not decode, or (the view's only errors) some of its Jobs do not: the
  // pass made no call and recorded why (reconciler/invalid_object.h); what-if changes to its spec
  // cannot apply either.
  std::optional<reconciler::InvalidCronJob> invalid = view.invalid_cron_job;
  if (!invalid && view.cron_job && !view.invalid_jobs.empty() &&
      view.errors.size() == view.invalid_jobs.size()) {
    const model::ObjectMeta& m = view.cron_job->metadata;
    const InvalidJobBytes& first = view.invalid_jobs.begin()->second;
    invalid = reconciler::InvalidCronJob{model::CronJobRef{m.namespace_, m.name, m.uid}, first.seq,
                                         first.message};
  }
  if (invalid) {
    result = reconciler::DecideInvalidCronJob(*invalid, summary.tick.now, before);
    if (!p.outcomes.empty()) {
      summary.problem = "the recorded pass made " + std::to_string(p.outcomes.size()) +
                        " API calls for a CronJob it cannot read";
    }
  } else if (!view.cron_job || !view.errors.empty() || p.tzdb == nullptr) {
    summary.problem =
        !view.errors.empty()
            ? "the view cannot be rebuilt: " + view.errors.begin()->first + " at " +
                  view.errors.begin()->second
            : "the view has no CronJob " + key + " at input " + std::to_string(summary.view_seq);
  } else if (options_.what_if.empty()) {
    // The pass reads the view's objects in place (no copies): the CronJob and the Jobs by name.
    jobs_.clear();
    for (const auto& [name, entry] : view.jobs) jobs_.push_back(entry.job.get());
    reconciler::SyncInputRef in;
    in.cron_job = view.cron_job.get();
    in.jobs = jobs_;
    in.now = summary.tick.now;
    in.options.history_cleanup = p.history_cleanup;
    // Only the decisions are compared.
    in.options.call_objects = reconciler::DecideOptions::CallObjects::kNone;
    in.options.schedule_memo = &schedule_memo_;
    in.tzdb = p.tzdb;
    in.accounting = &before;
    in.outcomes = p.outcomes;
    result = DecideRecorded(in, &summary);
  } else {
    reconciler::SyncInput& in = InputFor(key, view);
    in.now = summary.tick.now;
    in.options.history_cleanup = p.history_cleanup;
    in.options.schedule_memo = &schedule_memo_;
    in.tzdb = p.tzdb;
    in.accounting = before;
    in.outcomes.clear();
    result = DecideWhatIf(in, p, view);  // copies: the emulated pass consumes its input
  }
  for (model::Decision& d : result.decisions) {
    d.cause = model::DecisionCause{summary.tick_seq, summary.view_seq, summary.tick.trigger};
  }
  if (options_.what_if.empty() && summary.problem.empty()) {
    thread_local std::string accounting;  // reused: no allocation per pass
    accounting.clear();
    model::AppendAccountingStateBytes(result.accounting, &accounting);
    if (accounting != recorded_accounting) {
      summary.problem = "the accounting state after the pass differs: recorded " +
                        recorded_accounting + ", derived " + accounting;
    }
  }
  if (observer_ != nullptr) {
    observer_->OnPass(PassContext{summary, view, before, result, recorded_accounting});
  }
  chain = ChainEntry{uid != nullptr ? *uid : chain.uid, result.accounting, true, summary.tick.now,
                     summary.view_seq};
  if (fast_) {
    if (!summary.problem.empty()) fast_failed_ = true;
    ++result_.passes_replayed;
    if (!fast_failed_) {
      for (model::Decision& d : result.decisions) verifier_->Add(std::move(d));
    }
    return;
  }
  if (!summary.problem.empty()) ++result_.divergences;
  const auto index = static_cast<uint32_t>(result_.passes.size());
  summary.synthesized ? ++result_.passes_synthesized : ++result_.passes_replayed;
  result_.passes.push_back(std::move(summary));
  for (model::Decision& d : result.decisions) {
    result_.derived.push_back(std::move(d));
    result_.derived_pass.push_back(index);
  }
}

void Engine::ReplayPass(uint64_t tick_seq, OpenPass& p, const model::PassEnd& e) {
  std::string key = FamilyKey(e.namespace_, e.name);
  if (options_.what_if.no_downtime) Synthesize(key, p.tick.now, p);
  if (queue_) {
    PassTask t;
    t.key = std::move(key);
    t.tick_seq = tick_seq;
    t.pass = std::move(p);
    t.end.view_seq = e.view_seq;  // what DecidePass reads (the other fields are not copied)
    t.end.accounting = e.accounting;
    if (changes_mode_) {
      t.changes = std::move(changes_);
      changes_.clear();
    } else {
      t.view = history_.At(t.key, e.view_seq);
      t.released = std::move(released_);
      released_.clear();
    }
    queue_->Push(std::move(t));
    return;
  }
  auto view = history_.At(key, e.view_seq);
  DecidePass(key, tick_seq, p, e, view.get());
}

void Engine::DecideQueued() {
  std::vector<PassTask> batch;
  while (queue_->Take(&batch)) {
    for (PassTask& t : batch) {
      for (FamilyChange& c : t.changes) {
        std::string family = std::move(c.family);
        families_[family].pending.push_back(std::move(c));
      }
      if (t.seed) {
        chain_[t.key] = std::move(t.chain);
      } else if (t.trim) {
        if (!families_[t.key].AdvanceTo(t.end.view_seq, history_)) fast_failed_ = true;
      } else if (changes_mode_) {
        FamilyState& f = families_[t.key];
        // A pass reading an older view than the family's previous pass: the full replay decides.
        if (!f.AdvanceTo(t.end.view_seq, history_)) fast_failed_ = true;
        if (fast_failed_) continue;
        DecidePass(t.key, t.tick_seq, t.pass, t.end, f.any ? &f.view : nullptr);
      } else {
        DecidePass(t.key, t.tick_seq, t.pass, t.end, t.view.get());
        t.released.clear();
      }
    }
    batch.clear();
  }
}

void Engine::DecidePass(const std::string& key, uint64_t tick_seq, OpenPass& p,
                        const model::PassEnd& e, const FamilyView* view) {
  PassSummary s;
  s.tick_seq = tick_seq;
  s.tick = p.tick;
  s.view_seq = e.view_seq;
  if (!fast_) s.outcome_seqs = p.outcome_seqs;
  static const FamilyView kEmpty;
  RunPass(key, std::move(s), view ? *view : kEmpty, p, e.accounting);
}

// controller.noDowntime: a pass at every fire time (plus the controller's 100 ms timer delta,
// docs/semantics.md §7.3) between the previous pass of the CronJob and `until` that no recorded
// pass covered. The synthesized passes read the view of the previous pass: nothing was recorded
// meanwhile.
void Engine::Synthesize(const std::string& key, Time until, const OpenPass& p) {
  auto c = chain_.find(key);
  if (c == chain_.end() || p.tzdb == nullptr) return;
  const uint64_t view_seq = c->second.last_view_seq;
  auto view = history_.At(key, view_seq);
  if (!view || !view->cron_job) return;
  const model::CronJob cj = ApplyWhatIf(options_.what_if, *view->cron_job);
  const auto formatted = reconciler::FormatSchedule(cj.spec.schedule, cj.spec.time_zone);
  auto schedule = schedule_memo_.Get(formatted.text, *p.tzdb);
  if (formatted.contains_tz || !schedule.ok()) return;
  size_t made = 0;
  for (auto t = (*schedule)->Next(c->second.last_now);
       t && t->Add(kSynthesisGrace) < until && made < kMaxSynthesizedPerGap;
       t = (*schedule)->Next(*t), ++made) {
    PassSummary s;
    s.synthesized = true;
    s.tick = model::Tick{t->Add(reconciler::kNextScheduleDelta), p.tick.namespace_, p.tick.name,
                         "what-if:noDowntime"};
    s.view_seq = view_seq;
    OpenPass synth;
    synth.tick = s.tick;
    synth.in_scope = true;
    synth.history_cleanup = p.history_cleanup;
    synth.tzdb = p.tzdb;
    RunPass(key, std::move(s), *view, synth, "");
  }
}

}  // namespace cronledger::replay::internal
