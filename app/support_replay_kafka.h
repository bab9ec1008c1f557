#pragma once

// `cronledger replay --kafka-brokers B`: the recorded history read from the Kafka streams the
// outbox emits (docs/kafka.md) instead of the store — every input from `P.ledger`, every decision
// from `P.decisions` — as a replay::RecordSource for the same engine (docs/replay.md "From
// Kafka").
//
// The read is bounded: every partition of both topics from its beginning to the high watermark
// captured when the read starts. The streams are at-least-once (a restarted emitter repeats a
// run of records), and one ledger's records are spread over partitions by CronJob key, so the
// reader keeps one record per (`cronledger-source`, seq), merges all partitions by seq and checks
// that the seqs it holds are 1..last without a hole: a hole means the topic lost records or its
// retention cut them, and is reported (KafkaStreamReport::gaps), never replayed over silently.
//
// librdkafka stays inside support_replay_kafka.cc. Property values never appear in an error.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/flags.h"
#include "emit/kafka_config.h"
#include "emit/kafka_producer.h"
#include "model/result.h"
#include "replay/source.h"

namespace cronledger::app::replay_cli {

struct KafkaHistoryOptions {
  // bootstrap.servers. Required.
  std::string brokers;
  // Topics `<prefix>.ledger` and `<prefix>.decisions`. Default: "cronledger".
  std::string topic_prefix = std::string(emit::kDefaultTopicPrefix);
  // Pass-through librdkafka properties (security). `group.id`, `enable.auto.commit` and
  // `enable.auto.offset.store` are rejected (InvalidArgument naming the key). Default: none.
  emit::KafkaProperties properties;
  // Which ledger to read when several emit to the topics (`cronledger-source` header). Empty: the
  // topics must hold the records of one ledger (with or without the header), else
  // InvalidArgument naming the sources found.
  std::string source_id;
  // Read `<prefix>.decisions` too (needed for --verify; a plain replay derives the stream from
  // the inputs alone). Default: true.
  bool read_decisions = true;
  // How long reading each topic may take. Default: 120 s.
  std::chrono::milliseconds timeout{120000};
  // librdkafka log lines. Default: empty = levels <= 4 to stderr.
  emit::KafkaLogFn log;
};

// An inclusive run of missing seqs.
struct SeqGap {
  uint64_t first = 0;
  uint64_t last = 0;
};

// What reading one topic found.
struct KafkaStreamReport {
  std::string topic;
  uint64_t messages = 0;       // read within the captured bounds, every source
  uint64_t records = 0;        // kept: distinct seqs of the selected ledger
  uint64_t duplicates = 0;     // repeats of a kept (source, seq), dropped
  uint64_t other_sources = 0;  // records of other ledgers, skipped
  uint64_t last_seq = 0;       // the highest seq kept (0: none)
  std::vector<SeqGap> gaps;    // seqs in [1, last_seq] that the topic does not hold
  uint64_t missing = 0;        // how many seqs the gaps cover
};

struct KafkaHistoryReport {
  std::string source_id;  // the ledger read ("" = records without the header)
  KafkaStreamReport ledger;
  KafkaStreamReport decisions;  // empty when not read
  bool complete() const { return ledger.gaps.empty() && decisions.gaps.empty(); }
  // One line per topic ("cronledger.ledger: 412 records (seq 1..412), 30 duplicates dropped"),
  // and one per gap ("cronledger.ledger: seqs 17..19 missing (3): the topic lost them or its
  // retention cut them").
  std::vector<std::string> Describe() const;
};

struct KafkaHistory {
  std::unique_ptr<replay::MemorySource> source;  // inputs and decisions in seq order
  KafkaHistoryReport report;
};

// Reads both topics (bounded, de-duplicated, merged by seq, gaps found). Errors: InvalidArgument
// for bad options or several ledgers without `source_id`; Unavailable when the cluster cannot be
// reached or a topic is not read to its end within the timeout; Corruption for a message that is
// not a record of its schema (unknown `cronledger-schema`, undecodable value, a `cronledger-seq`
// header that disagrees with the payload's seq) or two different records with one (source, seq),
// naming topic/partition/offset. A topic that does not exist reads as empty.
Result<KafkaHistory> ReadKafkaHistory(const KafkaHistoryOptions& options);

// The options of `replay`'s flags: --kafka-brokers (required), --kafka-topic-prefix,
// --kafka-config FILE (librdkafka properties, emit::LoadKafkaPropertiesFile), --kafka-source-id.
// InvalidArgument naming the flag; never quotes a property value.
Result<KafkaHistoryOptions> KafkaHistoryOptionsFromFlags(const Flags& flags);

}  // namespace cronledger::app::replay_cli
