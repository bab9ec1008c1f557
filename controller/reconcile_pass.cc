// One reconcile pass of one CronJob under the outbox discipline (docs/design.md rules 1 and 3,
// docs/controller.md "Records of a pass"):
//   Tick  ->  [ActionIntent -> perform -> ActionOutcome]*  ->  decisions + PassEnd + state
// Every intent is durable before its call is made, every outcome is durable before the pass
// goes on, and the decisions, the PassEnd and the accounting state are one unit of work. The Tick
// has no commit of its own: it goes with the pass's first intent, or with its end when the pass
// makes no call (the ledger fills the tick_seq of that intent or PassEnd and of the decisions).
// A crash before that first commit leaves no trace of the pass, which made no call yet. A pass
// that calls nothing and changes nothing commits nothing at all (Unrecorded below).

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "controller/controller_impl.h"
#include "model/api_call.h"
#include "model/json.h"
#include "reconciler/decide.h"
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

std::string ResultName(const reconciler::SyncResult& r) {
  if (r.error) return "error";
  return r.requeue_after ? "requeue" : "done";
}

// The intent names the call; its body (a create's Job, a status write's CronJob) is not kept: it is
// a function of the view the pass read, and the pass's decisions record it (createJob's job,
// updateStatus's status).
model::ActionIntent IntentOf(const model::ApiCall& call, Time now, uint64_t tick_seq,
                             size_t index) {
  const model::ApiCall named{call.verb, call.kind, call.namespace_, call.name, nullptr};
  return model::ActionIntent{now,
                             tick_seq,
                             static_cast<uint32_t>(index),
                             std::string(model::ApiVerbName(call.verb)),
                             model::ObjectKindOf(call.kind),
                             call.namespace_,
                             call.name,
                             model::DumpJson(model::EncodeApiCall(named))};
}

