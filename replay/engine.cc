#include "replay/engine.h"

#include <thread>

#include "model/job_fields.h"
#include "model/json.h"
#include "replay/engine_internal.h"

namespace cronledger::replay {
namespace internal {

std::function<bool(std::string_view, std::string_view)> Engine::MakeFilter(const ReplayOptions& o) {
  if (!o.scope.cron_job) return nullptr;  // a label selector needs every family's labels
  const std::string want = *o.scope.cron_job;
  return [want](std::string_view ns, std::string_view name) { return FamilyKey(ns, name) == want; };
}

void Engine::Progress(bool done) {
  if (options_.progress && (done || records_ % options_.progress_every == 0)) {
    options_.progress(ReplayProgress{records_, total_, done});
  }
}

Status Engine::OnConfig(const model::ConfigChange& c) {
  if (c.key == "historyCleanup") history_cleanup_ = c.value != "false";
  if (c.key != "localTimeZone") return Status::Ok();
  // The controller records the Local zone's name, which the tz database calls "Local" whatever
  // zone it was opened with; then the zone comes from the options.
  const std::string zone = c.value == "Local" ? options_.local_zone : c.value;
  auto it = tzdbs_.find(zone);
  if (it == tzdbs_.end()) {
    model::SystemTimeZoneDbOptions o;
    o.zoneinfo_dir = options_.zoneinfo_dir;
    o.local_zone = zone;
    CL_ASSIGN_OR_RETURN(auto db, model::OpenSystemTimeZoneDb(o));
    it = tzdbs_.emplace(zone, std::move(db)).first;
  }
  tzdb_ = it->second.get();
  return Status::Ok();
}

Status Engine::OnIntent(uint64_t seq, const model::ActionIntent& i) {
  auto it = open_.find(i.tick_seq);
  if (it == open_.end()) {
    // Only a bundle may start inside a pass (its Tick precedes the window); such a pass is out
    // of scope. In a store the Tick is always there.
    return Status::Ok();
  }
  OpenPass& p = it->second;
  if (i.call_index != p.intent_seqs.size()) {
    return Status::Corruption("replay: intent " + std::to_string(seq) + " is call " +
                              std::to_string(i.call_index) + " of tick " +
                              std::to_string(i.tick_seq) + ", expected call " +
                              std::to_string(p.intent_seqs.size()));
  }
  p.intent_seqs.push_back(seq);
  p.calls.push_back({i.verb, i.kind, i.namespace_, i.name});
  intent_tick_[seq] = i.tick_seq;
  return Status::Ok();
}

Status Engine::OnOutcome(uint64_t seq, const model::ActionOutcome& o) {
  auto tick = intent_tick_.find(o.decision_seq);
  if (tick == intent_tick_.end()) return Status::Ok();  // not a pass's outcome, or out of scope
  const uint64_t tick_seq = tick->second;
  intent_tick_.erase(tick);
  OpenPass& p = open_.at(tick_seq);
  if (p.intent_seqs.empty() || p.intent_seqs.back() != o.decision_seq ||
      p.outcomes.size() + 1 != p.intent_seqs.size()) {
    return Status::Corruption("replay: outcome " + std::to_string(seq) + " out of order");
  }
  p.outcome_seqs.push_back(seq);
  if (!p.in_scope) {
    p.outcomes.emplace_back();
    return Status::Ok();
  }
  if (fast_) {  // a verify-only pass reads only some of the outcome (model/job_fields.h)
    CL_ASSIGN_OR_RETURN(model::ApiOutcome outcome,
                        model::DecodeOutcomeFields(o.payload, o.verb, o.kind));
    p.outcomes.push_back(std::move(outcome));
    return Status::Ok();
  }
  CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(o.payload));
  CL_ASSIGN_OR_RETURN(model::ApiOutcome outcome, model::DecodeApiOutcome(j));
  p.outcomes.push_back(std::move(outcome));
  return Status::Ok();
}

// A pass that is not replayed hands its recorded accounting state to the next one.
Status Engine::Seed(const model::PassEnd& e) {
  if (!options_.scope.Selects(e.namespace_, e.name)) return Status::Ok();
  CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(e.accounting));
  CL_ASSIGN_OR_RETURN(model::AccountingState s, model::DecodeAccountingState(j));
  ChainEntry c{e.uid, std::move(s), false, e.time, e.view_seq};
  if (queue_) {  // in order with the passes the deciding thread has yet to decide
    PassTask t;
    t.key = FamilyKey(e.namespace_, e.name);
    t.seed = true;
    t.chain = std::move(c);
    t.changes = std::move(changes_);
    changes_.clear();
    queue_->Push(std::move(t));
  } else {
    chain_[FamilyKey(e.namespace_, e.name)] = std::move(c);
  }
  return Status::Ok();
}

Status Engine::OnPassEnd(uint64_t seq, const model::PassEnd& e) {
  auto it = open_.find(e.tick_seq);
  if (it == open_.end()) return Seed(e);  // a bundle's seed: the last pass before its window
  OpenPass p = std::move(it->second);
  open_.erase(it);
  if (e.calls != p.outcomes.size()) {
    return Status::Corruption("replay: pass end " + std::to_string(seq) + " counts " +
                              std::to_string(e.calls) + " calls, the log has " +
                              std::to_string(p.outcomes.size()) + " outcomes");
  }
  if (changes_mode_) {  // no versions: the deciding thread applies the changes
    if (!p.in_scope) {
      PassTask t;
      t.key = FamilyKey(e.namespace_, e.name);
      t.trim = true;
      t.end.view_seq = e.view_seq;
      t.changes = std::move(changes_);
      changes_.clear();
      queue_->Push(std::move(t));
      return Seed(e);
    }
    replayed_ticks_.Insert(e.tick_seq);
    ReplayPass(e.tick_seq, p, e);
    return Status::Ok();
  }
  const std::string key = FamilyKey(e.namespace_, e.name);
  auto* released = queue_ ? &released_ : nullptr;
  if (!p.in_scope) {
    history_.Trim(key, e.view_seq, released);
    return Seed(e);
  }
  replayed_ticks_.Insert(e.tick_seq);
  ReplayPass(e.tick_seq, p, e);
  history_.Trim(key, e.view_seq, released);
  return Status::Ok();
}

