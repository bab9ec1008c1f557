#include "store/view.h"

#include <utility>

namespace cronledger::store {
namespace {

constexpr uint8_t kEntryV1 = 1;

void Append(std::string* out, std::string_view a) {
  out->append(a);
  out->push_back('\0');
}

}  // namespace

std::string EncodeObjectEntry(const ObjectEntry& e) {
  std::string out;
  model::RecordWriter w(&out);
  w.Byte(kEntryV1);
  w.Byte(static_cast<uint8_t>(e.kind));
  w.Bytes(e.api_version);
  w.Bytes(e.namespace_);
  w.Bytes(e.name);
  w.Bytes(e.uid);
  w.Bytes(e.resource_version);
  w.Bytes(e.owner_name);
  w.Bytes(e.owner_uid);
  w.Varint(e.source_seq);
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
  model::RecordWriter w(&out);
  w.Byte(kEntryV1);
  w.Bytes(e.resource_version);
  w.Varint(e.source_seq);
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

Status FoldWatchEvent(const model::WatchEvent& ev, uint64_t seq, ViewStore* view) {
  using model::WatchEventType;
  if (!ev.resource_version.empty()) {
    view->Put(view_key::Resource(view_key::ResourceOf(ev)),
              EncodeResourceVersionEntry({ev.resource_version, seq}));
  }
  if (ev.type == WatchEventType::kBookmark) return Status::Ok();

  const std::string key = view_key::Object(ev.kind, ev.namespace_, ev.name);
  CL_ASSIGN_OR_RETURN(std::optional<std::string> prior_bytes, view->Get(key));
  std::optional<ObjectEntry> prior;
  if (prior_bytes) {
    CL_ASSIGN_OR_RETURN(prior, DecodeObjectEntry(*prior_bytes));
  }
  const bool is_job = ev.kind == model::ObjectKind::kJob;
  if (ev.type == WatchEventType::kDeleted) {
    // A DELETED for another incarnation (a different uid under the same name) leaves the stored
    // object alone: it is the newer one.
    if (!prior || (!ev.uid.empty() && prior->uid != ev.uid)) return Status::Ok();
    view->Delete(key);
    if (is_job && !prior->owner_name.empty()) {
      view->Delete(view_key::OwnerIndex(ev.namespace_, prior->owner_name, ev.name));
    }
    return Status::Ok();
  }
  ObjectEntry entry{ev.kind,
                    ev.api_version,
                    ev.namespace_,
                    ev.name,
                    ev.uid,
                    ev.resource_version,
                    is_job ? ev.owner_name : std::string(),
                    is_job ? ev.owner_uid : std::string(),
                    seq};
  view->Put(key, EncodeObjectEntry(entry));
  if (is_job) {
    if (prior && !prior->owner_name.empty() && prior->owner_name != entry.owner_name) {
      view->Delete(view_key::OwnerIndex(ev.namespace_, prior->owner_name, ev.name));
    }
    if (!entry.owner_name.empty() && (!prior || prior->owner_name != entry.owner_name)) {
      view->Put(view_key::OwnerIndex(ev.namespace_, entry.owner_name, ev.name), "");
    }
  }
  return Status::Ok();
}

Result<std::optional<std::string>> MemViewStore::Get(std::string_view key) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
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
