#pragma once

// The Kafka outbox (docs/design.md rule 3, §5): tails a committed log of the ledger — the decision
// log (EmitStream::kDecisions) or the input log (EmitStream::kLedger) — from a stored emission
// position, produces each record keyed by CronJob through an idempotent producer, and advances
// the stored position only over records whose delivery the broker acknowledged (acks=all).
//
// The position is a SourcePosition ("kafka-emit:<topic>" -> "seq=N": every record with seq <= N
// is acknowledged), committed to the ledger; nothing else is written to the ledger.
//
// Guarantee (docs/kafka.md "Guarantees"): at-least-once, per-key order kept. Within one session
// (one OutboxEmitter) every record is written once and in seq order per partition; a failed
// delivery ends the session (Step() returns the error) without a gap. A new session resumes at
// the first record not acknowledged, so the topic may hold a run of records already written
// (after a crash or a failed session). A consumer that drops a record whose seq is not greater
// than the last seq it applied for that key sees exactly the log's records of that key, in order.
//
// Thread safety: one thread drives an emitter. The ledger must outlive it.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>

#include "emit/kafka_producer.h"
#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::emit {

enum class EmitStream {
  kDecisions,  // the decision log; payload model::EncodeDecision, key the decision's CronJob
  kLedger,     // the input log; payload EncodeLedgerRecord, key the input's CronJob
};

struct OutboxEmitterOptions {
  // The producer to emit with (its brokers, properties and log). Required: brokers.
  KafkaProducerOptions producer;
  // Default: kDecisions.
  EmitStream stream = EmitStream::kDecisions;
  // The topic to produce to, e.g. "cronledger.decisions". Required.
  std::string topic;
  // The SourcePosition id of the emission position. Default: empty = "kafka-emit:<topic>".
  std::string position_source;
  // Names this ledger on the stream when several ledgers emit to one topic (scale-out: one ledger
  // per replica, each with its own seq space). Non-empty: every record carries the header
  // `cronledger-source: <source_id>`, and consumers apply the seq rule per (key, source).
  // Default: empty = no header (one ledger).
  std::string source_id;
  // Records produced and not yet acknowledged, at most. Default: 10000.
  size_t max_in_flight = 10000;
};

struct EmitProgress {
  uint64_t position = 0;      // stored: every record with seq <= position is acknowledged
  uint64_t produced = 0;      // records produced in this session
  uint64_t acknowledged = 0;  // records acknowledged in this session
  size_t in_flight = 0;       // produced, not yet acknowledged
};

// The emitter of `stream` for a Kafka configuration: its topic (P.decisions or P.ledger), the
// configured brokers and properties, and `source_id`. Every command that runs the outbox (`emit`,
// `run`) builds its options here, so they produce the same stream from the same position.
OutboxEmitterOptions OutboxOptionsFor(const KafkaConfig& kafka, EmitStream stream,
                                      std::string source_id);

// Parses/prints the stored position "seq=N".
Result<uint64_t> DecodeEmitPosition(std::string_view s);
std::string EncodeEmitPosition(uint64_t seq);

class OutboxEmitter {
 public:
  // Reads the stored position and starts a producer session. InvalidArgument for bad options,
  // Corruption for an unreadable stored position.
  static Result<std::unique_ptr<OutboxEmitter>> Open(store::Ledger& ledger,
                                                     const OutboxEmitterOptions& options);
  ~OutboxEmitter();
  OutboxEmitter(const OutboxEmitter&) = delete;
  OutboxEmitter& operator=(const OutboxEmitter&) = delete;

  // One round: produces records committed after what this session produced (up to
  // max_in_flight outstanding), serves delivery reports for up to `wait`, and commits the
  // acknowledged position. Returns the progress; an error when a delivery failed or the ledger
  // failed — the session is over then (the position stays at the last gap-free acknowledged
  // record); Open() a new emitter to resume.
  Result<EmitProgress> Step(std::chrono::milliseconds wait);

  // The last committed seq of the emitted log (what "caught up" means).
  Result<uint64_t> Head();
  // Steps until every record committed when it is called is acknowledged and its position
  // stored, or `timeout` passes (Unavailable), or the session fails (its error).
  Status Drain(std::chrono::milliseconds timeout);
  const EmitProgress& progress() const { return progress_; }

 private:
  OutboxEmitter(store::Ledger& ledger, OutboxEmitterOptions options,
                std::unique_ptr<KafkaProducer> producer, uint64_t position);
  Status Fill();
  Status ProduceOne(uint64_t seq, const std::string& key, const std::string& value);
  Result<std::string> KeyOfInput(const store::LogRecord& record);
  Result<std::string> KeyOfSeq(uint64_t seq);
  Status Advance();

  store::Ledger& ledger_;
  const OutboxEmitterOptions options_;
  std::unique_ptr<KafkaProducer> producer_;
  EmitProgress progress_;
  uint64_t produced_through_;           // last seq enqueued in this session
  std::map<uint64_t, bool> in_flight_;  // seq -> acknowledged, for seqs > progress_.position
  // Ledger stream: the CronJob key of recent Ticks and ActionIntents (outcomes and intents of
  // Job calls are keyed by the CronJob of their pass).
  std::unordered_map<uint64_t, std::string> key_cache_;
  Status failed_;
};

}  // namespace cronledger::emit
