// One reconcile pass of one CronJob under the outbox discipline (docs/design.md rules 1 and 3,
// docs/controller.md "Records of a pass"):
//   Tick  ->  [ActionIntent -> perform -> ActionOutcome]*  ->  decisions + PassEnd + state
// Every intent is durable before its call is made, every outcome is durable before the pass
// goes on, and the decisions, the PassEnd and the accounting state are one unit of work. The Tick
// has no commit of its own: it goes with the pass's first intent, or with its end when the pass
// makes no call (the ledger fills the tick_seq of that intent or PassEnd and of the decisions).
// A crash before that first commit leaves no trace of the pass, which made no call yet.

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "controller/controller_impl.h"
#include "model/api_call.h"
#include "model/json.h"
#include "reconciler/invalid_object.h"

namespace cronledger::controller {
namespace {

// A pass makes a bounded number of calls (history cleanup plus a few); more means a bug.
constexpr size_t kMaxCallsPerPass = 10000;

std::pair<std::string, std::string> SplitKey(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

model::ObjectKind KindOf(model::ApiKind k) {
  return k == model::ApiKind::kJob ? model::ObjectKind::kJob : model::ObjectKind::kCronJob;
}

std::string ResultName(const reconciler::SyncResult& r) {
  if (r.error) return "error";
  return r.requeue_after ? "requeue" : "done";
}

model::ActionIntent IntentOf(const model::ApiCall& call, Time now, uint64_t tick_seq,
                             size_t index) {
  return model::ActionIntent{now,
                             tick_seq,
                             static_cast<uint32_t>(index),
                             std::string(model::ApiVerbName(call.verb)),
                             KindOf(call.kind),
                             call.namespace_,
                             call.name,
                             model::DumpJson(model::EncodeApiCall(call))};
}

model::ActionOutcome OutcomeOf(const model::ApiCall& call, const model::ApiOutcome& outcome,
                               Time now, uint64_t intent_seq) {
  return model::ActionOutcome{now,
                              intent_seq,
                              std::string(model::ApiVerbName(call.verb)),
                              KindOf(call.kind),
                              call.namespace_,
                              call.name,
                              outcome.ok() ? "OK" : outcome.reason,
                              model::DumpJson(model::EncodeApiOutcome(outcome))};
}

PassReport Failed(PassReport report, const Status& status) {
  report.error = status.ToString();
  return report;
}

}  // namespace

std::string EncodeControllerState(const std::string& uid, const model::AccountingState& s) {
  return EncodeControllerStateBytes(uid, model::AccountingStateBytes(s));
}

// DumpJson of {"uid": uid, "accounting": <tree>} orders the keys ("accounting" first) and writes
// no spaces: the same bytes, without building the tree again.
std::string EncodeControllerStateBytes(const std::string& uid, std::string_view accounting) {
  std::string out = "{\"accounting\":";
  out.append(accounting);
  out += ",\"uid\":";
  out += model::DumpJson(model::Json(uid));
  out += '}';
  return out;
}

Result<std::pair<std::string, model::AccountingState>> DecodeControllerState(
    std::string_view bytes) {
  CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(bytes));
  if (!j.is_object() || !j.contains("uid") || !j["uid"].is_string() || !j.contains("accounting")) {
    return Status::Corruption("controller state: expected {\"uid\", \"accounting\"}");
  }
  CL_ASSIGN_OR_RETURN(model::AccountingState s, model::DecodeAccountingState(j["accounting"]));
  return std::make_pair(j["uid"].get<std::string>(), std::move(s));
}

Result<model::AccountingState> ControllerImpl::LoadAccounting(const std::string& key,
                                                              const std::string& uid) {
  auto blob = ledger_.GetControllerState(key);
  if (blob.status().IsNotFound()) return model::AccountingState{};
  if (!blob.ok()) return blob.status();
  // The blob read is cheap; its JSON decode is what the cache saves (the bytes must match).
  std::shared_ptr<const CachedAccounting> held = decoded_.GetAccounting(key, *blob);
  if (held == nullptr) {
    CL_ASSIGN_OR_RETURN(auto state, DecodeControllerState(*blob));
    auto fresh = std::make_shared<CachedAccounting>();
    fresh->blob = std::move(*blob);
    fresh->uid = std::move(state.first);
    fresh->state = std::move(state.second);
    held = fresh;
    decoded_.PutAccounting(key, held);
  }
  // A CronJob deleted and created again under the same name starts with fresh bookkeeping.
  if (held->uid != uid) return model::AccountingState{};
  return held->state;
}

reconciler::SyncInputRef ControllerImpl::PassContext::Ref() const {
  reconciler::SyncInputRef ref;
  ref.cron_job = cron_job.get();
  ref.jobs = job_ptrs;
  ref.now = in.now;
  ref.options = in.options;
  ref.tzdb = in.tzdb;
  ref.accounting = &in.accounting;
  ref.outcomes = in.outcomes;
  return ref;
}

Status ControllerImpl::ReadView(PassContext& ctx) {
  // The objects the cache holds at their entry's seq are taken from it (not read, not parsed);
  // with the cache off, nothing is held and every object is decoded here.
  std::shared_ptr<const model::CronJob> held_cron_job;
  std::unordered_map<std::string, std::shared_ptr<const model::Job>> held_jobs;
  auto held = [&](const store::ObjectEntry& e) {
    if (e.kind == model::ObjectKind::kCronJob) {
      held_cron_job = decoded_.GetCronJob(e.namespace_, e.name, e.source_seq);
      return held_cron_job != nullptr;
    }
    auto job = decoded_.GetJob(e.namespace_, e.name, e.source_seq);
    if (job == nullptr) return false;
    held_jobs[e.name] = std::move(job);
    return true;
  };
  auto view = ledger_.ReadCronJobViewRaw(ctx.ns, ctx.name, held);
  if (view.ok()) {
    ctx.view_seq = view->last_input_seq;
    const store::ObjectEntry& ce = view->cron_job.entry;
    if (held_cron_job != nullptr) {
      ctx.cron_job = std::move(held_cron_job);
    } else {
      auto decoded = reconciler::DecodeStoredCronJob(view->cron_job.raw);
      if (!decoded.ok()) {
        // Not an error of the pass: the pass records why it does not act on the CronJob
        // (reconciler/invalid_object.h). Its Jobs are not read.
        ctx.invalid = reconciler::InvalidCronJob{model::CronJobRef{ce.namespace_, ce.name, ce.uid},
                                                 ce.source_seq, decoded.status().message()};
        return Status::Ok();
      }
      ctx.cron_job = std::make_shared<const model::CronJob>(std::move(*decoded));
      decoded_.PutCronJob(ce.namespace_, ce.name, ce.source_seq, ctx.cron_job);
    }
    ctx.jobs.reserve(view->jobs.size());
    for (const store::ViewObject& obj : view->jobs) {
      auto it = held_jobs.find(obj.entry.name);
      if (it != held_jobs.end()) {
        ctx.jobs.push_back(std::move(it->second));
        continue;
      }
      CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(obj.raw));
      auto decoded = model::DecodeJob(j);
      if (!decoded.ok()) return decoded.status().WithContext("stored Job");
      ctx.jobs.push_back(std::make_shared<const model::Job>(std::move(*decoded)));
      decoded_.PutJob(obj.entry.namespace_, obj.entry.name, obj.entry.source_seq, ctx.jobs.back());
    }
    for (const auto& job : ctx.jobs) ctx.job_ptrs.push_back(job.get());
    return Status::Ok();
  }
  if (view.status().code() != Status::Code::kFailedPrecondition) return view.status();
  // A ledger without ReadCronJobViewRaw: the decoded view below.
  CL_ASSIGN_OR_RETURN(store::CronJobView decoded, ledger_.ReadCronJobView(ctx.ns, ctx.name));
  ctx.view_seq = decoded.last_input_seq;
  ctx.cron_job = std::make_shared<const model::CronJob>(std::move(decoded.cron_job));
  for (model::Job& job : decoded.jobs) {
    ctx.jobs.push_back(std::make_shared<const model::Job>(std::move(job)));
  }
  for (const auto& job : ctx.jobs) ctx.job_ptrs.push_back(job.get());
  return Status::Ok();
}

