// The upstream event handlers (spec §2), fed by watch events after they are committed to the
// ledger (DESIGN.md rule 1). The "cache" the handlers consult is the ledger's view.

#include <utility>
#include <variant>

#include "controller/controller_impl.h"
#include "model/json.h"
#include "model/objects.h"
#include "reconciler/cronjob_update.h"

namespace cronledger::controller {
namespace {

std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

bool HasDeletionTimestamp(const std::string& raw) {
  auto j = model::ParseJson(raw);
  if (!j.ok() || !j->is_object()) return false;
  const model::Json& meta = (*j)["metadata"];
  return meta.is_object() && meta.contains("deletionTimestamp") &&
         !meta["deletionTimestamp"].is_null();
}

}  // namespace

std::optional<ControllerImpl::Prior> ControllerImpl::PriorOf(const model::WatchEvent& ev) {
  if (ev.type == model::WatchEventType::kDeleted) return std::nullopt;
  Prior p{ev.resource_version, ev.owner_name, ev.owner_uid, "", std::nullopt, ev.uid, false};
  if (ev.kind == model::ObjectKind::kCronJob) {
    auto j = model::ParseJson(ev.raw);
    if (j.ok()) {
      auto cj = model::DecodeCronJob(*j);
      if (cj.ok()) {
        p.schedule = std::move(cj->spec.schedule);
        p.time_zone = std::move(cj->spec.time_zone);
        p.decoded = true;
      }
    }
  }
  return p;
}

Result<std::optional<ControllerImpl::Prior>> ControllerImpl::ReadPrior(
    const model::WatchEvent& ev) {
  auto cached = known_.find(ObjectKey{ev.kind, Key(ev.namespace_, ev.name)});
  if (cached != known_.end()) return std::optional<Prior>(cached->second);
  auto obj = ledger_.GetObject(ev.kind, ev.namespace_, ev.name);
  if (obj.status().IsNotFound()) return std::optional<Prior>();
  if (!obj.ok()) return obj.status();
  model::WatchEvent stored;
  stored.type = model::WatchEventType::kModified;
  stored.kind = ev.kind;
  stored.resource_version = obj->entry.resource_version;
  stored.owner_name = obj->entry.owner_name;
  stored.owner_uid = obj->entry.owner_uid;
  stored.uid = obj->entry.uid;
  stored.raw = std::move(obj->raw);
  return PriorOf(stored);
}

// Mirrors the view's fold (store::FoldWatchEvent) for the facts the handlers use: every event but
// DELETED replaces the object; a DELETED of another incarnation (other uid) leaves it.
void ControllerImpl::Remember(const model::WatchEvent& ev, std::optional<Prior> state) {
  ObjectKey key{ev.kind, Key(ev.namespace_, ev.name)};
  if (ev.type != model::WatchEventType::kDeleted) {
    known_.insert_or_assign(std::move(key), std::move(*state));
    return;
  }
  auto it = known_.find(key);
  if (it != known_.end() && (ev.uid.empty() || it->second.uid == ev.uid)) known_.erase(it);
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
  std::lock_guard<std::mutex> lock(ingest_mu_);
  // The handlers compare each event with the object as the view held it before (spec §2 update
  // handlers get old and new); within one batch the previous event of the same object is "old".
  std::vector<std::optional<Prior>> priors(events.size());
  std::vector<std::optional<Prior>> states(events.size());  // each object after its event
  std::map<ObjectKey, size_t> in_batch;                     // -> its last event so far
  for (size_t i = 0; i < events.size(); ++i) {
    const model::WatchEvent& ev = events[i];
    if (ev.type == model::WatchEventType::kBookmark) continue;
    ObjectKey key{ev.kind, Key(ev.namespace_, ev.name)};
    auto it = in_batch.find(key);
    if (it != in_batch.end()) {
      priors[i] = states[it->second];
      it->second = i;
    } else {
      CL_ASSIGN_OR_RETURN(priors[i], ReadPrior(ev));
      in_batch.emplace(std::move(key), i);
    }
    states[i] = PriorOf(ev);
  }
  unit.inputs.assign(events.begin(), events.end());
  CL_ASSIGN_OR_RETURN(store::CommitResult committed, ledger_.Commit(std::move(unit)));
  events_ingested_ += events.size();
  for (size_t i = 0; i < events.size(); ++i) {
    if (events[i].type == model::WatchEventType::kBookmark) continue;
    if (events[i].kind == model::ObjectKind::kCronJob) {
      HandleCronJob(events[i], priors[i], states[i]);
    } else {
      HandleJob(events[i], priors[i]);
    }
    Remember(events[i], std::move(states[i]));
  }
  return committed;
}

void ControllerImpl::HandleCronJob(const model::WatchEvent& ev, const std::optional<Prior>& prior,
                                   const std::optional<Prior>& current) {
  const std::string key = Key(ev.namespace_, ev.name);
  if (ev.type == model::WatchEventType::kDeleted) {
    queue_.Add(key, trigger::kCronJobDelete);
    return;
  }
  // An ADDED event for an object the view already has is an update (an informer relist).
  if (!prior) {
    queue_.Add(key, trigger::kCronJobAdd);
    return;
  }
  if (!current || !current->decoded) {
    queue_.Add(key, trigger::kCronJobUpdate);  // cannot compare schedules: a plain update
    return;
  }
  if (current->schedule == prior->schedule && current->time_zone == prior->time_zone) {
    queue_.Add(key, trigger::kCronJobUpdate);  // OnCronJobUpdate: not a schedule change
    return;
  }
  auto j = model::ParseJson(ev.raw);
  auto cj = j.ok() ? model::DecodeCronJob(*j) : Result<model::CronJob>(j.status());
  if (!cj.ok()) {
    queue_.Add(key, trigger::kCronJobUpdate);
    return;
  }
  // spec §2: a schedule or timeZone change requeues at the new schedule's next time, or records
  // UnParseableCronJobSchedule and does not enqueue. Upstream records that event outside any
  // pass, so it is not in the decision log; it is a pure function of the recorded watch events.
  model::CronJob old;
  old.spec.schedule = prior->schedule;
  old.spec.time_zone = prior->time_zone;
  const reconciler::UpdateReaction reaction =
      reconciler::OnCronJobUpdate(old, *cj, wall_.Now(), tzdb_);
  if (reaction.event) {
    actuator_.RecordEvent(model::CronJobRef{ev.namespace_, ev.name, ev.uid}, *reaction.event);
  }
  if (reaction.enqueue) queue_.AddAfter(key, reaction.delay, trigger::kCronJobUpdate);
}

void ControllerImpl::HandleJob(const model::WatchEvent& ev, const std::optional<Prior>& prior) {
  if (ev.type == model::WatchEventType::kDeleted) {
    EnqueueOwner(ev.namespace_, ev.owner_name, ev.owner_uid, trigger::kJobDelete);
    return;
  }
  if (!prior) {
    // spec §2 Job add: one that is already being deleted is handled as a delete.
    const bool deleting = HasDeletionTimestamp(ev.raw);
    EnqueueOwner(ev.namespace_, ev.owner_name, ev.owner_uid,
                 deleting ? trigger::kJobDelete : trigger::kJobAdd);
    return;
  }
  if (prior->resource_version == ev.resource_version) return;  // a resync, not a change
  if (prior->owner_name != ev.owner_name || prior->owner_uid != ev.owner_uid) {
    EnqueueOwner(ev.namespace_, prior->owner_name, prior->owner_uid, trigger::kJobUpdate);
  }
  EnqueueOwner(ev.namespace_, ev.owner_name, ev.owner_uid, trigger::kJobUpdate);
}

// spec §2 resolveControllerRef: the owner must be a CronJob (the ingest decoder keeps only
// controller references of kind CronJob), looked up by name, with the reference's uid.
void ControllerImpl::EnqueueOwner(const std::string& ns, const std::string& owner_name,
                                  const std::string& owner_uid, std::string_view why) {
  if (owner_name.empty()) return;
  const std::string key = Key(ns, owner_name);
  auto cached = known_.find(ObjectKey{model::ObjectKind::kCronJob, key});
  if (cached != known_.end()) {
    if (cached->second.uid == owner_uid) queue_.Add(key, why);
    return;
  }
  auto owner = ledger_.GetObject(model::ObjectKind::kCronJob, ns, owner_name);
  if (owner.status().IsNotFound()) return;
  // A view that cannot be read: enqueue anyway. A spurious pass is harmless (the pass reads the
  // view again); a lost one would park the CronJob until its next event.
  if (owner.ok() && owner->entry.uid != owner_uid) return;
  queue_.Add(key, why);
}

}  // namespace cronledger::controller
