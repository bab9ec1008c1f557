#pragma once

// What `cronledger run --kafka-brokers` produces beside the controller (docs/kafka.md):
//   - the outbox of each selected stream, P.decisions and P.ledger (emit::OutboxEmitter, each
//     with its own stored position, both with `cronledger-source: <source_id>`);
//   - audit trail checkpoints on P.checkpoints: every `checkpoint_interval` and at Finish(), the
//     trail is brought up to date (replay::trail::UpdateTrail) and its heads are produced as the
//     checkpoint document `cronledger checkpoint -o json` prints (replay::trail::CheckpointJson,
//     compact), keyed by the source id.
//
// A failed outbox session is reopened after a back-off and resumes at its stored position; a
// checkpoint that cannot be delivered is logged and superseded by the next one. Finish() drains
// both streams (every committed record acknowledged and its position stored) and publishes a last
// checkpoint, so a replica that stops cleanly and starts again neither repeats nor skips a
// record.
//
// Thread safety: one thread drives it. The ledger must outlive it.

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "emit/kafka_config.h"
#include "emit/kafka_producer.h"
#include "emit/outbox_emitter.h"
#include "model/clock.h"
#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::app {

struct RunOutboxOptions {
  // Brokers, topic prefix, librdkafka properties. Required: brokers.
  emit::KafkaConfig kafka;
  // `cronledger-source` of every record and the key of the checkpoints. Required.
  std::string source_id;
  // The outbox streams to run. Default: both.
  std::vector<emit::EmitStream> streams = {emit::EmitStream::kDecisions, emit::EmitStream::kLedger};
  // How often a checkpoint is published; zero: never (not at Finish() either). Default: 5m.
  Duration checkpoint_interval = std::chrono::minutes(5);
  // librdkafka's log lines. Default: empty = warnings and errors to stderr.
  emit::KafkaLogFn kafka_log;
  // Where warnings go (a failed session, an undelivered checkpoint). Default: dropped.
  std::function<void(const std::string&)> warn;
};

// "decisions,ledger" -> the streams; InvalidArgument for an unknown or repeated name.
Result<std::vector<emit::EmitStream>> ParseKafkaStreams(std::string_view list);

class RunOutbox {
 public:
  RunOutbox(store::Ledger& ledger, const WallClock& clock, RunOutboxOptions options);
  ~RunOutbox();
  RunOutbox(const RunOutbox&) = delete;
  RunOutbox& operator=(const RunOutbox&) = delete;

  // One round, about `wait` long: each stream produces and serves acknowledgements, and a
  // checkpoint is published when one is due.
  void Step(std::chrono::milliseconds wait);
  // Publishes a checkpoint now: brings the trail up to date and produces its heads. Returns what
  // was produced (not yet acknowledged: Step() and Finish() serve the acknowledgement).
  Result<std::string> PublishCheckpoint();
  // At shutdown, after the controller stopped writing: drains every stream and publishes a last
  // checkpoint, waiting up to `timeout` in all. The first error (the rest is still tried).
  Status Finish(std::chrono::milliseconds timeout);

  // Checkpoints the broker acknowledged.
  uint64_t checkpoints_acknowledged() const { return checkpoints_acknowledged_; }

 private:
  struct Lane {
    emit::OutboxEmitterOptions options;
    std::unique_ptr<emit::OutboxEmitter> emitter;
    std::chrono::steady_clock::time_point retry_at;
  };
  Status OpenLane(Lane& lane);
  void ServeCheckpoints(std::chrono::milliseconds wait);
  void Warn(const std::string& message) const;

  store::Ledger& ledger_;
  const WallClock& clock_;
  const RunOutboxOptions options_;
  std::vector<Lane> lanes_;
  std::string checkpoint_topic_;
  std::unique_ptr<emit::KafkaProducer> checkpoint_producer_;
  std::chrono::steady_clock::time_point next_checkpoint_;
  uint64_t checkpoints_pending_ = 0;  // produced, no delivery report yet
  uint64_t checkpoints_acknowledged_ = 0;
  uint64_t checkpoints_failed_ = 0;
};

}  // namespace cronledger::app