Result<std::optional<ControllerImpl::PassContext>> ControllerImpl::BeginPass(
    const std::string& key, const std::string& why) {
  PassContext ctx;
  ctx.key = key;
  std::tie(ctx.ns, ctx.name) = SplitKey(key);
  ctx.why = why;
  const Status read = ReadView(ctx);
  if (read.IsNotFound()) {
    // docs/semantics.md §3 step 1: gone from the cache -> done, no error, no requeue. Its state
    // goes too.
    store::UnitOfWork unit;
    unit.controller_state.emplace_back(key, std::nullopt);
    CL_RETURN_IF_ERROR(ledger_.Commit(std::move(unit)).status());
    return std::optional<PassContext>();
  }
  CL_RETURN_IF_ERROR(read);
  ctx.uid = ctx.invalid ? ctx.invalid->ref.uid : ctx.cron_job->metadata.uid;
  CL_ASSIGN_OR_RETURN(ctx.in.accounting, LoadAccounting(key, ctx.uid));
  ctx.in.options = options_.decide;
  ctx.in.tzdb = &tzdb_;
  ++passes_;
  return std::optional<PassContext>(std::move(ctx));
}

reconciler::Step ControllerImpl::InvalidStep(const PassContext& ctx) {
  reconciler::Step step;
  step.result = reconciler::DecideInvalidCronJob(*ctx.invalid, ctx.in.now, ctx.in.accounting);
  return step;
}

