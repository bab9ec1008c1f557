// One reconcile pass of one CronJob under the outbox discipline (DESIGN.md rules 1 and 3,
// docs/controller.md "Records of a pass"):
//   Tick  ->  [ActionIntent -> perform -> ActionOutcome]*  ->  decisions + PassEnd + state
// Every intent is durable before its call is made, every outcome is durable before the pass
// goes on, and the decisions, the PassEnd and the accounting state are one unit of work.

#include <string>
#include <utility>

#include "controller/controller_impl.h"
#include "model/api_call.h"
#include "model/json.h"

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
  return model::DumpJson(
      model::Json{{"uid", uid}, {"accounting", model::EncodeAccountingState(s)}});
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
  CL_ASSIGN_OR_RETURN(auto state, DecodeControllerState(*blob));
  // A CronJob deleted and created again under the same name starts with fresh bookkeeping.
  if (state.first != uid) return model::AccountingState{};
  return std::move(state.second);
}

PassReport ControllerImpl::RunPass(const std::string& key, const std::string& why) {
  PassReport report;
  const auto [ns, name] = SplitKey(key);
  auto view = ledger_.ReadCronJobView(ns, name);
  if (view.status().IsNotFound()) {
    // spec §3 step 1: gone from the cache -> done, no error, no requeue. Its state goes too.
    store::UnitOfWork unit;
    unit.controller_state.emplace_back(key, std::nullopt);
    auto committed = ledger_.Commit(std::move(unit));
    return committed.ok() ? report : Failed(report, committed.status());
  }
  if (!view.ok()) return Failed(report, view.status());
  const std::string uid = view->cron_job.metadata.uid;
  auto accounting = LoadAccounting(key, uid);
  if (!accounting.ok()) return Failed(report, accounting.status());

  reconciler::SyncInput in;
  in.cron_job = std::move(view->cron_job);
  in.jobs = std::move(view->jobs);
  in.now = wall_.Now();  // the one clock read of the pass, recorded in its Tick
  in.options = options_.decide;
  in.tzdb = &tzdb_;
  in.accounting = std::move(*accounting);

  store::UnitOfWork tick_unit;
  tick_unit.inputs.emplace_back(model::Tick{in.now, ns, name, why});
  auto tick = ledger_.Commit(std::move(tick_unit));
  if (!tick.ok()) return Failed(report, tick.status());
  report.ran = true;
  ++passes_;
  const uint64_t tick_seq = tick->first_input_seq;

  // The outcome of call k is committed together with the intent of call k+1 (or with the end of
  // the pass): one commit per call, and each intent is durable before its call is made.
  std::vector<model::Input> unsent;
  reconciler::Step step = reconciler::Decide(in);
  while (step.next_call) {
    if (in.outcomes.size() >= kMaxCallsPerPass) {
      return Failed(report, Status::Internal("reconcile pass made more than " +
                                             std::to_string(kMaxCallsPerPass) + " API calls"));
    }
    const model::ApiCall& call = *step.next_call;
    store::UnitOfWork unit;
    unit.inputs = std::move(unsent);
    unsent.clear();
    unit.inputs.emplace_back(IntentOf(call, in.now, tick_seq, in.outcomes.size()));
    auto committed = ledger_.Commit(std::move(unit));
    if (!committed.ok()) return Failed(report, committed.status());
    model::ApiOutcome outcome = actuator_.Perform(call);
    ++api_calls_;
    unsent.emplace_back(OutcomeOf(call, outcome, in.now, committed->last_input_seq));
    in.outcomes.push_back(std::move(outcome));
    step = reconciler::Decide(in);
  }

  reconciler::SyncResult& result = step.result;
  for (model::Decision& d : result.decisions) {
    d.cause = model::DecisionCause{tick_seq, view->last_input_seq, why};
  }
  store::UnitOfWork end;
  end.inputs = std::move(unsent);
  end.inputs.emplace_back(
      model::PassEnd{in.now, tick_seq, view->last_input_seq, ns, name, uid,
                     static_cast<uint32_t>(in.outcomes.size()), ResultName(result),
                     model::DumpJson(model::EncodeAccountingState(result.accounting))});
  const size_t decision_count = result.decisions.size();
  end.decisions = std::move(result.decisions);
  end.controller_state.emplace_back(key, EncodeControllerState(uid, result.accounting));
  auto committed = ledger_.Commit(std::move(end));
  if (!committed.ok()) return Failed(report, committed.status());
  decisions_ += decision_count;

  // Kubernetes Events only after the pass that produced them is committed (actuator.h).
  const model::CronJobRef ref{ns, name, uid};
  for (const reconciler::Event& e : result.events) actuator_.RecordEvent(ref, e);
  report.error = result.error;
  report.requeue_after = result.requeue_after;
  return report;
}

}  // namespace cronledger::controller
