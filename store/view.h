#pragma once

// The materialized view and the pure fold of watch events into it. One fold (store/view_fold.h)
// runs live (FoldWatchEvent in Ledger::Commit, against RocksDB plus the uncommitted writes of its
// batch) and in rebuild, replay and benchmarks (FlatViewStore::Fold, against an in-memory table),
// so a rebuild proves the live view.
//
// View keys (docs/ledger.md): "c" ns \0 name -> ObjectEntry of a CronJob; "j" ns \0 name ->
// ObjectEntry of a Job; "o" ns \0 owner \0 job -> "" (Jobs by controller owner name);
// "r" apiVersion/Kind -> ResourceVersionEntry (the last resourceVersion of that watch).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/inputs.h"
#include "model/result.h"

namespace cronledger::store {

// What the view keeps of an object: its identity, and where its raw bytes are (the input record
// `source_seq` of the raw column family). The view is an index into the log.
struct ObjectEntry {
  model::ObjectKind kind = model::ObjectKind::kCronJob;
  std::string api_version;
  std::string namespace_;
  std::string name;
  std::string uid;
  std::string resource_version;
  std::string owner_name;  // Jobs: the controller owner's name
  std::string owner_uid;
  uint64_t source_seq = 0;
  friend bool operator==(const ObjectEntry&, const ObjectEntry&) = default;
};

struct ViewObject {
  ObjectEntry entry;
  std::string raw;  // the object's JSON as received
};

// The object as a watch event of type kModified: the entry's fields and the stored bytes (what a
// reader that takes watch events needs of what the view holds).
model::WatchEvent StoredEvent(ViewObject object);

struct ResourceVersionEntry {
  std::string resource_version;
  uint64_t source_seq = 0;
  friend bool operator==(const ResourceVersionEntry&, const ResourceVersionEntry&) = default;
};

std::string EncodeObjectEntry(const ObjectEntry& e);
Result<ObjectEntry> DecodeObjectEntry(std::string_view bytes);
std::string EncodeResourceVersionEntry(const ResourceVersionEntry& e);
Result<ResourceVersionEntry> DecodeResourceVersionEntry(std::string_view bytes);

namespace view_key {
std::string Object(model::ObjectKind kind, std::string_view ns, std::string_view name);
std::string OwnerIndex(std::string_view ns, std::string_view owner, std::string_view job);
std::string OwnerPrefix(std::string_view ns, std::string_view owner);
std::string Resource(std::string_view resource);
// "batch/v1/CronJob": the resource a watch event belongs to.
std::string ResourceOf(const model::WatchEvent& ev);
inline constexpr char kCronJobPrefix = 'c';
inline constexpr char kJobPrefix = 'j';
inline constexpr char kOwnerPrefix = 'o';
inline constexpr char kResourcePrefix = 'r';
// A readable form for reports: "cronjob prod/backup", "owner prod/backup -> job-1", ...
std::string Describe(std::string_view key);
}  // namespace view_key

// Key-value access to a view as the fold needs it. Get sees the caller's own earlier Put/Delete.
class ViewStore {
 public:
  virtual ~ViewStore() = default;
  virtual Result<std::optional<std::string>> Get(std::string_view key) = 0;
  virtual void Put(std::string_view key, std::string_view value) = 0;
  virtual void Delete(std::string_view key) = 0;
  // Get into a caller's buffer (reused across calls, so a fold allocates nothing per record).
  // Returns false when absent. The default calls Get.
  virtual Result<bool> GetInto(std::string_view key, std::string* value);
};

// Folds the watch event with sequence number `seq` into `view`: ADDED/MODIFIED upsert the object
// (and re-point the owner index when a Job's controller owner changes), DELETED removes it when
// the uid matches (or the event has none), BOOKMARK only advances the resource's resourceVersion.
// Deterministic; its only effects are on `view`. Fails only when `view` fails to read.
Status FoldWatchEvent(const model::WatchEventRef& ev, uint64_t seq, ViewStore* view);
inline Status FoldWatchEvent(const model::WatchEvent& ev, uint64_t seq, ViewStore* view) {
  return FoldWatchEvent(model::WatchEventRef::Of(ev), seq, view);
}

// An ordered in-memory view (rebuild's scratch area, tests, benchmarks).
class MemViewStore : public ViewStore {
 public:
  Result<std::optional<std::string>> Get(std::string_view key) override;
  Result<bool> GetInto(std::string_view key, std::string* value) override;
  void Put(std::string_view key, std::string_view value) override;
  void Delete(std::string_view key) override;
  const std::map<std::string, std::string, std::less<>>& entries() const { return entries_; }

 private:
  std::map<std::string, std::string, std::less<>> entries_;
};

// An unordered in-memory view for folding a whole log (rebuild, benchmarks): an open-addressing
// hash table, so a fold costs no ordered-tree walks and few cache misses; SortedEntries() orders
// it once at the end. Each entry keeps its key and value in one buffer, so a lookup touches the
// slot array and that buffer, and updating an existing key reuses its capacity (no allocation).
class FlatViewStore : public ViewStore {
 public:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };

