#pragma once

// `cronledger audit-store`: the audit store of a deployment (docs/kafka.md "Audit store"). It
// consumes the streams every replica's outbox produces (`P.ledger`: every input record,
// `P.decisions`: every decision record; docs/kafka.md), all partitions and all sources, and keeps
// one copy of each source's ledger:
//
//   D/sources/<source>/   a ledger store holding exactly the source's records: the same seqs,
//                         recorded times, watch events with their raw bytes, decision bytes.
//                         Every read command works on it (`--data-dir D/sources/<source>`).
//   D/positions.json      where each partition of both topics is read up to.
//
// Each round reads both topics from the stored positions to the ends they had when the round
// started. A source's records are committed in seq order and only without a hole: a record whose
// predecessor has not arrived yet (it is on another partition, still in flight, or lost) waits in
// memory, and the partition's stored position stays before it, so a restart reads it again.
// Records at or below a source's stored seq are repeats and are dropped. Commits happen before the
// positions are stored: a crash between the two re-reads records the seq rule drops, so every
// record is in its source's copy exactly once.
//
// Thread safety: one thread drives an AuditStore.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "audit/query.h"
#include "emit/kafka_config.h"
#include "emit/kafka_producer.h"
#include "emit/kafka_topic_reader.h"
#include "model/decision.h"
#include "model/result.h"
#include "model/time.h"
#include "store/ledger.h"

namespace cronledger::app::audit_store {

struct AuditStoreOptions {
  // bootstrap.servers. Required.
  std::string brokers;
  // Topics `<prefix>.ledger` and `<prefix>.decisions`. Default: "cronledger".
  std::string topic_prefix = std::string(emit::kDefaultTopicPrefix);
  // Pass-through librdkafka properties (security). `group.id`, `enable.auto.commit` and
  // `enable.auto.offset.store` are rejected: positions live in the store. Default: none.
  emit::KafkaProperties properties;
  // The audit store's directory. Required.
  std::string data_dir;
  // How long reading one topic to its end may take in one round. Default: 120 s.
  std::chrono::milliseconds read_timeout{120000};
  // Records that may wait for a missing predecessor, all sources together; beyond that a round
  // fails (FailedPrecondition naming the sources and the seqs they wait for). Default: 1,000,000.
  size_t max_waiting = 1000000;
  // librdkafka log lines. Default: empty = levels <= 4 to stderr.
  emit::KafkaLogFn log;
};

// One source's copy after a round.
struct SourceState {
  std::string source;  // the cronledger-source header ("" for records without it)
  std::string dir;     // its ledger store
  uint64_t last_input_seq = 0;
  uint64_t last_decision_seq = 0;
  // When the source recorded its last input stored here (unset while the copy holds none): a
  // replica that stopped producing shows as a time that no longer moves.
  std::optional<Time> last_recorded_at;
  uint64_t inputs_added = 0;  // this round
  uint64_t decisions_added = 0;
  // Records held back because an earlier seq has not arrived, and the first seq each stream
  // waits for (0 when nothing waits).
  uint64_t waiting_inputs = 0;
  uint64_t waiting_decisions = 0;
  uint64_t input_waits_for = 0;
  uint64_t decision_waits_for = 0;
};

struct RoundReport {
  uint64_t messages = 0;             // read this round, both topics
  uint64_t duplicates = 0;           // repeats dropped (already stored, or twice in this round)
  std::vector<SourceState> sources;  // every source the store holds, by name
  // Whether any source has records waiting for a missing seq.
  bool complete() const;
  // One line per source, and one per waiting stream ("replica-1: P.ledger waits for seq 17
  // (3 later records held): on another partition not read yet, or lost from the topic").
  std::vector<std::string> Describe(const std::string& topic_prefix) const;
};

// The directory name of a source under D/sources/: the id itself when it is made of letters,
// digits, '-', '_' and '.' only (not starting with '.'), else those characters kept and every
// other byte as %XX; "" (records without the header) is "%".
std::string SourceDirName(std::string_view source);

// The directory of `source`'s copy in the audit store `dir`: dir/sources/SourceDirName(source).
std::string CopyDir(const std::string& dir, std::string_view source);

// Whether `dir` is an audit store (it has `sources/` and no ledger of its own).
bool IsAuditStoreDir(const std::string& dir);

// Ok when `dir` is not an audit store; else FailedPrecondition for a command that reads one ledger,
// naming the sources' copies to pick from.
Status CheckNotAnAuditStore(const std::string& dir);

// Every source's copy in the audit store `dir`, opened read-only like OpenLedgerForAudit (so
// while `audit-store` writes), by source. NotFound when it holds no source yet.
Result<std::vector<std::pair<std::string, std::unique_ptr<store::Ledger>>>> OpenAuditStoreSources(
    const std::string& dir, Duration refresh);

// What a read command reads at `dir`: every source's copy when it is an audit store (`merged`),
// else its one ledger as an unnamed source; opened as OpenLedgerForAudit opens a ledger.
struct ReadSources {
  bool merged = false;
  std::vector<std::unique_ptr<store::Ledger>> ledgers;
  std::vector<audit::SourceLedger> sources;  // sources[i] reads ledgers[i]
};
Result<ReadSources> OpenReadSources(const std::string& dir, Duration refresh);

// What `audit-store` serves on its metrics and health probe listeners: the rounds so far and each
// source's copy after the last good one. Thread-safe: rounds are recorded on the command's thread
// and read on the listeners'.
class AuditStoreMetrics {
 public:
  void Record(const Result<RoundReport>& round, Time now);
  // The Prometheus text (docs/reference/metrics.md "audit-store"):
  //   cronledger_audit_store_rounds_total, cronledger_audit_store_round_failures_total,
  //   cronledger_audit_store_records_total, cronledger_audit_store_duplicates_total,
  //   cronledger_audit_store_last_round_timestamp_seconds,
  //   cronledger_audit_store_last_seq{source,log},
  //   cronledger_audit_store_last_record_timestamp_seconds{source},
  //   cronledger_audit_store_waiting_records{source,log}
  std::string Render() const;
  // Ready once a round succeeded and the last one did: FailedPrecondition otherwise.
  Status Ready() const;

