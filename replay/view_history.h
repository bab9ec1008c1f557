#pragma once

// The controller's view, versioned by input seq, per CronJob "family" (the CronJob and the Jobs
// whose controller owner names it). Folding uses the store's one fold (FlatViewStore::Fold, the
// fold FoldWatchEvent runs live: store/view_fold.h), so a family at seq S is exactly what
// Ledger::ReadCronJobView returned when the log ended at S.
// Objects are decoded once, when their watch event is folded, and shared between versions.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/objects.h"
#include "model/result.h"
#include "reconciler/invalid_object.h"
#include "store/ledger.h"
#include "store/view.h"

namespace cronledger::replay {

struct FamilyJobEntry {
  uint64_t seq = 0;  // the input that wrote it
  std::shared_ptr<const model::Job> job;
};

// The Jobs of a family version by name: a std::map shared between versions until one of them
// changes it (copy on write), so a version that changes only the CronJob copies no Job entry.
// Reads as a const std::map.
class FamilyJobs {
 public:
  using Map = std::map<std::string, FamilyJobEntry>;
  using const_iterator = Map::const_iterator;
  using value_type = Map::value_type;

  const_iterator begin() const { return map().begin(); }
  const_iterator end() const { return map().end(); }
  size_t size() const { return map().size(); }
  bool empty() const { return map().empty(); }
  size_t count(const std::string& name) const { return map().count(name); }
  const_iterator find(const std::string& name) const { return map().find(name); }
  const FamilyJobEntry& at(const std::string& name) const { return map().at(name); }

  void erase(const std::string& name) {
    if (count(name) != 0) Mutable().erase(name);
  }
  FamilyJobEntry& operator[](const std::string& name) { return Mutable()[name]; }

 private:
  const Map& map() const;
  Map& Mutable();
  std::shared_ptr<Map> map_;  // null: empty
};

// A Job of the family whose stored bytes are there but do not decode: the input that wrote them
// and reconciler::StoredJobError's text. Its CronJob's pass records why it does not act
// (reconciler/invalid_object.h).
struct InvalidJobBytes {
  uint64_t seq = 0;
  std::string message;
};

struct FamilyView {
  uint64_t seq = 0;                                // this version holds from this input seq on
  std::shared_ptr<const model::CronJob> cron_job;  // null when the view has no such CronJob
  uint64_t cron_job_seq = 0;                       // the input that wrote it
  using JobEntry = FamilyJobEntry;
  FamilyJobs jobs;  // by name
  // Objects of the family that could not be decoded (raw bytes pruned by retention, bad JSON),
  // "CronJob" or the Job's name -> why: a pass reading this version cannot be replayed.
  std::map<std::string, std::string> errors;
  // Set (with cron_job null) when the CronJob's stored bytes are there but do not decode: the
  // controller's pass recorded why it did not act on it (reconciler/invalid_object.h), and the
  // replay derives the same pass. Its errors entry "CronJob" stays (the object is not readable).
  std::optional<reconciler::InvalidCronJob> invalid_cron_job;
  // Jobs whose stored bytes are there but do not decode, by name (each also has its errors
  // entry). When they are the only errors, a pass reading this version is derived from the first.
  std::map<std::string, InvalidJobBytes> invalid_jobs;
};

// One change of a family view, as ViewHistory::Fold derives it from a watch event. Applying a
// family's changes in seq order to an empty FamilyView gives each of its versions in turn
// (ApplyFamilyChange): a verify-only replay that decides its passes on a second thread hands the
// changes over instead of building versions (docs/replay.md "Throughput").
struct FamilyChange {
  enum class Op : uint8_t {
    kCronJob,   // the family's CronJob is `cron_job` (null: none, or it did not decode)
    kSetJob,    // Job `job` is `job_object` (null when it did not decode: then `error` is set)
    kEraseJob,  // Job `job` left the family
  };
  Op op = Op::kCronJob;
  uint64_t seq = 0;    // the input that made the change
  std::string family;  // "ns/name"
  std::string job;     // kSetJob, kEraseJob: the Job's name
  std::shared_ptr<const model::CronJob> cron_job;
  uint64_t cron_job_seq = 0;  // kCronJob: the input that wrote it (0: none)
  std::shared_ptr<const model::Job> job_object;
  std::string error;  // non-empty: why the object could not be decoded
  // kCronJob: the CronJob the bytes are of (namespace, name, uid of the watch event), and, when
  // the bytes are there but do not decode, what the controller's pass read of it.
  model::CronJobRef cron_job_ref;
  std::optional<reconciler::InvalidCronJob> invalid_cron_job;
  // kSetJob: set when the Job's bytes are there but do not decode.
  std::optional<InvalidJobBytes> invalid_job;
  // Changes sent with a deferred decode (ViewHistory::SendChangesTo): the object is not decoded
  // yet; `raw` and `raw_pruned` are the record's, and ViewHistory::DecodeDeferred decodes them
  // into cron_job / job_object / error. ApplyFamilyChange takes decoded changes only.
  bool deferred = false;
  bool raw_pruned = false;
  std::string raw;
};

// Applies `c` to `f` (moving its objects out of `c`); f->seq becomes c.seq.
void ApplyFamilyChange(FamilyChange&& c, FamilyView* f);

// "ns/name".
inline std::string FamilyKey(std::string_view ns, std::string_view name) {
  std::string k(ns);
  k += '/';
  k += name;
  return k;
}

class ViewHistory {
 public:
  // Families for which `in_scope(ns, name)` is false are not tracked (null = all are).
  // With `jobs_without_json`, Jobs are decoded by model::DecodeJobFields (model/job_fields.h):
  // their JSON members are null. Only for recorded passes that nothing else reads the view of.
  explicit ViewHistory(std::function<bool(std::string_view, std::string_view)> in_scope = nullptr,
                       bool jobs_without_json = false)
      : in_scope_(std::move(in_scope)), jobs_without_json_(jobs_without_json) {}

