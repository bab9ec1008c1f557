// The upstream event handlers (docs/semantics.md §2), fed by watch events after they are committed
// to the ledger (docs/design.md rule 1). The "cache" the handlers consult is the view in memory
// (typed_view.h), which the same commit feeds.

#include <memory>
#include <string>
#include <utility>
#include <variant>

#include "controller/controller_impl.h"
#include "model/json.h"
#include "model/objects.h"
#include "reconciler/cronjob_update.h"

namespace cronledger::controller {
namespace {

std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

// For a Job the typed decoder could not read: whether its bytes say it is being deleted.
bool HasDeletionTimestamp(const std::string& raw) {
  // When the bytes hold neither the key nor an escape (a key could be spelled with \u escapes),
  // the parsed object cannot have it either.
  if (raw.find("deletionTimestamp") == std::string::npos && raw.find('\\') == std::string::npos) {
    return false;
  }
  auto j = model::ParseJson(raw);
  if (!j.ok() || !j->is_object()) return false;
  const model::Json& meta = (*j)["metadata"];
  return meta.is_object() && meta.contains("deletionTimestamp") &&
         !meta["deletionTimestamp"].is_null();
}

// The key of an object in ControllerImpl::own_writes_.
std::string EchoKey(model::ObjectKind kind, std::string_view ns, std::string_view name) {
  std::string key(kind == model::ObjectKind::kCronJob ? "c:" : "j:");
  key.append(ns);
  key += '/';
  key.append(name);
  return key;
}

std::string EchoKey(const model::ApiCall& call) {
  return EchoKey(model::ObjectKindOf(call.kind), call.namespace_, call.name);
}

}  // namespace

bool ControllerImpl::BeginOwnWrite(const PassContext& ctx, const model::ApiCall& call) {
  if (!options_.skip_own_echoes) return false;
  OwnWrite write;
  if (call.verb == model::ApiVerb::kDelete && call.kind == model::ApiKind::kJob) {
    // Its answer names no object: the Job deleted is the view's Job of that name.
    for (const model::Job* job : ctx.jobs) {
      if (job->metadata.name == call.name) write.uid = job->metadata.uid;
    }
    if (write.uid.empty()) return false;
  } else if (!(call.verb == model::ApiVerb::kCreate && call.kind == model::ApiKind::kJob) &&
             !(call.verb == model::ApiVerb::kUpdateStatus &&
               call.kind == model::ApiKind::kCronJob)) {
    return false;  // reads write nothing
  }
  std::lock_guard<std::mutex> l(own_writes_mu_);
  own_writes_.insert_or_assign(EchoKey(call), std::move(write));
  return true;
}

void ControllerImpl::EndOwnWrite(const model::ApiCall& call, const model::ApiOutcome& answer) {
  std::vector<Held> react;
  {
    std::lock_guard<std::mutex> l(own_writes_mu_);
    // The entry BeginOwnWrite made: only the object's own pass writes it, and never two calls
    // of a pass at once.
    const auto it = own_writes_.find(EchoKey(call));
    if (it == own_writes_.end()) return;
    OwnWrite& w = it->second;
    if (answer.ok() && call.verb != model::ApiVerb::kDelete) {
      w.uid = model::StringAt(answer.object, "metadata", "uid");
      w.resource_version = model::StringAt(answer.object, "metadata", "resourceVersion");
    }
    const bool known = answer.ok() && !w.uid.empty() &&
                       (call.verb == model::ApiVerb::kDelete || !w.resource_version.empty());
    // Events that came while the call was in flight: the echo, if it came first, is skipped;
    // every other is handled now, as it would have been.
    react = std::move(w.held);
    const bool echoed = known && !react.empty() && IsEchoOf(w, react.front().event);
    if (echoed) {
      react.erase(react.begin());
      ++echoes_skipped_;
    }
    if (known && react.empty() && !echoed) {
      w.answered = true;
    } else {
      own_writes_.erase(it);
    }
  }
  for (const Held& h : react) React(h.event, h.change);
}

bool ControllerImpl::IsEchoOf(const OwnWrite& w, const model::WatchEvent& ev) {
  return w.uid == ev.uid &&
         (ev.type == model::WatchEventType::kDeleted
              ? w.resource_version.empty()
              : !w.resource_version.empty() && w.resource_version == ev.resource_version);
}

bool ControllerImpl::TakeOwnEcho(const model::WatchEvent& ev, const TypedView::Change& change) {
  std::lock_guard<std::mutex> l(own_writes_mu_);
  if (own_writes_.empty()) return false;
  const auto it = own_writes_.find(EchoKey(ev.kind, ev.namespace_, ev.name));
  if (it == own_writes_.end()) return false;
  OwnWrite& w = it->second;
  if (!w.answered) {
    w.held.push_back(Held{ev, change});
    return true;
  }
  // Any other event of the object first (another writer's change, a deletion under way) ends
  // the wait: the object is no longer the version the pass went on with.
  const bool echo = IsEchoOf(w, ev);
  own_writes_.erase(it);
  if (echo) ++echoes_skipped_;
  return echo;
}

Status ControllerImpl::Ingest(std::vector<model::WatchEvent> events) {
  return IngestEvents(std::move(events), store::UnitOfWork()).status();
}

Result<store::CommitResult> ControllerImpl::IngestUnit(store::UnitOfWork unit) {
  if (!unit.decisions.empty() || !unit.controller_state.empty()) {
    return Status::InvalidArgument("IngestUnit: decisions and controller state belong to passes");
  }
  std::vector<model::WatchEvent> events;
  events.reserve(unit.inputs.size());
  for (model::Input& input : unit.inputs) {
    auto* ev = std::get_if<model::WatchEvent>(&input);
    if (ev == nullptr) return Status::InvalidArgument("IngestUnit: inputs must be watch events");
    events.push_back(std::move(*ev));
  }
  unit.inputs.clear();
  return IngestEvents(std::move(events), std::move(unit));
}

Result<store::CommitResult> ControllerImpl::IngestEvents(std::vector<model::WatchEvent> events,
                                                         store::UnitOfWork unit) {
  // One Ingest at a time: the view in memory takes the units in the order they are committed.
  std::lock_guard<std::mutex> lock(ingest_mu_);
  unit.inputs.assign(events.begin(), events.end());
  CL_ASSIGN_OR_RETURN(store::CommitResult committed, ledger_.Commit(std::move(unit)));
  events_ingested_ += events.size();
  // The handlers compare each event with the object the view held before it (docs/semantics.md
  // §2 update handlers get old and new): within one unit, the previous event's object.
  const std::vector<TypedView::Change> changes =
      view_.Apply(events, committed.first_input_seq, committed.last_input_seq);
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].type == model::WatchEventType::kBookmark) continue;
    if (TakeOwnEcho(events[i], changes[i])) continue;
    React(events[i], changes[i]);
  }
  return committed;
}