// `outcome` is already in its recorded form (reconciler::RecordedOutcome).
model::ActionOutcome OutcomeOf(const model::ApiCall& call, const model::ApiOutcome& outcome,
                               Time now, uint64_t intent_seq) {
  return model::ActionOutcome{now,
                              intent_seq,
                              std::string(model::ApiVerbName(call.verb)),
                              model::ObjectKindOf(call.kind),
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

Result<std::optional<model::AccountingState>> ControllerImpl::LoadAccounting(
    const std::string& key, const std::string& uid) {
  // A CronJob deleted and created again under the same name starts with fresh bookkeeping.
  auto of_this_uid = [&uid](const Accounted& a) {
    return a.uid == uid ? std::optional<model::AccountingState>(a.state) : std::nullopt;
  };
  {
    std::lock_guard<std::mutex> l(accounted_mu_);
    if (auto it = accounted_.find(key); it != accounted_.end()) return of_this_uid(it->second);
  }
  auto blob = ledger_.GetControllerState(key);
  if (blob.status().IsNotFound()) return std::optional<model::AccountingState>();
  if (!blob.ok()) return blob.status();
  CL_ASSIGN_OR_RETURN(auto state, DecodeControllerState(*blob));
  Accounted read{std::move(state.first), std::move(state.second)};
  std::optional<model::AccountingState> out = of_this_uid(read);
  std::lock_guard<std::mutex> l(accounted_mu_);
  accounted_.insert_or_assign(key, std::move(read));
  return out;
}

reconciler::SyncInputRef ControllerImpl::PassContext::Input(const model::TimeZoneDb& tzdb) const {
  reconciler::SyncInputRef in;
  in.cron_job = &*view.cron_job->cron_job;
  in.jobs = jobs;
  in.now = now;
  in.options = options;
  in.tzdb = &tzdb;
  in.accounting = &accounting;
  in.outcomes = outcomes;
  return in;
}

Status ControllerImpl::ReadView(PassContext& ctx) {
  std::optional<TypedView::Family> family = view_.Read(ctx.ns, ctx.name);
  if (!family) return Status::NotFound("view: no CronJob " + ctx.key);
  ctx.view = std::move(*family);
  const TypedView::Object& cj = *ctx.view.cron_job;
  if (!cj.cron_job) {
    // Not an error of the pass: the pass records why it does not act on the CronJob
    // (reconciler/invalid_object.h). Its Jobs are not read.
    ctx.invalid = reconciler::InvalidCronJob{model::CronJobRef{ctx.ns, ctx.name, cj.uid},
                                             cj.source_seq, cj.error};
    return Status::Ok();
  }
  ctx.jobs.reserve(ctx.view.jobs.size());
  for (const TypedView::ObjectPtr& job : ctx.view.jobs) {
    if (!job->job) {
      // Its CronJob's fire times cannot be evaluated without it: the pass records why it does
      // not act, as for a CronJob that does not decode (the first such Job by name).
      const model::ObjectMeta& m = cj.cron_job->metadata;
      ctx.invalid = reconciler::InvalidCronJob{model::CronJobRef{m.namespace_, m.name, m.uid},
                                               job->source_seq, job->error};
      ctx.jobs.clear();
      return Status::Ok();
    }
    ctx.jobs.push_back(&*job->job);
  }
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
    std::lock_guard<std::mutex> l(accounted_mu_);
    accounted_.erase(key);
    return std::optional<PassContext>();
  }
  CL_RETURN_IF_ERROR(read);
  if (options_.before_pass) options_.before_pass(key);
  ctx.uid = ctx.invalid ? ctx.invalid->ref.uid : ctx.view.cron_job->cron_job->metadata.uid;
  CL_ASSIGN_OR_RETURN(std::optional<model::AccountingState> accounting,
                      LoadAccounting(key, ctx.uid));
  ctx.has_state = accounting.has_value();
  if (accounting) ctx.accounting = std::move(*accounting);
  ctx.options = options_.decide;
  ctx.options.schedule_memo = &schedule_memo_;
  ctx.options.call_objects = reconciler::DecideOptions::CallObjects::kPending;
  ctx.now = wall_.Now();  // the one clock read of the pass, recorded in its Tick
  ++passes_;
  return std::optional<PassContext>(std::move(ctx));
}

reconciler::Step ControllerImpl::InvalidStep(const PassContext& ctx) {
  reconciler::Step step;
  step.result = reconciler::DecideInvalidCronJob(*ctx.invalid, ctx.now, ctx.accounting);
  return step;
}

Result<reconciler::Step> ControllerImpl::DecideStep(const PassContext& ctx) {
  reconciler::Step step = reconciler::Decide(ctx.Input(tzdb_));
  if (!step.next_call || step.next_call->verb != model::ApiVerb::kUpdateStatus) return step;
  // Decide gives a status write's new status alone (DecideOptions::CallObjects::kPending): the
  // body is the CronJob as the pass read it, the bytes the ledger keeps of that version, with it.
  CL_ASSIGN_OR_RETURN(const std::string raw, ledger_.GetInputRaw(ctx.view.cron_job->source_seq));
  auto body = model::ParseJson(raw);
  if (!body.ok() || !body->is_object()) {
    // The view decoded these bytes, so this is corruption or a bug, not an input to record.
    return Status::Internal("CronJob " + ctx.key + ": its stored bytes (input " +
                            std::to_string(ctx.view.cron_job->source_seq) +
                            ") are not a JSON object" +
                            (body.ok() ? "" : ": " + body.status().ToString()));
  }
  (*body)["status"] = std::move(step.next_call->object["status"]);
  step.next_call->object = std::move(*body);
  return step;
}

// The Tick (in *unsent) is committed with the first intent, the outcome of call k together with
// the intent of call k+1 (or with the end of the pass): one commit per call, and each intent is
// durable before its call is made.
Result<reconciler::Step> ControllerImpl::PerformCalls(PassContext& ctx,
                                                      std::vector<model::Input>* unsent) {
  CL_ASSIGN_OR_RETURN(reconciler::Step step, DecideStep(ctx));
  while (step.next_call) {
    if (ctx.outcomes.size() >= kMaxCallsPerPass) {
      return Status::Internal("reconcile pass made more than " + std::to_string(kMaxCallsPerPass) +
                              " API calls");
    }
    const model::ApiCall& call = *step.next_call;
    store::UnitOfWork unit;
    unit.inputs = std::move(*unsent);
    unsent->clear();
    unit.inputs.emplace_back(IntentOf(call, ctx.now, ctx.tick_seq, ctx.outcomes.size()));
    CL_ASSIGN_OR_RETURN(store::CommitResult committed, ledger_.Commit(std::move(unit)));
    if (ctx.tick_seq == 0) ctx.tick_seq = committed.first_input_seq;  // the Tick led that unit
    const bool write = BeginOwnWrite(ctx, call);
    model::ApiOutcome answer = actuator_.Perform(call);
    if (write) EndOwnWrite(call, answer);
    // The pass goes on with what the ledger keeps of the answer, so that replay, which has only
    // that, decides as the pass did.
    model::ApiOutcome outcome = reconciler::RecordedOutcome(call, std::move(answer));
    ++api_calls_;
    unsent->emplace_back(OutcomeOf(call, outcome, ctx.now, committed.last_input_seq));
    ctx.outcomes.push_back(std::move(outcome));
    CL_ASSIGN_OR_RETURN(step, DecideStep(ctx));
  }
  return step;
}

// A pass whose whole output is when to look at the CronJob again: it made no call, decided
// nothing but its requeue, and left the accounting state of the CronJob's last completed pass as
// it was. Triggered by a Job's watch event or by an update of the CronJob (its status, mostly: the
// controller's own writes come back as updates), such a pass is not recorded: the decisions of
// every later pass are the same without it, so replay reproduces them, and the watch event that
// triggered it is in the log. Timer, start-up, add, delete and retry passes are always recorded:
// they are the evidence of when the controller looked at a fire time.
bool ControllerImpl::Unrecorded(const PassContext& ctx, const reconciler::SyncResult& result) {
  // Events and status writes need no test of their own: each event is a decision, and a status
  // write is a call.
  if (ctx.invalid || !ctx.has_state || !ctx.outcomes.empty() || result.error) return false;
  const std::string_view why = ctx.why;
  if (why != trigger::kJobAdd && why != trigger::kJobUpdate && why != trigger::kJobDelete &&
      why != trigger::kCronJobUpdate) {
    return false;
  }
  for (const model::Decision& d : result.decisions) {
    if (d.action != model::DecisionAction::kRequeue) return false;
  }
  return result.accounting == ctx.accounting;
}

// The last outcome, the decisions, the PassEnd and the state blob: one unit of work.
Status ControllerImpl::FinishPass(const PassContext& ctx, std::vector<model::Input> unsent,
                                  reconciler::SyncResult& result) {
  // With no call made, the Tick is in this unit and ctx.tick_seq is 0: the ledger fills it in
  // the decisions' causes and the PassEnd.
  for (model::Decision& d : result.decisions) {
    d.cause = model::DecisionCause{ctx.tick_seq, ctx.view.view_seq, ctx.why};
  }
  store::UnitOfWork end;
  end.inputs = std::move(unsent);
  std::string accounting = model::AccountingStateBytes(result.accounting);
  end.controller_state.emplace_back(ctx.key, EncodeControllerStateBytes(ctx.uid, accounting));
  end.inputs.emplace_back(model::PassEnd{ctx.now, ctx.tick_seq, ctx.view.view_seq, ctx.ns, ctx.name,
                                         ctx.uid, static_cast<uint32_t>(ctx.outcomes.size()),
                                         ResultName(result), std::move(accounting)});
  const size_t decision_count = result.decisions.size();
  end.decisions = std::move(result.decisions);
  CL_RETURN_IF_ERROR(ledger_.Commit(std::move(end)).status());
  decisions_ += decision_count;
  std::lock_guard<std::mutex> l(accounted_mu_);
  accounted_.insert_or_assign(ctx.key, Accounted{ctx.uid, result.accounting});
  return Status::Ok();
}

PassReport ControllerImpl::RunPass(const std::string& key, const std::string& why) {
  PassReport report;
  auto ctx = BeginPass(key, why);
  if (!ctx.ok()) return Failed(report, ctx.status());
  if (!ctx->has_value()) return report;
  PassContext& pass = **ctx;
  report.ran = true;
  std::vector<model::Input> unsent;
  unsent.emplace_back(model::Tick{pass.now, pass.ns, pass.name, pass.why});
  auto step =
      pass.invalid ? Result<reconciler::Step>(InvalidStep(pass)) : PerformCalls(pass, &unsent);
  if (!step.ok()) return Failed(report, step.status());
  reconciler::SyncResult& result = step->result;
  if (Unrecorded(pass, result)) {
    ++unrecorded_passes_;
    report.requeue_after = result.requeue_after;
    return report;
  }
  const Status finished = FinishPass(pass, std::move(unsent), result);
  if (!finished.ok()) return Failed(report, finished);
  // Kubernetes Events only after the pass that produced them is committed (actuator.h).
  const model::CronJobRef ref{pass.ns, pass.name, pass.uid};
  for (const reconciler::Event& e : result.events) actuator_.RecordEvent(ref, e);
  report.error = result.error;
  report.requeue_after = result.requeue_after;
  return report;
}

}  // namespace cronledger::controller
