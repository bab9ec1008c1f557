#include "store/view.h"

#include <utility>

#include "store/view_entry.h"

namespace cronledger::store {

using view_entry::Append;
using view_entry::AppendResourceVersionEntry;
using view_entry::DecodeEntryView;
using view_entry::EncodeEntryTo;
using view_entry::EntryView;
using view_entry::kEntryV1;
using view_entry::ObjectKeyTo;
using view_entry::OwnerIndexTo;

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

Status FoldWatchEvent(const model::WatchEventRef& ev, uint64_t seq, ViewStore* view) {
  using model::WatchEventType;
  // Per-thread scratch buffers: folding a log allocates nothing per record once they have grown.
  thread_local std::string key, value, prior_bytes, index_key;
  if (!ev.resource_version.empty()) {
    key.assign(1, view_key::kResourcePrefix);
    key.append(ev.api_version).push_back('/');
    key.append(model::ObjectKindName(ev.kind));
    value.clear();
    AppendResourceVersionEntry(ev.resource_version, seq, &value);
    view->Put(key, value);
  }
  if (ev.type == WatchEventType::kBookmark) return Status::Ok();

  ObjectKeyTo(ev.kind, ev.namespace_, ev.name, &key);
  CL_ASSIGN_OR_RETURN(const bool has_prior, view->GetInto(key, &prior_bytes));
  EntryView prior;
  if (has_prior && !DecodeEntryView(prior_bytes, &prior)) {
    return Status::Corruption("view: malformed object entry");
  }
  const bool is_job = ev.kind == model::ObjectKind::kJob;
  if (ev.type == WatchEventType::kDeleted) {
    // A DELETED for another incarnation (a different uid under the same name) leaves the stored
    // object alone: it is the newer one.
    if (!has_prior || (!ev.uid.empty() && prior.uid != ev.uid)) return Status::Ok();
    view->Delete(key);
    if (is_job && !prior.owner_name.empty()) {
      OwnerIndexTo(ev.namespace_, prior.owner_name, ev.name, &index_key);
      view->Delete(index_key);
    }
    return Status::Ok();
  }
  const std::string_view owner_name = is_job ? ev.owner_name : "";
  EncodeEntryTo({ev.kind, ev.api_version, ev.namespace_, ev.name, ev.uid, ev.resource_version,
                 owner_name, is_job ? ev.owner_uid : "", seq},
                &value);
  view->Put(key, value);
  if (is_job) {
    // `prior` views prior_bytes, this thread's copy: the store's writes do not change it.
    if (has_prior && !prior.owner_name.empty() && prior.owner_name != owner_name) {
      OwnerIndexTo(ev.namespace_, prior.owner_name, ev.name, &index_key);
      view->Delete(index_key);
    }
    if (!owner_name.empty() && (!has_prior || prior.owner_name != owner_name)) {
      OwnerIndexTo(ev.namespace_, owner_name, ev.name, &index_key);
      view->Put(index_key, "");
    }
  }
  return Status::Ok();
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
