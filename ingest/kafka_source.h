#pragma once

// Watch events from a Kafka topic into the ledger (docs/kafka.md "Ingest"). A
// librdkafka consumer (no librdkafka type here) in a consumer group reads the watch topic; each
// message value is one watch document, the same JSON the watch API streams (model/watch_decoder.h).
// A batch of messages is committed to the ledger as one unit of work together with, per
// partition, the next offset to read as a SourcePosition ("kafka:<topic>/<partition>" ->
// "next=N"). Kafka's own offset commits are off (`enable.auto.commit=false`); on every assignment
// the consumer seeks to the offsets stored in the ledger, so each message reaches the ledger
// exactly once, across restarts and rebalances. A message that does not decode is quarantined
// with "<topic>/<partition>/<offset>" and its raw bytes, and consumption continues.
//
// Ownership (docs/kafka.md "Operating model"): a replica acts only on CronJobs whose partition it
// holds and has caught up on. The source tracks, per assigned partition, whether everything up to
// the end the consumer first reached after the assignment is committed (librdkafka's partition
// EOF), and maps a key to its partition with the producers' partitioner.
//
// Thread safety: one thread drives a source (Open, Poll, Assignment, the destructor);
// PartitionOfKey, AssignedPartitions, OwnsKey and CaughtUp may be called from any thread. The
// ledger must outlive it.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/inputs.h"
#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::ingest {

struct KafkaSourceOptions {
  // bootstrap.servers. Required.
  std::string brokers;
  // The watch topic, e.g. "cronledger.watch". Required.
  std::string topic;
  // group.id: replicas in one group share the partitions. Default: "cronledger".
  std::string group_id = "cronledger";
  // Pass-through librdkafka properties (security, timeouts, `partition.assignment.strategy`
  // e.g. "cooperative-sticky"). `enable.auto.commit`, `enable.auto.offset.store` and `group.id`
  // are set by cronledger; passing them is InvalidArgument. Default: none.
  std::vector<std::pair<std::string, std::string>> properties;
  // Messages per unit of work, at most. Default: 1000.
  size_t batch_messages = 1000;
  // Also commit the ingested offsets to the group (asynchronously, best effort) so that
  // standard tools show the group's lag. The ledger's positions stay authoritative.
  // Default: true.
  bool commit_to_group = true;
  // Drop an object event the view already reflects: ADDED/MODIFIED at the resourceVersion the
  // view holds for that object, DELETED of an object the view does not hold. Such a message is a
  // repeat (a watch relay that restarted, or two relays during a rollout; docs/kafka.md "Watch
  // relay"); it is counted in `duplicates`, its offset is stored, and nothing else is written.
  // A synthetic DELETED (after a relist) carries the last known state and still applies.
  // Default: true.
  bool dedupe_by_resource_version = true;
  // librdkafka log lines (syslog level, facility, message), called from librdkafka threads.
  // Default: empty = levels <= 4 to stderr.
  std::function<void(int, std::string_view, std::string_view)> log;
  // Commits one unit the source built (watch events, quarantine entries and the partitions' next
  // offsets) in place of Ledger::Commit — e.g. controller::Controller::IngestUnit, which commits
  // it and then runs the controller's event handlers. It must commit the unit whole or not at
  // all; an error ends the source like a ledger failure. Called on the polling thread.
  // Default: empty = the ledger's Commit.
  std::function<Result<store::CommitResult>(store::UnitOfWork)> commit;
  // Called on the polling thread, after the commit, with partitions that have just caught up:
  // every message below the end the consumer reached after their assignment is committed. Also
  // for a partition assigned again later. Default: none.
  std::function<void(const std::vector<int32_t>&)> on_caught_up;
};

struct KafkaIngestProgress {
  uint64_t messages = 0;     // messages committed to the ledger (events and quarantined)
  uint64_t events = 0;       // watch events appended
  uint64_t quarantined = 0;  // rejections quarantined
  uint64_t skipped = 0;      // messages below the stored position (already in the ledger)
  uint64_t duplicates = 0;   // events the view already reflected (dedupe_by_resource_version)
  uint64_t misrouted = 0;    // messages on another partition than the partitioner gives their key
  uint64_t first_seq = 0;    // input seqs of the last unit (0 when it had no inputs)
  uint64_t last_seq = 0;
};

// The ledger source id of one partition: "kafka:<topic>/<partition>".
std::string KafkaPartitionSource(std::string_view topic, int32_t partition);
// The stored position "next=N" (the next offset to read).
std::string EncodeKafkaPosition(int64_t next_offset);
Result<int64_t> DecodeKafkaPosition(std::string_view s);

class KafkaEventSource {
 public:
  // Creates the consumer and subscribes to the topic. InvalidArgument for bad or forbidden
  // properties (the message names the key, never the value).
  static Result<std::unique_ptr<KafkaEventSource>> Open(store::Ledger& ledger,
                                                        const KafkaSourceOptions& options);
  // Leaves the group (committing nothing further to the ledger).
  ~KafkaEventSource();
  KafkaEventSource(const KafkaEventSource&) = delete;
  KafkaEventSource& operator=(const KafkaEventSource&) = delete;

  // Waits up to `wait` for a message, takes what is ready up to batch_messages, and commits it
  // with the partitions' next offsets in one unit of work. Rebalances are served here; before
  // partitions are revoked the batch built so far is committed. Returns the counts of this call.
  // An error (ledger failure, fatal consumer error) ends the source; committed units stay.
  Result<KafkaIngestProgress> Poll(std::chrono::milliseconds wait);

  // The assigned partitions and the next offset of each (from the ledger, or what this source
  // committed since).
  std::map<int32_t, int64_t> Assignment() const;

  // The partition of `key` (a CronJob's "namespace/name"): where a message with this key was
  // seen when that differs from the partitioner (counted as misrouted), else the producers'
  // partitioner over the topic's partition count — the `partitioner` property when given
  // (consistent, consistent_random, murmur2, murmur2_random, fnv1a, fnv1a_random), else
  // librdkafka's default consistent_random, which the relay uses. nullopt until the partition
  // count is known (after the first assignment).
  std::optional<int32_t> PartitionOfKey(std::string_view key) const;
  // The partitions assigned to this consumer now.
  std::set<int32_t> AssignedPartitions() const;
  // True when `key`'s partition is assigned to this consumer and has caught up since.
  bool OwnsKey(std::string_view key) const;
  // True once the first assignment arrived and every assigned partition has caught up since it
  // was assigned (so also with no partition assigned). Readiness of a consuming replica.
  bool CaughtUp() const;

  struct Impl;

 private:
  explicit KafkaEventSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronledger::ingest