 private:
  mutable std::mutex mu_;
  uint64_t rounds_ = 0;
  uint64_t failures_ = 0;
  uint64_t records_ = 0;
  uint64_t duplicates_ = 0;
  bool last_ok_ = false;
  std::optional<Time> last_good_;
  std::vector<SourceState> sources_;
};

class AuditStore {
 public:
  // Creates the directory (and positions) when missing and opens every source's store in it.
  // InvalidArgument for bad options.
  static Result<std::unique_ptr<AuditStore>> Open(const AuditStoreOptions& options);
  ~AuditStore();
  AuditStore(const AuditStore&) = delete;
  AuditStore& operator=(const AuditStore&) = delete;

  // Reads both topics from the stored positions to their ends, commits what each source's copy
  // can take, stores the positions. Errors: Unavailable (the cluster, or a topic not read to its
  // end in time; nothing is lost, the next round reads again), Corruption (a message that is not
  // a record of its schema, or two different records under one (source, seq); naming
  // topic/partition/offset), FailedPrecondition (max_waiting exceeded), store errors.
  Result<RoundReport> Round();

 private:
  // A record read from a topic, with where it was read (a partition's stored position stays
  // before a record that waits).
  template <typename Record>
  struct Held {
    Record record;
    std::string topic;
    int32_t partition = 0;
    int64_t offset = 0;
  };
  struct Waiting;
  struct RoundState {
    RoundReport report;
    std::map<std::string, SourceState> states;
  };

  explicit AuditStore(AuditStoreOptions options);
  Status OpenSources();
  Result<store::Ledger*> LedgerOf(const std::string& source);
  Status LoadPositions();
  Status StorePositions() const;
  template <typename Record, typename Decode>
  Status ReadTopic(const std::string& topic, std::string_view schema, Decode decode,
                   std::map<std::string, std::map<uint64_t, Held<Record>>>* held,
                   RoundState* round);
  // Commits the records of `source` that follow its copy's last seqs without a hole.
  Status Drain(const std::string& source, RoundState* round);
  size_t WaitingRecords() const;
  // FailedPrecondition when more than max_waiting records wait.
  Status CheckWaiting(RoundState* round);

  AuditStoreOptions options_;
  emit::KafkaTopics topics_;
  // Topic -> partition -> the next offset to read.
  std::map<std::string, emit::PartitionOffsets> positions_;
  std::map<std::string, std::unique_ptr<store::Ledger>> ledgers_;  // by source
  std::unique_ptr<Waiting> waiting_;
};

}  // namespace cronledger::app::audit_store