// The Tick (in *unsent) is committed with the first intent, the outcome of call k together with
// the intent of call k+1 (or with the end of the pass): one commit per call, and each intent is
// durable before its call is made.
Result<reconciler::Step> ControllerImpl::PerformCalls(PassContext& ctx,
                                                      std::vector<model::Input>* unsent) {
  reconciler::Step step = reconciler::Decide(ctx.Ref());
  while (step.next_call) {
    if (ctx.in.outcomes.size() >= kMaxCallsPerPass) {
      return Status::Internal("reconcile pass made more than " + std::to_string(kMaxCallsPerPass) +
                              " API calls");
    }
    const model::ApiCall& call = *step.next_call;
    store::UnitOfWork unit;
    unit.inputs = std::move(*unsent);
    unsent->clear();
    unit.inputs.emplace_back(IntentOf(call, ctx.in.now, ctx.tick_seq, ctx.in.outcomes.size()));
    CL_ASSIGN_OR_RETURN(store::CommitResult committed, ledger_.Commit(std::move(unit)));
    if (ctx.tick_seq == 0) ctx.tick_seq = committed.first_input_seq;  // the Tick led that unit
    model::ApiOutcome outcome = actuator_.Perform(call);
    ++api_calls_;
    unsent->emplace_back(OutcomeOf(call, outcome, ctx.in.now, committed.last_input_seq));
    ctx.in.outcomes.push_back(std::move(outcome));
    step = reconciler::Decide(ctx.Ref());
  }
  return step;
}

std::shared_ptr<CachedAccounting> ControllerImpl::AppendEnd(const PassContext& ctx,
                                                            std::vector<model::Input> unsent,
                                                            reconciler::SyncResult& result,
                                                            store::UnitOfWork* end) {
  // With no call made, the Tick is in this unit and ctx.tick_seq is 0: the ledger fills it in
  // the decisions' causes and the PassEnd.
  for (model::Decision& d : result.decisions) {
    d.cause = model::DecisionCause{ctx.tick_seq, ctx.view_seq, ctx.why};
  }
  for (model::Input& in : unsent) end->inputs.push_back(std::move(in));
  std::string accounting = model::AccountingStateBytes(result.accounting);
  std::string blob = EncodeControllerStateBytes(ctx.uid, accounting);
  std::shared_ptr<CachedAccounting> next;
  if (decoded_.enabled()) {
    next = std::make_shared<CachedAccounting>(CachedAccounting{blob, ctx.uid, result.accounting});
  }
  end->controller_state.emplace_back(ctx.key, std::move(blob));
  end->inputs.emplace_back(model::PassEnd{ctx.in.now, ctx.tick_seq, ctx.view_seq, ctx.ns, ctx.name,
                                          ctx.uid, static_cast<uint32_t>(ctx.in.outcomes.size()),
                                          ResultName(result), std::move(accounting)});
  for (model::Decision& d : result.decisions) end->decisions.push_back(std::move(d));
  result.decisions.clear();
  return next;
}

