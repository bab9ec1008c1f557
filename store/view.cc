#include "store/view.h"

#include <utility>

#include "store/view_entry.h"
#include "store/view_fold.h"

namespace cronledger::store {

using view_entry::Append;
using view_entry::AppendResourceVersionEntry;
using view_entry::EncodeEntryTo;
using view_entry::EntryView;
using view_entry::kEntryV1;
using view_entry::ObjectKeyTo;

std::string EncodeObjectEntry(const ObjectEntry& e) {
  std::string out;
  EncodeEntryTo({e.kind, e.api_version, e.namespace_, e.name, e.uid, e.resource_version,
                 e.owner_name, e.owner_uid, e.source_seq},
                &out);
  return out;
}

Result<ObjectEntry> DecodeObjectEntry(std::string_view bytes) {
  model::RecordReader r(bytes);
  ObjectEntry e;
  uint8_t version = 0;
  uint8_t kind = 0;
  bool ok = r.Byte(&version) && version == kEntryV1 && r.Byte(&kind) && kind >= 1 && kind <= 2 &&
            r.String(&e.api_version) && r.String(&e.namespace_) && r.String(&e.name) &&
            r.String(&e.uid) && r.String(&e.resource_version) && r.String(&e.owner_name) &&
            r.String(&e.owner_uid) && r.Varint(&e.source_seq) && r.done();
  if (!ok) return Status::Corruption("view: malformed object entry");
  e.kind = static_cast<model::ObjectKind>(kind);
  return e;
}

std::string EncodeResourceVersionEntry(const ResourceVersionEntry& e) {
  std::string out;
  AppendResourceVersionEntry(e.resource_version, e.source_seq, &out);
  return out;
}

Result<ResourceVersionEntry> DecodeResourceVersionEntry(std::string_view bytes) {
  model::RecordReader r(bytes);
  ResourceVersionEntry e;
  uint8_t version = 0;
  if (!(r.Byte(&version) && version == kEntryV1 && r.String(&e.resource_version) &&
        r.Varint(&e.source_seq) && r.done())) {
    return Status::Corruption("view: malformed resourceVersion entry");
  }
  return e;
}

namespace view_key {

std::string Object(model::ObjectKind kind, std::string_view ns, std::string_view name) {
  std::string k(1, kind == model::ObjectKind::kCronJob ? kCronJobPrefix : kJobPrefix);
  Append(&k, ns);
  k.append(name);
  return k;
}

std::string OwnerPrefix(std::string_view ns, std::string_view owner) {
  std::string k(1, kOwnerPrefix);
  Append(&k, ns);
  Append(&k, owner);
  return k;
}

std::string OwnerIndex(std::string_view ns, std::string_view owner, std::string_view job) {
  return OwnerPrefix(ns, owner).append(job);
}

std::string Resource(std::string_view resource) {
  return std::string(1, kResourcePrefix).append(resource);
}

std::string ResourceOf(const model::WatchEvent& ev) {
  return ev.api_version + "/" + std::string(model::ObjectKindName(ev.kind));
}

std::string Describe(std::string_view key) {
  if (key.empty()) return "(empty key)";
  std::string rest(key.substr(1));
  for (char& c : rest) {
    if (c == '\0') c = '/';
  }
  switch (key[0]) {
    case kCronJobPrefix:
      return "cronjob " + rest;
    case kJobPrefix:
      return "job " + rest;
    case kOwnerPrefix:
      return "jobs-by-owner " + rest;
    case kResourcePrefix:
      return "resourceVersion " + rest;
    default:
      return "unknown " + rest;
  }
}

}  // namespace view_key

model::WatchEvent StoredEvent(ViewObject object) {
  ObjectEntry& e = object.entry;
  model::WatchEvent ev;
  ev.type = model::WatchEventType::kModified;
  ev.kind = e.kind;
  ev.api_version = std::move(e.api_version);
  ev.namespace_ = std::move(e.namespace_);
  ev.name = std::move(e.name);
  ev.uid = std::move(e.uid);
  ev.resource_version = std::move(e.resource_version);
  ev.owner_name = std::move(e.owner_name);
  ev.owner_uid = std::move(e.owner_uid);
  ev.raw = std::move(object.raw);
  return ev;
}

Result<bool> ViewStore::GetInto(std::string_view key, std::string* value) {
  CL_ASSIGN_OR_RETURN(std::optional<std::string> v, Get(key));
  if (!v) return false;
  *value = std::move(*v);
  return true;
}

namespace {

// view_fold::Fold over a ViewStore: keys and values built in per-thread scratch buffers, so folding
// a log allocates nothing per record once they have grown.
class ViewStoreAccess {
 public:
  explicit ViewStoreAccess(ViewStore* view) : view_(view) {}
  void PutResourceVersion(const model::WatchEventRef& ev, uint64_t seq) {
    key_.assign(1, view_key::kResourcePrefix);
    key_.append(ev.api_version).push_back('/');
    key_.append(model::ObjectKindName(ev.kind));
    value_.clear();
    AppendResourceVersionEntry(ev.resource_version, seq, &value_);
    view_->Put(key_, value_);
  }
  Result<bool> FindObject(const model::WatchEventRef& ev) {
    ObjectKeyTo(ev.kind, ev.namespace_, ev.name, &key_);
    return view_->GetInto(key_, &prior_);
  }
  bool PriorUidAndOwner(std::string_view* uid, std::string_view* owner) {
    return view_entry::DecodeEntryUidAndOwner(prior_, uid, owner);
  }
  void WriteObject(const EntryView& e, std::string_view encoded) {
    bool whole = false;
    value_.resize(view_fold::ObjectEntrySize(e, encoded, &whole));
    view_fold::WriteObjectEntry(e, encoded, whole, value_.data());
    view_->Put(key_, value_);
  }
  void EraseObject() { view_->Delete(key_); }
  void PutIndex(std::string_view key) { view_->Put(key, ""); }
  void DeleteIndex(std::string_view key) { view_->Delete(key); }
  std::string& IndexKey() { return index_key_; }

 private:
  ViewStore* view_;
  static thread_local std::string key_, value_, prior_, index_key_;
};
thread_local std::string ViewStoreAccess::key_, ViewStoreAccess::value_, ViewStoreAccess::prior_,
    ViewStoreAccess::index_key_;

}  // namespace

Status FoldWatchEvent(const model::WatchEventRef& ev, uint64_t seq, ViewStore* view) {
  ViewStoreAccess access(view);
  return view_fold::Fold(ev, seq, access);
}

Result<std::optional<std::string>> MemViewStore::Get(std::string_view key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

Result<bool> MemViewStore::GetInto(std::string_view key, std::string* value) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return false;
  value->assign(it->second);
  return true;
}

void MemViewStore::Put(std::string_view key, std::string_view value) {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    entries_.emplace(std::string(key), std::string(value));
  } else {
    it->second.assign(value);
  }
}

void MemViewStore::Delete(std::string_view key) {
  auto it = entries_.find(key);
  if (it != entries_.end()) entries_.erase(it);
}

}  // namespace cronledger::store