  Result<std::optional<std::string>> Get(std::string_view key) override;
  Result<bool> GetInto(std::string_view key, std::string* value) override;
  void Put(std::string_view key, std::string_view value) override;
  void Delete(std::string_view key) override;
  // What a Fold did to the event's object entry (replay's view history derives its family
  // changes from it instead of reading the entry before and after).
  struct FoldEffect {
    bool changed = false;  // the entry was written (ADDED, MODIFIED) or removed (DELETED)
    bool written = false;  // written: it is the event's object now, source_seq = seq
    // A Job whose entry named a controller owner that it no longer names (removed, or another
    // owner, or none): that owner's name. Empty otherwise.
    std::string left_owner;
  };
  // FoldWatchEvent(ev, seq, this): the same fold (store/view_fold.h) over the table directly, with
  // less work (what rebuild and replay run): one probe of the table for the object (its entry is
  // read and rewritten in place, no copy of the prior), none for the resourceVersion entry of a
  // resource seen before (the entry is kept at hand). With `effect`, says what it did to the
  // object's entry (reset first).
  Status Fold(const model::WatchEventRef& ev, uint64_t seq, FoldEffect* effect = nullptr);
  // Room for `keys` entries without growing the table or the entry array (a hint: more can be
  // inserted, fewer used). Rebuild reserves the stored view's estimated key count.
  void Reserve(size_t keys);
  size_t size() const { return live_; }
  // The entries (key, value) ordered by key; views into this store, valid until it changes.
  std::vector<std::pair<std::string_view, std::string_view>> SortedEntries() const;

 private:
  struct Entry {
    uint64_t hash = 0;
    uint32_t key_len = 0;
    bool live = false;
    std::string bytes;  // key, then value
    std::string_view key() const { return std::string_view(bytes).substr(0, key_len); }
    std::string_view value() const { return std::string_view(bytes).substr(key_len); }
    // Room for a value of `size` bytes, written in place over the old one (the capacity is kept:
    // an update allocates only when the entry grows past it).
    char* ValueSpace(size_t size) {
      bytes.resize(key_len + size);
      return bytes.data() + key_len;
    }
  };
  // A slot holds the entry index + 1 in its low 32 bits (kEmpty: none, kTombstone: a deleted
  // entry's) and the high 32 bits of the key's hash, so that a probe passes other keys' slots
  // without reading their entries.
  static constexpr uint32_t kEmpty = 0;
  static constexpr uint32_t kTombstone = UINT32_MAX;
  static constexpr uint32_t kNone = UINT32_MAX;
  static constexpr uint64_t kTagMask = 0xffffffff00000000ull;
  static uint64_t SlotOf(uint64_t h, uint32_t idx) { return (h & kTagMask) | (idx + 1); }

  // A resource's resourceVersion entry, kept at hand by Fold (entry indices are stable).
  struct ResourceEntry {
    model::ObjectKind kind;
    std::string api_version;
    uint32_t index;
  };

  // The index in entries_ of `key` (hash `h`), or kNone.
  uint32_t Find(std::string_view key, uint64_t h) const;
  // Find() that also returns the slot: the entry's when found, else where an insert goes (the
  // first tombstone or the empty slot ending the probe). The table has room for one insert.
  uint32_t FindSlot(std::string_view key, uint64_t h, size_t* slot);
  // Inserts `key` (hash `h`) with an empty value at `slot` (from FindSlot), room made for a value
  // of `value_size` bytes; returns its index.
  uint32_t InsertAt(size_t slot, std::string_view key, uint64_t h, size_t value_size);
  // Removes the entry `idx` whose slot is `slot`.
  void EraseAt(size_t slot, uint32_t idx);
  // The entry index of `key`, inserted with an empty value (room for `value_size`) when absent.
  uint32_t Upsert(std::string_view key, size_t value_size);
  uint32_t ResourceIndex(const model::WatchEventRef& ev);
  // Find() through the one-entry cache of the last key found (a fold reads a key, then writes it).
  uint32_t FindCached(std::string_view key, uint64_t* h);
  // Rebuilds the slot array with room for max(size(), keys) entries at most half full.
  void Grow(size_t keys = 0);

  std::vector<uint64_t> slots_;  // power-of-two size, linear probing
  std::vector<Entry> entries_;
  std::vector<uint32_t> free_;  // indices of deleted entries, reused by inserts
  size_t live_ = 0;
  size_t used_slots_ = 0;  // live + tombstones
  uint32_t last_ = kNone;
  std::vector<ResourceEntry> resources_;  // usually two: CronJobs and Jobs
  std::string key_scratch_, index_scratch_;
  class FoldAccess;  // the fold's view of the table (flat_view_store.cc)
};

}  // namespace cronledger::store