Status Engine::OnInput(const store::LogRecord& rec) {
  ++result_.inputs_scanned;
  ++records_;
  Progress(false);
  if (observer_ != nullptr) observer_->OnInput(rec);
  const uint64_t seq = rec.seq;
  return std::visit(
      [&](const auto& in) -> Status {
        using T = std::decay_t<decltype(in)>;
        if constexpr (std::is_same_v<T, model::WatchEvent>) {
          return history_.Fold(rec);
        } else if constexpr (std::is_same_v<T, model::ConfigChange>) {
          return OnConfig(in);
        } else if constexpr (std::is_same_v<T, model::Tick>) {
          all_ticks_.Insert(seq);
          OpenPass& p = open_[seq];
          p.tick = in;
          p.in_scope =
              options_.scope.Selects(in.namespace_, in.name) && options_.scope.InWindow(in.now);
          if (p.in_scope && options_.scope.selector) {
            const std::string key = FamilyKey(in.namespace_, in.name);
            auto view = history_.Latest(key);
            p.in_scope = options_.scope.SelectsLabels(view ? view->cron_job.get() : nullptr);
            if (p.in_scope) label_selected_.insert(key);
          }
          p.history_cleanup = history_cleanup_;
          p.tzdb = tzdb_;
          return Status::Ok();
        } else if constexpr (std::is_same_v<T, model::ActionIntent>) {
          return OnIntent(seq, in);
        } else if constexpr (std::is_same_v<T, model::ActionOutcome>) {
          return OnOutcome(seq, in);
        } else {
          return OnPassEnd(seq, in);
        }
      },
      rec.input);
}

Result<ReplayResult> Engine::Run() {
  total_ = source_.ApproximateRecords();
  CL_RETURN_IF_ERROR(OnConfig(model::ConfigChange{Time(), "localTimeZone", "Local"}));
  if (fast_) {
    // Verify-only: the recorded records are read (not decoded) and matched with the derived
    // decisions on two more threads while the passes are decided (StreamVerifier).
    verifier_ = std::make_unique<StreamVerifier>(source_);
    std::thread decider;
    if (options_.decide_on_second_thread) {
      queue_ = std::make_unique<PassQueue>();
      // A label selector reads the latest version of a family at each Tick: versions are kept.
      changes_mode_ = !options_.scope.selector;
      // The objects are decoded on the deciding thread (the scanning thread is the busier one).
      if (changes_mode_) history_.SendChangesTo(&changes_, /*defer_decode=*/true);
      decider = std::thread([this] { DecideQueued(); });
    }
    Status status;
    Status scanned = source_.ScanInputs([&](const store::LogRecord& rec) {
      status = OnInput(rec);
      return status.ok() && !fast_failed_ && !verifier_->failed();
    });
    if (queue_) {
      queue_->Close();
      decider.join();
      queue_.reset();
    }
    if (scanned.ok() && status.ok() && !fast_failed_) FinishFast();
    verifier_.reset();
    CL_RETURN_IF_ERROR(scanned);
    CL_RETURN_IF_ERROR(status);
    if (fast_failed_) return std::move(result_);
    for (const auto& [tick_seq, p] : open_) result_.interrupted_passes += p.in_scope;
    Progress(true);
    return std::move(result_);
  }
  // The decision log is read (and decoded) on a second thread while the inputs are replayed;
  // which of its records are compared is decided after the input scan, in log order, so the
  // result does not depend on the threads' timing.
  std::vector<model::Decision> recorded;
  Status recorded_status;
  std::thread reader([&] { recorded_status = ReadRecorded(&recorded); });
  // A verify-only replay decides its passes on one more thread, in log order (PassQueue).
  std::thread decider;
  if (options_.decide_on_second_thread && observer_ == nullptr && options_.what_if.empty()) {
    queue_ = std::make_unique<PassQueue>();
    decider = std::thread([this] { DecideQueued(); });
  }
  Status status;
  Status scanned = source_.ScanInputs([&](const store::LogRecord& rec) {
    status = OnInput(rec);
    return status.ok();
  });
  if (queue_) {
    queue_->Close();
    decider.join();
    queue_.reset();
  }
  reader.join();
  CL_RETURN_IF_ERROR(scanned);
  CL_RETURN_IF_ERROR(status);
  CL_RETURN_IF_ERROR(recorded_status);
  for (const auto& [tick_seq, p] : open_) result_.interrupted_passes += p.in_scope;
  SelectRecorded(std::move(recorded));
  Compare();
  Progress(true);
  return std::move(result_);
}

}  // namespace internal

Result<ReplayResult> Replay(RecordSource& source, const ReplayOptions& options,
                            ReplayObserver* observer) {
  {
    internal::Engine engine(source, options, observer);
    auto result = engine.Run();
    if (!result.ok() || !engine.fast_failed()) return result;
  }
  // A verify-only replay that found a difference: the full replay reports it.
  ReplayOptions full = options;
  full.verify_only = false;
  internal::Engine engine(source, full, observer);
  auto result = engine.Run();
  if (result.ok()) {
    result->passes.clear();
    result->derived.clear();
    result->derived_pass.clear();
    result->recorded.clear();
  }
  return result;
}

}  // namespace cronledger::replay
