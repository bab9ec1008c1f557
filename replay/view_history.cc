#include "replay/view_history.h"

#include <algorithm>
#include <atomic>

#include "model/job_fields.h"
#include "model/json.h"

namespace cronledger::replay {
namespace {

Status Pruned(uint64_t seq) {
  return Status::FailedPrecondition("raw bytes of input " + std::to_string(seq) +
                                    " were removed by retention");
}

template <typename T>
Result<T> DecodeRaw(uint64_t seq, bool pruned, std::string_view raw,
                    Result<T> (*decode)(const model::Json&)) {
  if (pruned) return Pruned(seq);
  CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(raw));
  return decode(j);
}

template <typename T>
Result<T> DecodeRaw(uint64_t seq, bool pruned, std::string_view raw,
                    Result<T> (*decode)(std::string_view)) {
  if (pruned) return Pruned(seq);
  return decode(raw);
}

// Decodes a watch event's object from `raw` into `*out`, or the error into `*error`. Without JSON
// the usual case decodes straight into the shared object (`fast`, no moves of the decoded object);
// what the fast decoder leaves to nlohmann goes through `fields`, which tries `fast` first too:
// the same objects, the same errors.
template <typename T>
void DecodeObject(bool without_json, bool pruned, std::string_view raw, uint64_t seq,
                  bool (*fast)(std::string_view, T*), Result<T> (*fields)(std::string_view),
                  Result<T> (*whole)(const model::Json&), std::shared_ptr<const T>* out,
                  std::string* error, Status* failed = nullptr) {
  if (without_json && !pruned) {
    auto object = std::make_shared<T>();
    if (fast(raw, object.get())) {
      *out = std::move(object);
      return;
    }
  }
  auto decoded =
      without_json ? DecodeRaw<T>(seq, pruned, raw, fields) : DecodeRaw<T>(seq, pruned, raw, whole);
  if (decoded.ok()) {
    *out = std::make_shared<const T>(std::move(*decoded));
  } else {
    *error = "input " + std::to_string(seq) + ": " + decoded.status().ToString();
    if (failed != nullptr) *failed = decoded.status();
  }
}

// Decodes the object of `c` (kCronJob or kSetJob) from `raw` into it: the object, or the error.
void DecodeInto(bool without_json, bool pruned, std::string_view raw, FamilyChange* c) {
  if (c->op == FamilyChange::Op::kCronJob) {
    Status failed;
    DecodeObject<model::CronJob>(without_json, pruned, raw, c->seq, &model::DecodeCronJobFieldsFast,
                                 &model::DecodeCronJobFields, &model::DecodeCronJob, &c->cron_job,
                                 &c->error, &failed);
    if (!pruned && !failed.ok()) {
      c->invalid_cron_job = reconciler::InvalidCronJob{c->cron_job_ref, c->seq,
                                                       reconciler::StoredCronJobError(failed)};
    }
  } else {
    Status failed;
    DecodeObject<model::Job>(without_json, pruned, raw, c->seq, &model::DecodeJobFieldsFast,
                             &model::DecodeJobFields, &model::DecodeJob, &c->job_object, &c->error,
                             &failed);
    if (!pruned && !failed.ok()) {
      c->invalid_job = InvalidJobBytes{c->seq, reconciler::StoredJobError(c->job, failed)};
    }
  }
}

}  // namespace

const FamilyJobs::Map& FamilyJobs::map() const {
  static const Map kEmpty;
  return map_ ? *map_ : kEmpty;
}

FamilyJobs::Map& FamilyJobs::Mutable() {
  if (!map_) {
    map_ = std::make_shared<Map>();
  } else if (map_.use_count() != 1) {
    map_ = std::make_shared<Map>(*map_);  // shared with other versions: copy
  } else {
    // The only holder: another thread that held it has let go (its release of the reference
    // happens before this), so the map can be changed in place.
    std::atomic_thread_fence(std::memory_order_acquire);
  }
  return *map_;
}

bool ViewHistory::Relevant(const model::WatchEvent& ev) {
  if (!in_scope_) return true;
  if (ev.kind == model::ObjectKind::kCronJob) return in_scope_(ev.namespace_, ev.name);
  if (!ev.owner_name.empty() && in_scope_(ev.namespace_, ev.owner_name)) return true;
  // A Job that was in scope and changes owner must still leave its old family.
  auto held = view_.Get(store::view_key::Object(ev.kind, ev.namespace_, ev.name));
  return held.ok() && held->has_value();
}

FamilyView& ViewHistory::NewVersion(const std::string& key, uint64_t seq) {
  auto& list = versions_[key];
  auto next =
      list.empty() ? std::make_shared<FamilyView>() : std::make_shared<FamilyView>(*list.back());
  next->seq = seq;
  if (!list.empty() && list.back()->seq == seq) {
    list.back() = next;
  } else {
    list.push_back(next);
  }
  return *next;
}

void ViewHistory::DecodeDeferred(FamilyChange* c) const {
  if (!c->deferred) return;
  DecodeInto(jobs_without_json_, c->raw_pruned, c->raw, c);
  c->deferred = false;
  c->raw_pruned = false;
  c->raw = std::string();
}