// The last outcome, the decisions, the PassEnd and the state blob: one unit of work.
Status ControllerImpl::FinishPass(const PassContext& ctx, std::vector<model::Input> unsent,
                                  reconciler::SyncResult& result) {
  store::UnitOfWork end;
  std::shared_ptr<CachedAccounting> next = AppendEnd(ctx, std::move(unsent), result, &end);
  const size_t decision_count = end.decisions.size();
  CL_RETURN_IF_ERROR(ledger_.Commit(std::move(end)).status());
  // The next pass reads these bytes back and finds them decoded.
  if (next != nullptr) decoded_.PutAccounting(ctx.key, std::move(next));
  decisions_ += decision_count;
  return Status::Ok();
}

PassReport ControllerImpl::RunPass(const std::string& key, const std::string& why) {
  PassReport report;
  auto ctx = BeginPass(key, why);
  if (!ctx.ok()) return Failed(report, ctx.status());
  if (!ctx->has_value()) return report;
  PassContext& pass = **ctx;
  pass.in.now = wall_.Now();  // the one clock read of the pass, recorded in its Tick
  report.ran = true;
  std::vector<model::Input> unsent;
  unsent.emplace_back(model::Tick{pass.in.now, pass.ns, pass.name, pass.why});
  auto step =
      pass.invalid ? Result<reconciler::Step>(InvalidStep(pass)) : PerformCalls(pass, &unsent);
  if (!step.ok()) return Failed(report, step.status());
  reconciler::SyncResult& result = step->result;
  const Status finished = FinishPass(pass, std::move(unsent), result);
  if (!finished.ok()) return Failed(report, finished);
  // Kubernetes Events only after the pass that produced them is committed (actuator.h).
  const model::CronJobRef ref{pass.ns, pass.name, pass.uid};
  for (const reconciler::Event& e : result.events) actuator_.RecordEvent(ref, e);
  report.error = result.error;
  report.requeue_after = result.requeue_after;
  return report;
}

