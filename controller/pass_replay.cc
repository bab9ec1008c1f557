#include "controller/pass_replay.h"

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "controller/local_zone.h"
#include "model/api_call.h"
#include "model/json.h"
#include "reconciler/decide.h"
#include "reconciler/invalid_object.h"
#include "store/view.h"

namespace cronledger::controller {
namespace {

struct PassRecords {
  model::Tick tick;
  bool history_cleanup = true;  // the configuration in effect at the Tick
  std::vector<uint64_t> intent_seqs;
  std::vector<model::ApiOutcome> outcomes;  // in call order
  std::optional<model::PassEnd> end;
};

struct LogIndex {
  std::map<uint64_t, PassRecords> passes;                 // by tick seq
  std::map<uint64_t, uint64_t> intent_tick;               // intent seq -> tick seq
  std::set<uint64_t> answered;                            // intent seqs that have an outcome
  std::map<uint64_t, std::vector<uint64_t>> by_view_seq;  // completed passes by view_seq
};

// The recorded Local zone must be the zone `tzdb.Local()` is. Ledgers written before the
// controller recorded the IANA name say "Local": that names no zone, so it cannot be checked.
Status CheckLocalZone(const std::string& recorded, const model::TimeZoneDb& tzdb) {
  if (recorded == "Local") return Status::Ok();
  auto zone = tzdb.Load(recorded);
  if (!zone.ok() || !SameZone(**zone, *tzdb.Local())) {
    return Status::FailedPrecondition("replay: passes ran with local zone " + recorded +
                                      ", which is not the tz database's Local zone");
  }
  return Status::Ok();
}

Status AddRecord(const store::LogRecord& rec, const model::TimeZoneDb& tzdb, bool* cleanup,
                 LogIndex* x) {
  const uint64_t seq = rec.seq;
  if (const auto* c = std::get_if<model::ConfigChange>(&rec.input)) {
    if (c->key == "historyCleanup") *cleanup = c->value != "false";
    if (c->key == "localTimeZone") CL_RETURN_IF_ERROR(CheckLocalZone(c->value, tzdb));
  } else if (const auto* t = std::get_if<model::Tick>(&rec.input)) {
    x->passes[seq] = PassRecords{*t, *cleanup, {}, {}, std::nullopt};
  } else if (const auto* i = std::get_if<model::ActionIntent>(&rec.input)) {
    auto it = x->passes.find(i->tick_seq);
    if (it == x->passes.end() || it->second.end || i->call_index != it->second.intent_seqs.size()) {
      return Status::Corruption("replay: intent " + std::to_string(seq) + " out of its pass");
    }
    it->second.intent_seqs.push_back(seq);
    x->intent_tick[seq] = i->tick_seq;
  } else if (const auto* o = std::get_if<model::ActionOutcome>(&rec.input)) {
    auto tick = x->intent_tick.find(o->decision_seq);
    if (tick == x->intent_tick.end()) return Status::Ok();  // not a controller pass's outcome
    PassRecords& p = x->passes[tick->second];
    if (p.intent_seqs.empty() || p.intent_seqs.back() != o->decision_seq ||
        !x->answered.insert(o->decision_seq).second) {
      return Status::Corruption("replay: outcome " + std::to_string(seq) + " out of order");
    }
    CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(o->payload));
    CL_ASSIGN_OR_RETURN(model::ApiOutcome outcome, model::DecodeApiOutcome(j));
    p.outcomes.push_back(std::move(outcome));
  } else if (const auto* e = std::get_if<model::PassEnd>(&rec.input)) {
    auto it = x->passes.find(e->tick_seq);
    if (it == x->passes.end() || it->second.end || e->calls != it->second.outcomes.size()) {
      return Status::Corruption("replay: pass end " + std::to_string(seq) + " out of its pass");
    }
    it->second.end = *e;
    x->by_view_seq[e->view_seq].push_back(e->tick_seq);
  }
  return Status::Ok();
}

Status IndexLog(store::Ledger& ledger, const model::TimeZoneDb& tzdb, LogIndex* x) {
  bool cleanup = true;
  Status status;
  CL_RETURN_IF_ERROR(ledger.ScanInputs(1, false, [&](const store::LogRecord& rec) {
    status = AddRecord(rec, tzdb, &cleanup, x);
    return status.ok();
  }));
  return status;
}

// The objects a pass read, rebuilt by folding the log (store/view.h) up to its view_seq.
struct ViewSnapshot {
  model::CronJob cron_job;
  std::vector<model::Job> jobs;
  std::optional<reconciler::InvalidCronJob> invalid;  // its bytes or a Job's do not decode
};

class ViewRebuilder {
 public:
  Status Fold(const store::LogRecord& rec) {
    const auto* ev = std::get_if<model::WatchEvent>(&rec.input);
    if (ev == nullptr || ev->type == model::WatchEventType::kBookmark) return Status::Ok();
    const std::string key = store::view_key::Object(ev->kind, ev->namespace_, ev->name);
    CL_ASSIGN_OR_RETURN(std::optional<uint64_t> before, SourceOf(key));
    CL_RETURN_IF_ERROR(store::FoldWatchEvent(*ev, rec.seq, &view_));
    CL_ASSIGN_OR_RETURN(std::optional<uint64_t> after, SourceOf(key));
    if (after == rec.seq) raws_[rec.seq] = ev->raw;
    if (before && before != after) raws_.erase(*before);  // no longer in the view
    return Status::Ok();
  }