Status ViewHistory::Fold(const store::LogRecord& rec) {
  const auto* ev = std::get_if<model::WatchEvent>(&rec.input);
  if (ev == nullptr || ev->type == model::WatchEventType::kBookmark) return Status::Ok();
  if (!Relevant(*ev)) return Status::Ok();
  // The store's fold says what it did to the object's entry: written (source_seq = rec.seq, a
  // Job's owner then ev->owner_name), removed, or left alone (a DELETED for another uid), and
  // which owner's family a Job left.
  CL_RETURN_IF_ERROR(view_.Fold(model::WatchEventRef::Of(*ev), rec.seq, &effect_));
  if (!effect_.changed) return Status::Ok();
  if (ev->kind == model::ObjectKind::kCronJob) {
    FamilyChange c;
    c.op = FamilyChange::Op::kCronJob;
    c.seq = rec.seq;
    c.family = FamilyKey(ev->namespace_, ev->name);
    if (effect_.written) {
      c.cron_job_seq = rec.seq;
      c.cron_job_ref = model::CronJobRef{ev->namespace_, ev->name, ev->uid};
      DecodeOrDefer(rec, &c);
    }
    Emit(std::move(c));
    return Status::Ok();
  }
  if (!effect_.left_owner.empty()) {
    FamilyChange c;
    c.op = FamilyChange::Op::kEraseJob;
    c.seq = rec.seq;
    c.family = FamilyKey(ev->namespace_, effect_.left_owner);
    c.job = ev->name;
    Emit(std::move(c));
  }
  if (effect_.written && !ev->owner_name.empty() &&
      (!in_scope_ || in_scope_(ev->namespace_, ev->owner_name))) {
    FamilyChange c;
    c.op = FamilyChange::Op::kSetJob;
    c.seq = rec.seq;
    c.family = FamilyKey(ev->namespace_, ev->owner_name);
    c.job = ev->name;
    DecodeOrDefer(rec, &c);
    Emit(std::move(c));
  }
  return Status::Ok();
}

void ViewHistory::DecodeOrDefer(const store::LogRecord& rec, FamilyChange* c) const {
  const auto& ev = std::get<model::WatchEvent>(rec.input);
  if (changes_ != nullptr && defer_decode_) {
    c->deferred = true;
    c->raw_pruned = rec.raw_pruned;
    if (!rec.raw_pruned) c->raw = ev.raw;
    return;
  }
  DecodeInto(jobs_without_json_, rec.raw_pruned, ev.raw, c);
}

void ViewHistory::Emit(FamilyChange&& c) {
  if (changes_ != nullptr) {
    changes_->push_back(std::move(c));
    return;
  }
  FamilyView& f = NewVersion(c.family, c.seq);
  ApplyFamilyChange(std::move(c), &f);
}

void ApplyFamilyChange(FamilyChange&& c, FamilyView* f) {
  CL_CHECK(!c.deferred);                               // DecodeDeferred first
  static const std::string kCronJobError = "CronJob";  // the errors key of the CronJob
  f->seq = c.seq;
  switch (c.op) {
    case FamilyChange::Op::kCronJob:
      f->cron_job = std::move(c.cron_job);
      f->cron_job_seq = c.cron_job_seq;
      f->invalid_cron_job = std::move(c.invalid_cron_job);
      if (c.error.empty()) {
        f->errors.erase(kCronJobError);
      } else {
        f->errors[kCronJobError] = std::move(c.error);
      }
      return;
    case FamilyChange::Op::kEraseJob:
      f->jobs.erase(c.job);
      f->errors.erase(c.job);
      f->invalid_jobs.erase(c.job);
      return;
    case FamilyChange::Op::kSetJob:
      if (c.error.empty()) {
        f->errors.erase(c.job);
        f->invalid_jobs.erase(c.job);
        f->jobs[c.job] = {c.seq, std::move(c.job_object)};
      } else {
        f->jobs.erase(c.job);
        f->errors[c.job] = std::move(c.error);
        if (c.invalid_job) {
          f->invalid_jobs[c.job] = std::move(*c.invalid_job);
        } else {
          f->invalid_jobs.erase(c.job);
        }
      }
      return;
  }
}

std::shared_ptr<const FamilyView> ViewHistory::At(const std::string& key, uint64_t seq) const {
  auto it = versions_.find(key);
  if (it == versions_.end()) return nullptr;
  const auto& list = it->second;
  auto pos = std::upper_bound(list.begin(), list.end(), seq,
                              [](uint64_t s, const auto& v) { return s < v->seq; });
  if (pos == list.begin()) return nullptr;
  return *std::prev(pos);
}

std::shared_ptr<const FamilyView> ViewHistory::Latest(const std::string& key) const {
  auto it = versions_.find(key);
  if (it == versions_.end() || it->second.empty()) return nullptr;
  return it->second.back();
}

void ViewHistory::Trim(const std::string& key, uint64_t seq,
                       std::vector<std::shared_ptr<const FamilyView>>* released) {
  auto it = versions_.find(key);
  if (it == versions_.end()) return;
  auto& list = it->second;
  while (list.size() > 1 && list[1]->seq <= seq) {
    if (released != nullptr) released->push_back(std::move(list.front()));
    list.pop_front();
  }
}

}  // namespace cronledger::replay