void ControllerImpl::React(const model::WatchEvent& ev, const TypedView::Change& change) {
  if (ev.kind == model::ObjectKind::kCronJob) {
    HandleCronJob(ev, change);
  } else {
    HandleJob(ev, change);
  }
}

void ControllerImpl::HandleCronJob(const model::WatchEvent& ev, const TypedView::Change& change) {
  const std::string key = Key(ev.namespace_, ev.name);
  if (ev.type == model::WatchEventType::kDeleted) {
    queue_.Add(key, trigger::kCronJobDelete);
    return;
  }
  // An ADDED event for an object the view already has is an update (an informer relist).
  if (!change.prior) {
    queue_.Add(key, trigger::kCronJobAdd);
    return;
  }
  const std::shared_ptr<const model::CronJob>& current = change.current->cron_job;
  if (!current) {
    queue_.Add(key, trigger::kCronJobUpdate);  // cannot compare schedules: a plain update
    return;
  }
  // A prior version that did not decode had no schedule to compare with.
  static const model::CronJob kUndecoded;
  const model::CronJob& prior = change.prior->cron_job ? *change.prior->cron_job : kUndecoded;
  if (current->spec.schedule == prior.spec.schedule &&
      current->spec.time_zone == prior.spec.time_zone) {
    queue_.Add(key, trigger::kCronJobUpdate);  // OnCronJobUpdate: not a schedule change
    return;
  }
  // docs/semantics.md §2: a schedule or timeZone change requeues at the new schedule's next time,
  // or records UnParseableCronJobSchedule and does not enqueue. Upstream records that event outside
  // any pass, so it is not in the decision log; it is a pure function of the recorded watch events.
  const reconciler::UpdateReaction reaction =
      reconciler::OnCronJobUpdate(prior, *current, wall_.Now(), tzdb_);
  if (reaction.event) {
    actuator_.RecordEvent(model::CronJobRef{ev.namespace_, ev.name, ev.uid}, *reaction.event);
  }
  if (reaction.enqueue) queue_.AddAfter(key, reaction.delay, trigger::kCronJobUpdate);
}

void ControllerImpl::HandleJob(const model::WatchEvent& ev, const TypedView::Change& change) {
  if (ev.type == model::WatchEventType::kDeleted) {
    EnqueueOwner(ev.namespace_, ev.owner_name, ev.owner_uid, trigger::kJobDelete);
    return;
  }
  if (!change.prior) {
    // docs/semantics.md §2 Job add: one that is already being deleted is handled as a delete.
    const TypedView::Object& job = *change.current;
    const bool deleting =
        job.job ? job.job->metadata.deletion_timestamp.has_value() : HasDeletionTimestamp(ev.raw);
    EnqueueOwner(ev.namespace_, ev.owner_name, ev.owner_uid,
                 deleting ? trigger::kJobDelete : trigger::kJobAdd);
    return;
  }
  const TypedView::Object& prior = *change.prior;
  if (prior.resource_version == ev.resource_version) return;  // a resync, not a change
  if (prior.owner_name != ev.owner_name || prior.owner_uid != ev.owner_uid) {
    EnqueueOwner(ev.namespace_, prior.owner_name, prior.owner_uid, trigger::kJobUpdate);
  }
  EnqueueOwner(ev.namespace_, ev.owner_name, ev.owner_uid, trigger::kJobUpdate);
}

// docs/semantics.md §2 resolveControllerRef: the owner must be a CronJob (the ingest decoder keeps
// only controller references of kind CronJob), looked up by name, with the reference's uid.
void ControllerImpl::EnqueueOwner(const std::string& ns, const std::string& owner_name,
                                  const std::string& owner_uid, std::string_view why) {
  if (owner_name.empty()) return;
  const TypedView::ObjectPtr owner = view_.Find(model::ObjectKind::kCronJob, ns, owner_name);
  if (owner != nullptr && owner->uid == owner_uid) queue_.Add(Key(ns, owner_name), why);
}

}  // namespace cronledger::controller
