#pragma once

// The fixture API server's storage: an etcd-like multi-version key space with one global,
// monotonically increasing revision (the resourceVersion), a per-key revision history so lists
// can be served at an older revision (paginated lists read one snapshot), an event log for
// watches, and compaction that forgets history below a revision (after which reads and watches
// that need it get 410 Expired). Not thread-safe: FakeApiServer serialises access.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/json.h"
#include "model/result.h"

namespace cronledger::kube::testing {

using model::Json;

class FakeStore {
 public:
  struct Event {
    int64_t revision = 0;
    std::string type;  // ADDED, MODIFIED, DELETED
    std::string key;
    Json object;  // metadata.resourceVersion == revision
  };
  struct Page {
    std::vector<Json> items;
    std::string last_key;  // continue after this key
    bool more = false;
    int64_t remaining = 0;  // matching items after this page
  };

  explicit FakeStore(int64_t first_revision) : revision_(first_revision) {}

  int64_t revision() const { return revision_; }
  int64_t compacted() const { return compacted_; }

  // The live object at `key`, or null.
  const Json* Get(const std::string& key) const;

  // Objects under `prefix` with keys after `start_after`, as of `at` (0 = now), that satisfy
  // `match`, at most `limit` (0 = all). OutOfRange when `at` is below the compacted revision.
  Result<Page> List(const std::string& prefix, int64_t at, const std::string& start_after,
                    int64_t limit, const std::function<bool(const Json&)>& match) const;

  // Writes `object` at `key` under a new revision, stamping metadata.resourceVersion; records an
  // ADDED (new key) or MODIFIED event. Returns the revision.
  int64_t Put(const std::string& key, Json* object);
  // Deletes `key` under a new revision; the DELETED event carries the last object with the
  // deletion's resourceVersion (as etcd3 watches report it).
  int64_t Remove(const std::string& key);

  // Events after `revision`, in order. OutOfRange when `revision` is below the compacted revision.
  Result<std::vector<Event>> EventsAfter(int64_t revision) const;

  // Forgets history at or below `revision` (never the live objects).
  void CompactTo(int64_t revision);

 private:
  struct Revision {
    int64_t revision;
    std::optional<Json> object;  // nullopt = deleted
  };
  const Json* AtRevision(const std::vector<Revision>& history, int64_t at) const;

  int64_t revision_;
  int64_t compacted_ = 0;
  std::map<std::string, std::vector<Revision>> keys_;
  std::deque<Event> events_;
};

// "ns/name" keys under a resource prefix: "jobs.batch/ns/name".
std::string StoreKey(const std::string& group_resource, const std::string& ns,
                     const std::string& name);

}  // namespace cronledger::kube::testing