  Result<ViewSnapshot> Snapshot(const std::string& ns, const std::string& name) {
    ViewSnapshot s;
    const std::string cj_key = store::view_key::Object(model::ObjectKind::kCronJob, ns, name);
    CL_ASSIGN_OR_RETURN(const std::string* raw, RawBytesOf(cj_key));
    auto cj = reconciler::DecodeStoredCronJob(*raw);
    if (!cj.ok()) {
      // What the pass read: the entry's uid and seq, and the error (reconciler/invalid_object.h).
      CL_ASSIGN_OR_RETURN(std::optional<std::string> bytes, view_.Get(cj_key));
      CL_ASSIGN_OR_RETURN(store::ObjectEntry e, store::DecodeObjectEntry(*bytes));
      s.invalid = reconciler::InvalidCronJob{model::CronJobRef{e.namespace_, e.name, e.uid},
                                             e.source_seq, cj.status().message()};
      return s;
    }
    s.cron_job = std::move(*cj);
    const std::string prefix = store::view_key::OwnerPrefix(ns, name);
    for (auto it = view_.entries().lower_bound(prefix);
         it != view_.entries().end() && it->first.starts_with(prefix); ++it) {
      const std::string job = it->first.substr(prefix.size());
      const std::string job_key = store::view_key::Object(model::ObjectKind::kJob, ns, job);
      CL_ASSIGN_OR_RETURN(const std::string* job_raw, RawBytesOf(job_key));
      auto decoded = reconciler::DecodeStoredJob(*job_raw);
      if (!decoded.ok()) {
        // The pass stopped at the first Job that does not decode (reconciler/invalid_object.h).
        CL_ASSIGN_OR_RETURN(std::optional<uint64_t> job_seq, SourceOf(job_key));
        const model::ObjectMeta& m = s.cron_job.metadata;
        s.invalid = reconciler::InvalidCronJob{model::CronJobRef{m.namespace_, m.name, m.uid},
                                               job_seq.value_or(0),
                                               reconciler::StoredJobError(job, decoded.status())};
        s.jobs.clear();
        return s;
      }
      s.jobs.push_back(std::move(*decoded));
    }
    return s;
  }

 private:
  Result<std::optional<uint64_t>> SourceOf(const std::string& key) {
    CL_ASSIGN_OR_RETURN(std::optional<std::string> bytes, view_.Get(key));
    if (!bytes) return std::optional<uint64_t>();
    CL_ASSIGN_OR_RETURN(store::ObjectEntry e, store::DecodeObjectEntry(*bytes));
    return std::optional<uint64_t>(e.source_seq);
  }
  Result<const std::string*> RawBytesOf(const std::string& key) {
    CL_ASSIGN_OR_RETURN(std::optional<uint64_t> seq, SourceOf(key));
    if (!seq) return Status::Corruption("replay: " + store::view_key::Describe(key) + " missing");
    auto it = raws_.find(*seq);
    if (it == raws_.end()) return Status::Corruption("replay: raw bytes pruned or missing");
    return &it->second;
  }