  // Folds a watch event record (other records are ignored). Fails only when the view fails.
  Status Fold(const store::LogRecord& rec);
  // From now on Fold appends the family changes to `*changes` (in seq order) instead of making
  // versions: At, Latest and Trim then see none. Null goes back to making versions. With
  // `defer_decode` the changes carry the objects' raw bytes instead of the decoded objects
  // (DecodeDeferred decodes them, e.g. on the thread that applies the changes).
  void SendChangesTo(std::vector<FamilyChange>* changes, bool defer_decode = false) {
    changes_ = changes;
    defer_decode_ = defer_decode;
  }
  // Decodes a deferred change's object as Fold decodes it when not deferring (same objects, same
  // error texts) and clears `deferred`. Reads only what the constructor set, so it may run on
  // another thread while this history folds.
  void DecodeDeferred(FamilyChange* c) const;
  // The family as of input seq `seq` (the latest version at or before it); null when the family
  // had no version by then.
  std::shared_ptr<const FamilyView> At(const std::string& key, uint64_t seq) const;
  std::shared_ptr<const FamilyView> Latest(const std::string& key) const;
  // Forgets versions that no lookup at or after `seq` can need. With `released`, the forgotten
  // versions are appended to it instead of being freed here (the caller frees them elsewhere,
  // e.g. on another thread).
  void Trim(const std::string& key, uint64_t seq,
            std::vector<std::shared_ptr<const FamilyView>>* released = nullptr);

 private:
  bool Relevant(const model::WatchEvent& ev);
  FamilyView& NewVersion(const std::string& key, uint64_t seq);
  // A change Fold derived: applied to a new version, or appended to changes_.
  void Emit(FamilyChange&& c);
  // The object of a kCronJob / kSetJob change, decoded from the record (or deferred).
  void DecodeOrDefer(const store::LogRecord& rec, FamilyChange* c) const;

  std::function<bool(std::string_view, std::string_view)> in_scope_;
  bool jobs_without_json_ = false;
  store::FlatViewStore view_;
  store::FlatViewStore::FoldEffect effect_;  // Fold's, reused
  std::vector<FamilyChange>* changes_ = nullptr;
  bool defer_decode_ = false;
  std::unordered_map<std::string, std::deque<std::shared_ptr<FamilyView>>> versions_;
};

}  // namespace cronledger::replay
