// FlatViewStore: rebuild's in-memory view, an open-addressing hash table, and its fold.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "store/view.h"
#include "store/view_entry.h"

namespace cronledger::store {

using view_entry::AppendEntry;
using view_entry::AppendResourceVersionEntry;
using view_entry::DecodeEntryView;
using view_entry::EntrySize;
using view_entry::EntryView;
using view_entry::ObjectKeyTo;
using view_entry::OwnerIndexTo;

namespace {

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

}  // namespace

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

void FlatViewStore::Reserve(size_t keys) {
  entries_.reserve(keys);
  if ((keys + 1) * 2 > slots_.size()) Grow(keys);
}

void FlatViewStore::Grow(size_t keys) {
  // At most half full (live + tombstones): probes stay short. Rebuilding drops the tombstones.
  size_t n = slots_.empty() ? 1024 : slots_.size();
  while ((std::max(live_, keys) + 1) * 2 > n) n *= 2;
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