  store::MemViewStore view_;
  std::map<uint64_t, std::string> raws_;  // source seq -> raw bytes, for objects in the view
};

Result<std::map<uint64_t, ViewSnapshot>> RebuildViews(store::Ledger& ledger, const LogIndex& x) {
  std::map<uint64_t, ViewSnapshot> out;  // by tick seq
  ViewRebuilder rebuilder;
  auto next = x.by_view_seq.begin();
  Status status;
  auto take_due = [&](uint64_t folded_through) {
    for (; next != x.by_view_seq.end() && next->first <= folded_through; ++next) {
      for (uint64_t tick_seq : next->second) {
        const model::Tick& t = x.passes.at(tick_seq).tick;
        auto snap = rebuilder.Snapshot(t.namespace_, t.name);
        if (!snap.ok()) return snap.status();
        out[tick_seq] = std::move(*snap);
      }
    }
    return Status::Ok();
  };
  CL_RETURN_IF_ERROR(take_due(0));
  CL_RETURN_IF_ERROR(ledger.ScanInputs(1, true, [&](const store::LogRecord& rec) {
    status = rebuilder.Fold(rec);
    if (status.ok()) status = take_due(rec.seq);
    return status.ok();
  }));
  CL_RETURN_IF_ERROR(status);
  return out;
}

std::string CompareDecisions(const std::vector<model::Decision>& recorded,
                             const std::vector<model::Decision>& replayed) {
  if (recorded.size() != replayed.size()) {
    return "recorded " + std::to_string(recorded.size()) + " decisions, replay made " +
           std::to_string(replayed.size());
  }
  for (size_t i = 0; i < recorded.size(); ++i) {
    if (model::EncodeDecisionRecord(recorded[i]) != model::EncodeDecisionRecord(replayed[i])) {
      return "decision " + std::to_string(i) + " differs: recorded " +
             model::CanonicalDecisionBytes(recorded[i]) + " replayed " +
             model::CanonicalDecisionBytes(replayed[i]);
    }
  }
  return "";
}

// Replays one completed pass; returns the mismatch ("" when exact).
std::string ReplayOne(const PassRecords& p, uint64_t tick_seq, ViewSnapshot view,
                      model::AccountingState accounting, const model::TimeZoneDb& tzdb,
                      ReplayedPass* out) {
  reconciler::Step step;
  if (view.invalid) {
    // The pass of a CronJob that does not decode makes no call (reconciler/invalid_object.h).
    step.result = reconciler::DecideInvalidCronJob(*view.invalid, p.tick.now, accounting);
  } else {
    reconciler::SyncInput in;
    in.cron_job = std::move(view.cron_job);
    in.jobs = std::move(view.jobs);
    in.now = p.tick.now;
    in.options.history_cleanup = p.history_cleanup;
    in.tzdb = &tzdb;
    in.accounting = std::move(accounting);
    in.outcomes = p.outcomes;
    step = reconciler::Decide(in);
  }
  if (step.next_call) return "replay needs a call the pass did not record";
  if (step.result.actions.size() != p.outcomes.size()) return "replay made fewer calls";
  for (size_t i = 0; i < step.result.decisions.size(); ++i) {
    model::Decision& d = step.result.decisions[i];
    d.cause = model::DecisionCause{tick_seq, p.end->view_seq, p.tick.trigger};
    if (i < out->recorded.size()) d.seq = out->recorded[i].seq;
  }
  out->replayed = std::move(step.result.decisions);
  std::string mismatch = CompareDecisions(out->recorded, out->replayed);
  const std::string acc = model::AccountingStateBytes(step.result.accounting);
  if (mismatch.empty() && acc != p.end->accounting) mismatch = "accounting state differs";
  return mismatch;
}

}  // namespace

Result<ReplayReport> ReplayPasses(store::Ledger& ledger, const model::TimeZoneDb& tzdb) {
  LogIndex x;
  CL_RETURN_IF_ERROR(IndexLog(ledger, tzdb, &x));
  CL_ASSIGN_OR_RETURN(auto views, RebuildViews(ledger, x));
  std::map<uint64_t, std::vector<model::Decision>> decisions;  // by tick seq
  CL_RETURN_IF_ERROR(ledger.ScanDecisions(1, [&](const model::Decision& d) {
    decisions[d.cause.tick_seq].push_back(d);
    return true;
  }));
  ReplayReport report;
  // The accounting state a pass starts from: the previous completed pass of the same CronJob.
  std::map<std::string, std::pair<std::string, std::string>> last;  // key -> (uid, accounting)
  for (auto& [tick_seq, p] : x.passes) {
    for (uint64_t intent : p.intent_seqs) {
      if (x.answered.count(intent) == 0) report.dangling_intents.push_back(intent);
    }
    if (!p.end) {
      report.interrupted_ticks.push_back(tick_seq);
      continue;
    }
    const std::string key = p.tick.namespace_ + "/" + p.tick.name;
    model::AccountingState accounting;
    auto prev = last.find(key);
    if (prev != last.end() && prev->second.first == p.end->uid) {
      CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(prev->second.second));
      CL_ASSIGN_OR_RETURN(accounting, model::DecodeAccountingState(j));
    }
    last[key] = {p.end->uid, p.end->accounting};
    ReplayedPass& out = report.passes.emplace_back();
    out.tick_seq = tick_seq;
    out.tick = p.tick;
    out.recorded = std::move(decisions[tick_seq]);
    out.mismatch =
        ReplayOne(p, tick_seq, std::move(views.at(tick_seq)), std::move(accounting), tzdb, &out);
    if (!out.mismatch.empty()) ++report.mismatches;
  }
  return report;
}

}  // namespace cronledger::controller
