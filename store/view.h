#pragma once

// The materialized view and the pure fold of watch events into it. The same FoldWatchEvent() runs
// live (Ledger::Commit, against RocksDB plus the uncommitted writes of its batch) and in rebuild
// and benchmarks (against an in-memory map), so a rebuild proves the live view.
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
Status FoldWatchEvent(const model::WatchEvent& ev, uint64_t seq, ViewStore* view);

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

// An unordered in-memory view for folding a whole log (rebuild, benchmarks): a hash map, so a
// fold costs no ordered-tree walks; SortedEntries() orders it once at the end.
class FlatViewStore : public ViewStore {
 public:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  using Map = std::unordered_map<std::string, std::string, Hash, std::equal_to<>>;

  Result<std::optional<std::string>> Get(std::string_view key) override;
  Result<bool> GetInto(std::string_view key, std::string* value) override;
  void Put(std::string_view key, std::string_view value) override;
  void Delete(std::string_view key) override;
  size_t size() const { return entries_.size(); }
  // The entries ordered by key (pointers into this store; valid until it changes).
  std::vector<const Map::value_type*> SortedEntries() const;

 private:
  // The fold reads a key and then writes it: remember the last key found, so the write needs no
  // second hash lookup. Node iterators stay valid across rehashing; erasing resets it.
  Map::iterator Find(std::string_view key);
  Map entries_;
  Map::iterator last_ = entries_.end();
};

}  // namespace cronledger::store
