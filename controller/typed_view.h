#pragma once

// The controller's decoded image of the ledger's view (docs/controller.md "The view in memory"):
// every CronJob and Job the view holds, decoded once, when the watch event that brought it is
// committed (or taken as the event's decoder decoded it, model::WatchEvent::decoded), and
// the view's owner index. A pass reads its CronJob's family from here, with no
// ledger read and no decode; the event handlers compare each event with the object it replaces.
// The bytes stay in the ledger (Ledger::GetInputRaw of an object's source_seq).
//
// It changes only through the view's fold (store/view_fold.h), the same code that folds the
// ledger's view, applied to each committed unit's watch events in commit order. So at `view_seq`
// it holds what the ledger's view held once every watch event up to that seq was folded.

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "model/inputs.h"
#include "model/objects.h"
#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::controller {

class TypedView {
 public:
  // One object as the view holds it; never changed once stored, so a pass keeps reading it while
  // ingest replaces it.
  struct Object {
    // The view entry's fields.
    std::string uid;
    std::string resource_version;
    std::string owner_name;  // Jobs: the controller owner's name
    std::string owner_uid;
    uint64_t source_seq = 0;  // the input its bytes came from
    // Decoded as a pass reads it (model/job_fields.h: the typed fields, no JSON trees but a
    // CronJob's job template), or, when the bytes do not decode, the error every reader reports
    // (reconciler::StoredCronJobError / StoredJobError).
    // (Apart from the entry, so that an object holds only its own kind's type.)
    std::shared_ptr<const model::CronJob> cron_job;
    std::shared_ptr<const model::Job> job;
    std::string error;
  };
  using ObjectPtr = std::shared_ptr<const Object>;

  // A CronJob and the Jobs the view's owner index lists under its name, by name (what the
  // ledger's view read of a CronJob returns), as of `view_seq`.
  struct Family {
    ObjectPtr cron_job;
    std::vector<ObjectPtr> jobs;
    uint64_t view_seq = 0;
  };

  // What folding one event did to its object: the object before (null when the view had none)
  // and after (null when the event removed it or the view has none).
  struct Change {
    ObjectPtr prior;
    ObjectPtr current;
  };

  // Replaces the contents with the ledger's view, read at one snapshot.
  Status Load(store::Ledger& ledger);

  // Folds the watch events of one committed unit, whose inputs got seqs first_seq.. in order
  // (bookmarks included), and sets view_seq to `last_seq`. One Change per event (bookmarks: none).
  std::vector<Change> Apply(const std::vector<model::WatchEvent>& events, uint64_t first_seq,
                            uint64_t last_seq);

  // nullopt when the view has no such CronJob.
  std::optional<Family> Read(std::string_view ns, std::string_view name) const;
  ObjectPtr Find(model::ObjectKind kind, std::string_view ns, std::string_view name) const;
  size_t ObjectCount() const;

  // The object the view would hold for `ev`'s bytes (decoded as above, or the event's decoded
  // object).
  static ObjectPtr Decode(const model::WatchEvent& ev, uint64_t seq);

 private:
  class Access;

  mutable std::shared_mutex mu_;
  std::unordered_map<std::string, ObjectPtr> objects_;  // by the view's object key
  std::set<std::string, std::less<>> owner_index_;      // the view's owner index keys
  uint64_t view_seq_ = 0;
  std::string key_scratch_;  // Apply's (under the exclusive lock)
  std::string index_scratch_;
};

}  // namespace cronledger::controller