// A batch (docs/controller.md "Batched passes"): every pass of the batch keeps the records and
// the order of RunPass (Tick, then per call an intent durable before the call and its outcome,
// then decisions + PassEnd + state), but the passes share the clock read and their commits: the
// pending records and next intents of every pass that calls in a round go in one unit of work,
// and the ends in one more. The ledger numbers a unit's inputs consecutively, so each record's
// seq is the unit's first seq plus its position. A failed commit fails exactly the passes whose
// records were in it (none of their calls of that round is made); the others go on.
std::vector<PassReport> ControllerImpl::RunBatch(const std::vector<WorkItem>& items) {
  struct Slot {
    PassContext ctx;
    std::vector<model::Input> unsent;
    reconciler::Step step;
    bool live = false;  // read its view, not failed, not finished
  };
  std::vector<PassReport> reports(items.size());
  std::vector<Slot> slots(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    const WorkItem& item = items[i];
    const std::string why = item.reason.empty() ? std::string(trigger::kTimer) : item.reason;
    auto ctx = BeginPass(item.key, why);
    if (!ctx.ok()) {
      reports[i] = Failed(reports[i], ctx.status());
    } else if (ctx->has_value()) {
      slots[i].ctx = std::move(**ctx);
      slots[i].live = true;
      reports[i].ran = true;
    }
  }
  const Time now = wall_.Now();  // the one clock read of the batch, recorded in every Tick
  for (Slot& slot : slots) {
    if (!slot.live) continue;
    PassContext& ctx = slot.ctx;
    ctx.in.now = now;
    slot.unsent.emplace_back(model::Tick{now, ctx.ns, ctx.name, ctx.why});
    slot.step = ctx.invalid ? InvalidStep(ctx) : reconciler::Decide(ctx.Ref());
  }
  auto fail = [&](size_t i, const Status& status) {
    reports[i] = Failed(reports[i], status);
    slots[i].live = false;
  };
  for (;;) {
    std::vector<size_t> calling;
    for (size_t i = 0; i < slots.size(); ++i) {
      if (!slots[i].live || !slots[i].step.next_call) continue;
      if (slots[i].ctx.in.outcomes.size() >= kMaxCallsPerPass) {
        fail(i, Status::Internal("reconcile pass made more than " +
                                 std::to_string(kMaxCallsPerPass) + " API calls"));
        continue;
      }
      calling.push_back(i);
    }
    if (calling.empty()) break;
    store::UnitOfWork unit;
    std::vector<size_t> tick_at(calling.size(), SIZE_MAX);  // the Tick's position, if in unit
    std::vector<size_t> intent_at(calling.size());
    for (size_t k = 0; k < calling.size(); ++k) {
      Slot& slot = slots[calling[k]];
      for (model::Input& in : slot.unsent) {
        if (std::holds_alternative<model::Tick>(in)) tick_at[k] = unit.inputs.size();
        unit.inputs.push_back(std::move(in));
      }
      slot.unsent.clear();
      intent_at[k] = unit.inputs.size();
      unit.inputs.emplace_back(
          IntentOf(*slot.step.next_call, now, slot.ctx.tick_seq, slot.ctx.in.outcomes.size()));
    }
    auto committed = ledger_.Commit(std::move(unit));
    if (!committed.ok()) {
      for (const size_t i : calling) fail(i, committed.status());
      continue;
    }
    for (size_t k = 0; k < calling.size(); ++k) {
      Slot& slot = slots[calling[k]];
      if (tick_at[k] != SIZE_MAX) slot.ctx.tick_seq = committed->first_input_seq + tick_at[k];
      const uint64_t intent_seq = committed->first_input_seq + intent_at[k];
      const model::ApiCall& call = *slot.step.next_call;
      model::ApiOutcome outcome = actuator_.Perform(call);
      ++api_calls_;
      slot.unsent.emplace_back(OutcomeOf(call, outcome, now, intent_seq));
      slot.ctx.in.outcomes.push_back(std::move(outcome));
      slot.step = reconciler::Decide(slot.ctx.Ref());
    }
  }
  // The ends. The ledger fills a zero tick_seq of a decision with the unit's last Tick, so a
  // pass whose Tick is still unsent (it made no call) and that has decisions ends in a unit of
  // its own; every other end shares one unit.
  store::UnitOfWork end;
  std::vector<size_t> in_end;
  std::vector<std::shared_ptr<CachedAccounting>> next_accounting;
  size_t end_decisions = 0;
  std::vector<size_t> ended;
  for (size_t i = 0; i < slots.size(); ++i) {
    Slot& slot = slots[i];
    if (!slot.live) continue;
    reconciler::SyncResult& result = slot.step.result;
    if (slot.ctx.tick_seq == 0 && !result.decisions.empty()) {
      const Status finished = FinishPass(slot.ctx, std::move(slot.unsent), result);
      if (!finished.ok()) {
        fail(i, finished);
      } else {
        ended.push_back(i);
      }
      continue;
    }
    end_decisions += result.decisions.size();
    next_accounting.push_back(AppendEnd(slot.ctx, std::move(slot.unsent), result, &end));
    in_end.push_back(i);
  }
  if (!in_end.empty()) {
    auto committed = ledger_.Commit(std::move(end));
    if (!committed.ok()) {
      for (const size_t i : in_end) fail(i, committed.status());
    } else {
      decisions_ += end_decisions;
      for (size_t k = 0; k < in_end.size(); ++k) {
        if (next_accounting[k] != nullptr) {
          decoded_.PutAccounting(slots[in_end[k]].ctx.key, std::move(next_accounting[k]));
        }
        ended.push_back(in_end[k]);
      }
    }
  }
  for (const size_t i : ended) {
    const Slot& slot = slots[i];
    const reconciler::SyncResult& result = slot.step.result;
    // Kubernetes Events only after the pass that produced them is committed (actuator.h).
    const model::CronJobRef ref{slot.ctx.ns, slot.ctx.name, slot.ctx.uid};
    for (const reconciler::Event& e : result.events) actuator_.RecordEvent(ref, e);
    reports[i].error = result.error;
    reports[i].requeue_after = result.requeue_after;
  }
  return reports;
}

}  // namespace cronledger::controller
