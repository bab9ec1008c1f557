#include "controller/typed_view.h"

#include <memory>
#include <mutex>
#include <utility>

#include "model/job_fields.h"
#include "reconciler/invalid_object.h"
#include "store/view.h"
#include "store/view_entry.h"
#include "store/view_fold.h"

namespace cronledger::controller {

// view_fold::Fold over the in-memory table. The object a fold writes is the event's, decoded
// beforehand (`*decoded`); the resourceVersion entries are not kept (no pass reads them).
class TypedView::Access {
 public:
  Access(TypedView* v, ObjectPtr* decoded, Change* change)
      : v_(v), decoded_(decoded), change_(change) {}

  void PutResourceVersion(const model::WatchEventRef&, uint64_t) {}
  Result<bool> FindObject(const model::WatchEventRef& ev) {
    store::view_entry::ObjectKeyTo(ev.kind, ev.namespace_, ev.name, &v_->key_scratch_);
    it_ = v_->objects_.find(v_->key_scratch_);
    if (it_ == v_->objects_.end()) return false;
    change_->prior = it_->second;
    change_->current = it_->second;  // until the fold writes or erases it
    return true;
  }
  bool PriorUidAndOwner(std::string_view* uid, std::string_view* owner) {
    *uid = it_->second->uid;
    *owner = it_->second->owner_name;
    return true;
  }
  void WriteObject(const store::view_entry::EntryView&, std::string_view) {
    CL_CHECK(*decoded_ != nullptr);  // the fold writes only for ADDED and MODIFIED, once
    ObjectPtr object = std::move(*decoded_);
    change_->current = object;
    if (it_ != v_->objects_.end()) {
      it_->second = std::move(object);
    } else {
      v_->objects_.emplace(v_->key_scratch_, std::move(object));
    }
  }
  void EraseObject() {
    v_->objects_.erase(it_);
    change_->current = nullptr;
  }
  void PutIndex(std::string_view key) { v_->owner_index_.emplace(key); }
  void DeleteIndex(std::string_view key) {
    auto it = v_->owner_index_.find(key);
    if (it != v_->owner_index_.end()) v_->owner_index_.erase(it);
  }
  std::string& IndexKey() { return v_->index_scratch_; }

 private:
  TypedView* v_;
  ObjectPtr* decoded_;
  Change* change_;
  std::unordered_map<std::string, ObjectPtr>::iterator it_;
};

TypedView::ObjectPtr TypedView::Decode(const model::WatchEvent& ev, uint64_t seq) {
  auto o = std::make_shared<Object>();
  o->uid = ev.uid;
  o->resource_version = ev.resource_version;
  o->source_seq = seq;
  // An event's decoder may have decoded the object already (model::WatchEvent::decoded).
  if (ev.kind == model::ObjectKind::kCronJob) {
    if (ev.decoded.cron_job) {
      o->cron_job = ev.decoded.cron_job;
    } else if (auto cj = model::DecodeCronJobFields(ev.raw); cj.ok()) {
      o->cron_job = std::make_shared<const model::CronJob>(std::move(*cj));
    } else {
      o->error = reconciler::StoredCronJobError(cj.status());
    }
  } else {
    o->owner_name = ev.owner_name;
    o->owner_uid = ev.owner_uid;
    if (ev.decoded.job) {
      o->job = ev.decoded.job;
    } else if (auto job = model::DecodeJobFields(ev.raw); job.ok()) {
      o->job = std::make_shared<const model::Job>(std::move(*job));
    } else {
      o->error = reconciler::StoredJobError(ev.name, job.status());
    }
  }
  return o;
}

Status TypedView::Load(store::Ledger& ledger) {
  std::unique_lock lock(mu_);
  objects_.clear();
  owner_index_.clear();
  // Each stored object folded as an update of an empty view: stored and, for a Job, indexed under
  // its owner, by the one fold.
  CL_ASSIGN_OR_RETURN(view_seq_, ledger.ScanViewObjects([this](store::ViewObject object) {
    const uint64_t seq = object.entry.source_seq;
    const model::WatchEvent ev = store::StoredEvent(std::move(object));
    ObjectPtr decoded = Decode(ev, seq);
    Change change;
    Access access(this, &decoded, &change);
    return store::view_fold::Fold(model::WatchEventRef::Of(ev), seq, access);
  }));
  return Status::Ok();
}

std::vector<TypedView::Change> TypedView::Apply(const std::vector<model::WatchEvent>& events,
                                                uint64_t first_seq, uint64_t last_seq) {
  // Decoded before the lock is taken, so that passes reading the view do not wait on the decodes.
  // Only ADDED and MODIFIED write an object.
  std::vector<ObjectPtr> decoded(events.size());
  for (size_t i = 0; i < events.size(); ++i) {
    const model::WatchEventType type = events[i].type;
    if (type == model::WatchEventType::kAdded || type == model::WatchEventType::kModified) {
      decoded[i] = Decode(events[i], first_seq + i);
    }
  }
  std::vector<Change> changes(events.size());
  std::unique_lock lock(mu_);
  for (size_t i = 0; i < events.size(); ++i) {
    const model::WatchEvent& ev = events[i];
    if (ev.type == model::WatchEventType::kBookmark) continue;
    Access access(this, &decoded[i], &changes[i]);
    // The table cannot fail a read, so neither can the fold.
    const Status folded =
        store::view_fold::Fold(model::WatchEventRef::Of(ev), first_seq + i, access);
    CL_CHECK(folded.ok());
  }
  view_seq_ = last_seq;
  return changes;
}

std::optional<TypedView::Family> TypedView::Read(std::string_view ns, std::string_view name) const {
  std::string key;
  store::view_entry::ObjectKeyTo(model::ObjectKind::kCronJob, ns, name, &key);
  std::shared_lock lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) return std::nullopt;
  Family f;
  f.cron_job = it->second;
  f.view_seq = view_seq_;
  const std::string prefix = store::view_key::OwnerPrefix(ns, name);
  for (auto idx = owner_index_.lower_bound(prefix);
       idx != owner_index_.end() && idx->starts_with(prefix); ++idx) {
    store::view_entry::ObjectKeyTo(model::ObjectKind::kJob, ns,
                                   std::string_view(*idx).substr(prefix.size()), &key);
    auto job = objects_.find(key);
    // The fold indexes a Job only while it is stored.
    CL_CHECK(job != objects_.end());
    f.jobs.push_back(job->second);
  }
  return f;
}

TypedView::ObjectPtr TypedView::Find(model::ObjectKind kind, std::string_view ns,
                                     std::string_view name) const {
  std::string key;
  store::view_entry::ObjectKeyTo(kind, ns, name, &key);
  std::shared_lock lock(mu_);
  auto it = objects_.find(key);
  return it == objects_.end() ? nullptr : it->second;
}

size_t TypedView::ObjectCount() const {
  std::shared_lock lock(mu_);
  return objects_.size();
}

}  // namespace cronledger::controller
