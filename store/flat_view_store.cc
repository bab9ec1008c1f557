// FlatViewStore: rebuild's in-memory view, an open-addressing hash table, and its fold.
#include <algorithm>
#include <cstdint>
#include <cstring>

#include "store/view.h"
#include "store/view_entry.h"
#include "store/view_fold.h"

namespace cronledger::store {

using view_entry::DecodeEntryUidAndOwner;
using view_entry::EntryView;
using view_entry::ObjectKeyTo;
using view_entry::ResourceVersionEntrySize;
using view_entry::WriteResourceVersionEntry;

namespace {

__extension__ using U128 = unsigned __int128;

uint64_t Load8(const char* p) {
  uint64_t v = 0;
  std::memcpy(&v, p, 8);
  return v;
}

uint64_t Load4(const char* p) {
  uint32_t v = 0;
  std::memcpy(&v, p, 4);
  return v;
}

// The 128-bit product of a and b, folded to 64 bits (wyhash's mixing step).
uint64_t Mum(uint64_t a, uint64_t b) {
  const U128 r = static_cast<U128>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

// The table's hash of a key, after wyhash: 16 bytes a step (a key of up to 16 bytes is one or
// two overlapping loads), each step one 64x64->128 multiply. The low bits pick a slot and the
// high 32 are the slot's tag: both depend on every byte of the key.
uint64_t KeyHash(std::string_view key) {
  constexpr uint64_t kP0 = 0xa0761d6478bd642full;
  constexpr uint64_t kP1 = 0xe7037ed1a0b428dbull;
  constexpr uint64_t kP2 = 0x8ebc6af09c88c6e3ull;
  const char* p = key.data();
  size_t n = key.size();
  uint64_t seed = kP0;
  uint64_t a = 0;
  uint64_t b = 0;
  if (n <= 16) {
    if (n >= 8) {
      a = Load8(p);
      b = Load8(p + n - 8);
    } else if (n >= 4) {
      a = Load4(p);
      b = Load4(p + n - 4);
    } else if (n > 0) {
      a = (static_cast<uint64_t>(static_cast<uint8_t>(p[0])) << 16) |
          (static_cast<uint64_t>(static_cast<uint8_t>(p[n / 2])) << 8) |
          static_cast<uint8_t>(p[n - 1]);
    }
  } else {
    for (; n > 16; p += 16, n -= 16) seed = Mum(Load8(p) ^ kP1, Load8(p + 8) ^ seed);
    a = Load8(p + n - 16);
    b = Load8(p + n - 8);
  }
  return Mum(kP1 ^ key.size(), Mum(a ^ kP1, b ^ seed ^ kP2));
}

// key == stored, inline for the short keys of the view (no call to memcmp per probe).
[[gnu::always_inline]] inline bool SameKey(std::string_view stored, std::string_view key) {
  const size_t n = key.size();
  if (stored.size() != n) return false;
  const char* x = stored.data();
  const char* y = key.data();
  if (n >= 8 && n <= 16) {
    return ((Load8(x) ^ Load8(y)) | (Load8(x + n - 8) ^ Load8(y + n - 8))) == 0;
  }
  if (n > 16 && n <= 32) {
    return ((Load8(x) ^ Load8(y)) | (Load8(x + 8) ^ Load8(y + 8)) |
            (Load8(x + n - 16) ^ Load8(y + n - 16)) | (Load8(x + n - 8) ^ Load8(y + n - 8))) == 0;
  }
  return stored == key;
}

}  // namespace

uint32_t FlatViewStore::Find(std::string_view key, uint64_t h) const {
  if (slots_.empty()) return kNone;
  const size_t mask = slots_.size() - 1;
  const uint64_t tag = h & kTagMask;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint64_t s = slots_[i];
    const auto ref = static_cast<uint32_t>(s);
    if (ref == kEmpty) return kNone;
    if ((s & kTagMask) == tag && ref != kTombstone && SameKey(entries_[ref - 1].key(), key)) {
      return ref - 1;
    }
  }
}

uint32_t FlatViewStore::FindSlot(std::string_view key, uint64_t h, size_t* slot) {
  const size_t mask = slots_.size() - 1;
  const uint64_t tag = h & kTagMask;
  size_t insert = SIZE_MAX;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const uint64_t s = slots_[i];
    const auto ref = static_cast<uint32_t>(s);
    if (ref == kEmpty) {
      *slot = insert != SIZE_MAX ? insert : i;
      return kNone;
    }
    if (ref == kTombstone) {
      if (insert == SIZE_MAX) insert = i;
      continue;
    }
    if ((s & kTagMask) == tag && SameKey(entries_[ref - 1].key(), key)) {
      *slot = i;
      return ref - 1;
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
  if (static_cast<uint32_t>(slots_[slot]) == kEmpty) ++used_slots_;
  slots_[slot] = SlotOf(h, idx);
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

// view_fold::Fold over the table: one probe for the object (its entry is read and rewritten in
// place, no copy of the prior), none for the resourceVersion entry of a resource seen before.
class FlatViewStore::FoldAccess {
 public:
  explicit FoldAccess(FlatViewStore* s) : s_(s) {}
  void PutResourceVersion(const model::WatchEventRef& ev, uint64_t seq) {
    Entry& r = s_->entries_[s_->ResourceIndex(ev)];
    WriteResourceVersionEntry(ev.resource_version, seq,
                              r.ValueSpace(ResourceVersionEntrySize(ev.resource_version, seq)));
  }
  Result<bool> FindObject(const model::WatchEventRef& ev) {
    ObjectKeyTo(ev.kind, ev.namespace_, ev.name, &s_->key_scratch_);
    hash_ = KeyHash(s_->key_scratch_);
    if ((s_->used_slots_ + 1) * 2 > s_->slots_.size()) s_->Grow();
    idx_ = s_->FindSlot(s_->key_scratch_, hash_, &slot_);
    return idx_ != kNone;
  }
  bool PriorUidAndOwner(std::string_view* uid, std::string_view* owner) {
    return DecodeEntryUidAndOwner(s_->entries_[idx_].value(), uid, owner);
  }
  void WriteObject(const EntryView& e, std::string_view encoded) {
    bool whole = false;
    const size_t size = view_fold::ObjectEntrySize(e, encoded, &whole);
    if (idx_ == kNone) idx_ = s_->InsertAt(slot_, s_->key_scratch_, hash_, size);
    view_fold::WriteObjectEntry(e, encoded, whole, s_->entries_[idx_].ValueSpace(size));
  }
  void EraseObject() { s_->EraseAt(slot_, idx_); }
  void PutIndex(std::string_view key) {
    s_->entries_[s_->Upsert(key, 0)].ValueSpace(0);  // the index entry's value is empty
  }
  void DeleteIndex(std::string_view key) { s_->Delete(key); }
  std::string& IndexKey() { return s_->index_scratch_; }

 private:
  FlatViewStore* s_;
  uint64_t hash_ = 0;
  size_t slot_ = 0;
  uint32_t idx_ = kNone;
};

Status FlatViewStore::Fold(const model::WatchEventRef& ev, uint64_t seq, FoldEffect* effect) {
  FoldAccess access(this);
  return view_fold::Fold(ev, seq, access, effect);
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
    const uint64_t h = entries_[idx].hash;
    size_t i = h & mask;
    while (slots_[i] != kEmpty) i = (i + 1) & mask;
    slots_[i] = SlotOf(h, idx);
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
