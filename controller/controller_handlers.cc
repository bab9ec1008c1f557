// The upstream event handlers (docs/semantics.md §2), fed by watch events after they are committed
// to the ledger (docs/design.md rule 1). The "cache" the handlers consult is the ledger's view.

#include <utility>
#include <variant>

#include "controller/controller_impl.h"
#include "model/job_fields.h"
#include "model/json.h"
#include "model/objects.h"
#include "reconciler/cronjob_update.h"

namespace cronledger::controller {
namespace {

std::string Key(const std::string& ns, const std::string& name) { return ns + "/" + name; }

bool HasDeletionTimestamp(const std::string& raw) {
  // Most Jobs are not being deleted: when the bytes hold neither the key nor an escape (a key
  // could be spelled with \u escapes), the parsed object cannot have it either.
  if (raw.find("deletionTimestamp") == std::string::npos && raw.find('\\') == std::string::npos) {
    return false;
  }
  auto j = model::ParseJson(raw);
  if (!j.ok() || !j->is_object()) return false;
  const model::Json& meta = (*j)["metadata"];
  return meta.is_object() && meta.contains("deletionTimestamp") &&
         !meta["deletionTimestamp"].is_null();
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// 64-bit FNV-1a over the bytes, finished with a splitmix64 step; two seeds give 128 bits.
uint64_t Hash64(std::string_view s, uint64_t seed) {
  uint64_t h = 14695981039346656037ULL ^ seed;
  for (const char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  h += 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

}  // namespace

ControllerImpl::Uid ControllerImpl::Uid::Of(std::string_view uid) {
  // Canonical 8-4-4-4-12 lowercase hex: 32 nibbles, stored exactly.
  if (uid.size() == 36 && uid[8] == '-' && uid[13] == '-' && uid[18] == '-' && uid[23] == '-') {
    Uid out;
    int nibbles = 0;
    bool ok = true;
    for (size_t i = 0; i < uid.size() && ok; ++i) {
      if (i == 8 || i == 13 || i == 18 || i == 23) continue;
      const int d = HexDigit(uid[i]);
      ok = d >= 0;
      uint64_t& half = nibbles < 16 ? out.hi : out.lo;
      half = (half << 4) | static_cast<uint64_t>(d < 0 ? 0 : d);
      ++nibbles;
    }
    if (ok) return out;
  }
  // Anything else (the empty string too): a hash, with the UUID version nibble forced to 0xf, a
  // version no UUID has (1-8 are defined), so it cannot equal the exact form of a real UUID; two
  // different strings share a hash with probability 2^-124.
  Uid out{Hash64(uid, 0x5bd1e995ULL), Hash64(uid, 0xc2b2ae3d27d4eb4fULL)};
  out.hi = (out.hi & ~(0xFULL << 12)) | (0xFULL << 12);
  return out;
}

std::optional<ControllerImpl::Prior> ControllerImpl::PriorOf(const model::WatchEvent& ev) {
  if (ev.type == model::WatchEventType::kDeleted) return std::nullopt;
  Prior p{ev.resource_version, ev.owner_name, Uid::Of(ev.owner_uid), "", std::nullopt,
          Uid::Of(ev.uid),     false};
  if (ev.kind == model::ObjectKind::kCronJob) {
    // Decodes exactly when DecodeCronJob does, without building the JSON tree.
    auto cj = model::DecodeCronJobFields(ev.raw);
    if (cj.ok()) {
      p.schedule = std::move(cj->spec.schedule);
      p.time_zone = std::move(cj->spec.time_zone);
      p.decoded = true;
    }
  }
  return p;
}

Result<std::optional<ControllerImpl::Prior>> ControllerImpl::ReadPrior(
    const model::WatchEvent& ev) {
  std::optional<Prior> cached = FindKnown(ev.kind, Key(ev.namespace_, ev.name));
  if (cached) return cached;
  auto obj = ledger_.GetObject(ev.kind, ev.namespace_, ev.name);
  if (obj.status().IsNotFound()) return std::optional<Prior>();
  if (!obj.ok()) return obj.status();
  return PriorOf(store::StoredEvent(std::move(obj).value()));
}

std::optional<ControllerImpl::Prior> ControllerImpl::FindKnown(model::ObjectKind kind,
                                                               const std::string& key) const {
  if (kind == model::ObjectKind::kCronJob) {
    auto it = known_cron_jobs_.find(key);
    if (it == known_cron_jobs_.end()) return std::nullopt;
    const KnownCronJob& k = it->second;
    return Prior{k.resource_version, "", Uid::Of(""), k.schedule, k.time_zone, k.uid, k.decoded};
  }
  auto it = known_jobs_.find(key);
  if (it == known_jobs_.end()) return std::nullopt;
  const KnownJob& k = it->second;
  return Prior{k.resource_version, k.owner_name, k.owner_uid, "", std::nullopt, k.uid, false};
}

namespace {
// Mirrors the view's fold (store::FoldWatchEvent) for one kind's map: every event but DELETED
// replaces the object; a DELETED of another incarnation (other uid) leaves it.
template <typename Map, typename UidT, typename Make>
void Fold(Map& known, const model::WatchEvent& ev, std::string key, const UidT& ev_uid,
          const Make& make) {
  if (ev.type != model::WatchEventType::kDeleted) {
    known.insert_or_assign(std::move(key), make());
    return;
  }
  auto it = known.find(key);
  if (it == known.end()) return;
  if (ev.uid.empty() || it->second.uid == ev_uid) known.erase(it);
}
}  // namespace

void ControllerImpl::Remember(const model::WatchEvent& ev, std::optional<Prior> state) {
  std::string key = Key(ev.namespace_, ev.name);
  const Uid ev_uid = Uid::Of(ev.uid);
  if (ev.kind == model::ObjectKind::kCronJob) {
    Fold(known_cron_jobs_, ev, std::move(key), ev_uid, [&state] {
      Prior& p = *state;
      return KnownCronJob{std::move(p.resource_version), p.uid, std::move(p.schedule),
                          std::move(p.time_zone), p.decoded};
    });
  } else {
    Fold(known_jobs_, ev, std::move(key), ev_uid, [&state] {
      Prior& p = *state;
      return KnownJob{std::move(p.resource_version), std::move(p.owner_name), p.owner_uid, p.uid};
    });
  }
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
  // The handlers compare each event with the object as the view held it before (docs/semantics.md
  // §2 update handlers get old and new); within one batch the previous event of the same object is
  // "old".
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
  // docs/semantics.md §2: a schedule or timeZone change requeues at the new schedule's next time,
  // or records UnParseableCronJobSchedule and does not enqueue. Upstream records that event outside
  // any pass, so it is not in the decision log; it is a pure function of the recorded watch events.
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
    EnqueueOwner(ev.namespace_, ev.owner_name, Uid::Of(ev.owner_uid), trigger::kJobDelete);
    return;
  }
  if (!prior) {
    // docs/semantics.md §2 Job add: one that is already being deleted is handled as a delete.
    const bool deleting = HasDeletionTimestamp(ev.raw);
    EnqueueOwner(ev.namespace_, ev.owner_name, Uid::Of(ev.owner_uid),
                 deleting ? trigger::kJobDelete : trigger::kJobAdd);
    return;
  }
  if (prior->resource_version == ev.resource_version) return;  // a resync, not a change
  const Uid owner_uid = Uid::Of(ev.owner_uid);
  if (prior->owner_name != ev.owner_name || prior->owner_uid != owner_uid) {
    EnqueueOwner(ev.namespace_, prior->owner_name, prior->owner_uid, trigger::kJobUpdate);
  }
  EnqueueOwner(ev.namespace_, ev.owner_name, owner_uid, trigger::kJobUpdate);
}

// docs/semantics.md §2 resolveControllerRef: the owner must be a CronJob (the ingest decoder keeps
// only controller references of kind CronJob), looked up by name, with the reference's uid.
void ControllerImpl::EnqueueOwner(const std::string& ns, const std::string& owner_name,
                                  const Uid& owner_uid, std::string_view why) {
  if (owner_name.empty()) return;
  const std::string key = Key(ns, owner_name);
  auto cached = known_cron_jobs_.find(key);
  if (cached != known_cron_jobs_.end()) {
    if (cached->second.uid == owner_uid) queue_.Add(key, why);
    return;
  }
  auto owner = ledger_.GetObject(model::ObjectKind::kCronJob, ns, owner_name);
  if (owner.status().IsNotFound()) return;
  // A view that cannot be read: enqueue anyway. A spurious pass is harmless (the pass reads the
  // view again); a lost one would park the CronJob until its next event.
  if (owner.ok() && Uid::Of(owner->entry.uid) != owner_uid) return;
  queue_.Add(key, why);
}

}  // namespace cronledger::controller
