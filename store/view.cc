#include "store/view.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>

namespace cronledger::store {
namespace {

constexpr uint8_t kEntryV1 = 1;

void Append(std::string* out, std::string_view a) {
  out->append(a);
  out->push_back('\0');
}

// The fields of an ObjectEntry as views (the fold's scratch form; same encoding).
struct EntryView {
  model::ObjectKind kind = model::ObjectKind::kCronJob;
  std::string_view api_version, namespace_, name, uid, resource_version, owner_name, owner_uid;
  uint64_t source_seq = 0;
};

// RecordWriter's varint (LEB128), written into a buffer sized beforehand: the fold's encoder
// sizes an entry once and writes it without a capacity check per byte.
size_t VarintLength(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

char* PutVarint(char* p, uint64_t v) {
  for (; v >= 0x80; v >>= 7) *p++ = static_cast<char>((v & 0x7f) | 0x80);
  *p++ = static_cast<char>(v);
  return p;
}

char* PutBytes(char* p, std::string_view s) {
  p = PutVarint(p, s.size());
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// The size of the encoding of `e`.
size_t EntrySize(const EntryView& e) {
  size_t size = 2 + VarintLength(e.source_seq);
  for (std::string_view f : {e.api_version, e.namespace_, e.name, e.uid, e.resource_version,
                             e.owner_name, e.owner_uid}) {
    size += VarintLength(f.size()) + f.size();
  }
  return size;
}

// Appends the encoding of `e` (version, kind, the seven strings, seq), as RecordWriter writes it;
// `size` is EntrySize(e).
void AppendEntry(const EntryView& e, size_t size, std::string* out) {
  const size_t at = out->size();
  out->resize(at + size);
  char* p = out->data() + at;
  *p++ = static_cast<char>(kEntryV1);
  *p++ = static_cast<char>(e.kind);
  for (std::string_view f : {e.api_version, e.namespace_, e.name, e.uid, e.resource_version,
                             e.owner_name, e.owner_uid}) {
    p = PutBytes(p, f);
  }
  PutVarint(p, e.source_seq);
}

void AppendEntry(const EntryView& e, std::string* out) { AppendEntry(e, EntrySize(e), out); }

void EncodeEntryTo(const EntryView& e, std::string* out) {
  out->clear();
  AppendEntry(e, out);
}

void AppendResourceVersionEntry(std::string_view resource_version, uint64_t seq, std::string* out) {
  const size_t at = out->size();
  out->resize(at + 1 + VarintLength(resource_version.size()) + resource_version.size() +
              VarintLength(seq));
  char* p = out->data() + at;
  *p++ = static_cast<char>(kEntryV1);
  PutVarint(PutBytes(p, resource_version), seq);
}

// RecordReader's varint, inline: false when truncated or over 64 bits.
[[gnu::always_inline]] inline bool GetVarint(const char** p, const char* end, uint64_t* v) {
  if (*p != end && static_cast<uint8_t>(**p) < 0x80) {  // one byte: lengths, mostly
    *v = static_cast<uint8_t>(*(*p)++);
    return true;
  }
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && *p != end; shift += 7) {
    const auto byte = static_cast<uint8_t>(*(*p)++);
    if (shift == 63 && byte > 1) return false;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

[[gnu::always_inline]] inline bool GetBytes(const char** p, const char* end, std::string_view* s) {
  uint64_t n = 0;
  if (!GetVarint(p, end, &n) || n > static_cast<uint64_t>(end - *p)) return false;
  *s = std::string_view(*p, n);
  *p += n;
  return true;
}

// Decodes an entry without copying (its fields view `bytes`); false when malformed, as
// RecordReader would find it.
bool DecodeEntryView(std::string_view bytes, EntryView* e) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  if (bytes.size() < 2 || static_cast<uint8_t>(p[0]) != kEntryV1) return false;
  const auto kind = static_cast<uint8_t>(p[1]);
  if (kind < 1 || kind > 2) return false;
  e->kind = static_cast<model::ObjectKind>(kind);
  p += 2;
  return GetBytes(&p, end, &e->api_version) && GetBytes(&p, end, &e->namespace_) &&
         GetBytes(&p, end, &e->name) && GetBytes(&p, end, &e->uid) &&
         GetBytes(&p, end, &e->resource_version) && GetBytes(&p, end, &e->owner_name) &&
         GetBytes(&p, end, &e->owner_uid) && GetVarint(&p, end, &e->source_seq) && p == end;
}

// The table's hash of a key: 8 bytes a step, then a full avalanche (murmur3's finalizer), so the
// low bits that pick a slot depend on every byte. Cheaper than std::hash on short view keys.
uint64_t KeyHash(std::string_view key) {
  constexpr uint64_t kMul = 0x9e3779b97f4a7c15ull;
  const char* p = key.data();
  size_t n = key.size();
  uint64_t h = n * kMul;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t v = 0;
    std::memcpy(&v, p, 8);
    h = (h ^ v) * kMul;
    h ^= h >> 31;
  }
  if (n > 0) {
    uint64_t v = 0;
    if (key.size() >= 8) {
      std::memcpy(&v, key.data() + key.size() - 8, 8);  // the last 8 bytes, overlapping
    } else {
      for (size_t i = 0; i < n; ++i) {
        v |= static_cast<uint64_t>(static_cast<uint8_t>(p[i])) << (8 * i);
      }
    }
    h = (h ^ v) * kMul;
  }
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

void ObjectKeyTo(model::ObjectKind kind, std::string_view ns, std::string_view name,
                 std::string* k) {
  k->assign(1,
            kind == model::ObjectKind::kCronJob ? view_key::kCronJobPrefix : view_key::kJobPrefix);
  Append(k, ns);
  k->append(name);
}

void OwnerIndexTo(std::string_view ns, std::string_view owner, std::string_view job,
                  std::string* k) {
  k->assign(1, view_key::kOwnerPrefix);
  Append(k, ns);
  Append(k, owner);
  k->append(job);
}

}  // namespace

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

namespace cronledger::store {

uint32_t FlatViewStore::Find(std::string_view key, uint64_t h) const {
  if (slots_.empty()) return kNone;
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint32_t s = slots_[i];
    if (s == kEmpty) return kNone;
    if (s == kTombstone) continue;
    const Entry& e = entries_[s - 1];
    if (e.hash == h && e.key() == key) return s - 1;
  }
}

uint32_t FlatViewStore::FindSlot(std::string_view key, uint64_t h, size_t* slot) {
  const size_t mask = slots_.size() - 1;
  size_t insert = SIZE_MAX;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint32_t s = slots_[i];
    if (s == kEmpty) {
      *slot = insert != SIZE_MAX ? insert : i;
      return kNone;
    }
    if (s == kTombstone) {
      if (insert == SIZE_MAX) insert = i;
      continue;
    }
    const Entry& e = entries_[s - 1];
    if (e.hash == h && e.key() == key) {
      *slot = i;
      return s - 1;
    }
  }
}

uint32_t FlatViewStore::InsertAt(size_t slot, std::string_view key, uint64_t h, size_t value_size) {
  uint32_t idx = 0;
  if (free_.empty()) {
    CL_CHECK(entries_.size() < kTombstone - 1);
    idx = static_cast<uint32_t>(entries_.size());
    entries_.emplace_back();
  } else {
    idx = free_.back();
    free_.pop_back();
  }
  Entry& e = entries_[idx];
  e.hash = h;
  e.key_len = static_cast<uint32_t>(key.size());
  e.live = true;
  e.bytes.reserve(key.size() + value_size);  // one allocation for the key and the value to come
  e.bytes.assign(key);
  if (slots_[slot] == kEmpty) ++used_slots_;
  slots_[slot] = idx + 1;
  ++live_;
  return idx;
}

void FlatViewStore::EraseAt(size_t slot, uint32_t idx) {
  slots_[slot] = kTombstone;
  Entry& e = entries_[idx];
  e.live = false;
  e.bytes.clear();  // keeps the capacity for the entry that reuses it
  free_.push_back(idx);
  --live_;
  if (last_ == idx) last_ = kNone;
  std::erase_if(resources_, [idx](const ResourceEntry& r) { return r.index == idx; });
}

uint32_t FlatViewStore::Upsert(std::string_view key, size_t value_size) {
  const uint64_t h = KeyHash(key);
  if ((used_slots_ + 1) * 2 > slots_.size()) Grow();
  size_t slot = 0;
  const uint32_t idx = FindSlot(key, h, &slot);
  return idx != kNone ? idx : InsertAt(slot, key, h, value_size);
}

uint32_t FlatViewStore::ResourceIndex(const model::WatchEventRef& ev) {
  for (const ResourceEntry& r : resources_) {
    if (r.kind == ev.kind && r.api_version == ev.api_version) return r.index;
  }
  key_scratch_.assign(1, view_key::kResourcePrefix);
  key_scratch_.append(ev.api_version).push_back('/');
  key_scratch_.append(model::ObjectKindName(ev.kind));
  const uint32_t idx = Upsert(key_scratch_, 16);
  resources_.push_back({ev.kind, std::string(ev.api_version), idx});
  return idx;
}

Status FlatViewStore::Fold(const model::WatchEventRef& ev, uint64_t seq) {
  using model::WatchEventType;
  if (!ev.resource_version.empty()) {
    Entry& r = entries_[ResourceIndex(ev)];
    r.bytes.resize(r.key_len);
    AppendResourceVersionEntry(ev.resource_version, seq, &r.bytes);
  }
  if (ev.type == WatchEventType::kBookmark) return Status::Ok();

  ObjectKeyTo(ev.kind, ev.namespace_, ev.name, &key_scratch_);
  const uint64_t h = KeyHash(key_scratch_);
  if ((used_slots_ + 1) * 2 > slots_.size()) Grow();
  size_t slot = 0;
  uint32_t idx = FindSlot(key_scratch_, h, &slot);
  const bool has_prior = idx != kNone;
  EntryView prior;  // views the stored entry: read before the entry is rewritten or erased
  if (has_prior && !DecodeEntryView(entries_[idx].value(), &prior)) {
    return Status::Corruption("view: malformed object entry");
  }
  const bool is_job = ev.kind == model::ObjectKind::kJob;
  if (ev.type == WatchEventType::kDeleted) {
    // As FoldWatchEvent: a DELETED of another incarnation leaves the stored (newer) object.
    if (!has_prior || (!ev.uid.empty() && prior.uid != ev.uid)) return Status::Ok();
    const bool unindex = is_job && !prior.owner_name.empty();
    if (unindex) OwnerIndexTo(ev.namespace_, prior.owner_name, ev.name, &index_scratch_);
    EraseAt(slot, idx);
    if (unindex) Delete(index_scratch_);
    return Status::Ok();
  }
  const std::string_view owner_name = is_job ? ev.owner_name : "";
  const bool owner_changed = !has_prior || prior.owner_name != owner_name;
  const bool unindex = is_job && has_prior && !prior.owner_name.empty() && owner_changed;
  if (unindex) OwnerIndexTo(ev.namespace_, prior.owner_name, ev.name, &index_scratch_);
  const EntryView entry{ev.kind, ev.api_version,      ev.namespace_, ev.name,
                        ev.uid,  ev.resource_version, owner_name,    is_job ? ev.owner_uid : "",
                        seq};
  const size_t size = EntrySize(entry);
  if (!has_prior) idx = InsertAt(slot, key_scratch_, h, size);
  Entry& e = entries_[idx];
  e.bytes.resize(e.key_len);
  AppendEntry(entry, size, &e.bytes);
  if (unindex) Delete(index_scratch_);
  if (is_job && !owner_name.empty() && owner_changed) {
    OwnerIndexTo(ev.namespace_, owner_name, ev.name, &index_scratch_);
    Entry& index = entries_[Upsert(index_scratch_, 0)];
    index.bytes.resize(index.key_len);  // the index entry's value is empty
  }
  return Status::Ok();
}

uint32_t FlatViewStore::FindCached(std::string_view key, uint64_t* h) {
  if (last_ != kNone && entries_[last_].live && entries_[last_].key() == key) {
    *h = entries_[last_].hash;
    return last_;
  }
  *h = KeyHash(key);
  const uint32_t found = Find(key, *h);
  if (found != kNone) last_ = found;
  return found;
}

void FlatViewStore::Grow() {
  // At most half full (live + tombstones): probes stay short. Rebuilding drops the tombstones.
  size_t n = slots_.empty() ? 1024 : slots_.size();
  while ((live_ + 1) * 2 > n) n *= 2;
  slots_.assign(n, kEmpty);
  const size_t mask = n - 1;
  for (uint32_t idx = 0; idx < entries_.size(); ++idx) {
    if (!entries_[idx].live) continue;
    size_t i = entries_[idx].hash & mask;
    while (slots_[i] != kEmpty) i = (i + 1) & mask;
    slots_[i] = idx + 1;
  }
  used_slots_ = live_;
}

Result<std::optional<std::string>> FlatViewStore::Get(std::string_view key) {
  uint64_t h = 0;
  const uint32_t idx = FindCached(key, &h);
  if (idx == kNone) return std::optional<std::string>();
  return std::optional<std::string>(std::string(entries_[idx].value()));
}

Result<bool> FlatViewStore::GetInto(std::string_view key, std::string* value) {
  uint64_t h = 0;
  const uint32_t idx = FindCached(key, &h);
  if (idx == kNone) return false;
  value->assign(entries_[idx].value());
  return true;
}

void FlatViewStore::Put(std::string_view key, std::string_view value) {
  uint64_t h = 0;
  uint32_t idx = FindCached(key, &h);
  if (idx != kNone) {
    Entry& e = entries_[idx];
    e.bytes.resize(e.key_len);  // keeps the capacity: an update allocates only when it grows
    e.bytes.append(value);
    return;
  }
  if ((used_slots_ + 1) * 2 > slots_.size()) Grow();
  size_t slot = 0;
  FindSlot(key, h, &slot);  // absent (FindCached said so): where it goes
  idx = InsertAt(slot, key, h, value.size());
  entries_[idx].bytes.append(value);
  last_ = idx;
}

void FlatViewStore::Delete(std::string_view key) {
  if (slots_.empty()) return;
  size_t slot = 0;
  const uint32_t idx = FindSlot(key, KeyHash(key), &slot);
  if (idx != kNone) EraseAt(slot, idx);
}

std::vector<std::pair<std::string_view, std::string_view>> FlatViewStore::SortedEntries() const {
  std::vector<std::pair<std::string_view, std::string_view>> out;
  out.reserve(live_);
  for (const Entry& e : entries_) {
    if (e.live) out.emplace_back(e.key(), e.value());
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

}  // namespace cronledger::store
