#pragma once

// The decoded-object cache of the reconcile passes (docs/controller.md "Scale"): the CronJobs and
// Jobs a pass read from the view, decoded, tagged with the `source_seq` of their view entry (the
// input record whose raw bytes they were decoded from). The bytes at a seq never change, so an
// entry is valid exactly while the view still points at the same seq: a MODIFIED event, a
// DELETED one, a re-creation with a new uid all give the object a new seq (or no entry), and the
// next pass decodes it again. It also keeps each CronJob's decoded controller-state blob, valid
// for exactly the bytes it was decoded from. Bounded: at most `max_objects` objects, least recently
// used evicted. Thread-safe (the workers share it).

#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "model/decision.h"
#include "model/inputs.h"
#include "model/objects.h"

namespace cronledger::controller {

// A CronJob's controller-state blob (reconcile_pass.cc) and what it decodes to.
struct CachedAccounting {
  std::string blob;
  std::string uid;
  model::AccountingState state;
};

struct DecodedCacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t evictions = 0;
  size_t objects = 0;
};

class DecodedCache {
 public:
  explicit DecodedCache(size_t max_objects) : max_objects_(max_objects) {}
  DecodedCache(const DecodedCache&) = delete;
  DecodedCache& operator=(const DecodedCache&) = delete;

  bool enabled() const { return max_objects_ != 0; }

  // The object decoded from the bytes at `source_seq`; null on a miss (absent, or decoded from
  // other bytes).
  std::shared_ptr<const model::CronJob> GetCronJob(std::string_view ns, std::string_view name,
                                                   uint64_t source_seq);
  std::shared_ptr<const model::Job> GetJob(std::string_view ns, std::string_view name,
                                           uint64_t source_seq);
  void PutCronJob(std::string_view ns, std::string_view name, uint64_t source_seq,
                  std::shared_ptr<const model::CronJob> object);
  void PutJob(std::string_view ns, std::string_view name, uint64_t source_seq,
              std::shared_ptr<const model::Job> object);
  // The decoded controller-state blob of `key` ("ns/name") when the cache holds it for exactly
  // these bytes (whoever wrote them); null otherwise.
  std::shared_ptr<const CachedAccounting> GetAccounting(std::string_view key,
                                                        std::string_view blob);
  void PutAccounting(std::string_view key, std::shared_ptr<const CachedAccounting> accounting);
  // Drops an object (it was deleted), and a CronJob's accounting state: frees their memory
  // before eviction would.
  void Forget(model::ObjectKind kind, std::string_view ns, std::string_view name);

  DecodedCacheStats Stats() const;

 private:
  struct Entry {
    uint64_t source_seq = 0;
    std::shared_ptr<const void> object;  // a model::CronJob or model::Job, by the key's kind
    std::list<std::string>::iterator lru;
  };
  static std::string KeyOf(model::ObjectKind kind, std::string_view ns, std::string_view name);
  static std::string AccountingKeyOf(std::string_view key);
  std::shared_ptr<const void> Get(const std::string& key, uint64_t source_seq);
  void Put(std::string key, uint64_t source_seq, std::shared_ptr<const void> object);

  const size_t max_objects_;
  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
  std::list<std::string> lru_;  // most recently used first
  DecodedCacheStats stats_;
};

}  // namespace cronledger::controller
