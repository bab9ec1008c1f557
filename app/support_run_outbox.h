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
// Thread safety: one thread drives Step() and Finish(). The periodic checkpoints run on the
// outbox's own thread (started by the constructor when checkpoint_interval is set), so bringing
// the trail up to date over a large store never holds up the streams. RenderMetrics() may be
// called from any thread. The ledger must outlive it.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
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

  // One round, about `wait` long: each stream produces and serves acknowledgements.
  void Step(std::chrono::milliseconds wait);
  // At shutdown, after the controller stopped writing: stops the periodic checkpoints, drains
  // every stream and publishes a last checkpoint, waiting up to `timeout` in all. The first error
  // (the rest is still tried).
  Status Finish(std::chrono::milliseconds timeout);

  // Checkpoints the broker acknowledged.
  uint64_t checkpoints_acknowledged() const { return checkpoints_acknowledged_.load(); }
  // The outbox's series in the Prometheus text format 0.0.4 (docs/reference/metrics.md): per
  // stream its stored position, its lag behind the ledger, the records acknowledged and the
  // sessions that failed; the checkpoints acknowledged and failed and when the last one was
  // acknowledged.
  std::string RenderMetrics() const;

 private:
  struct LaneStats {
    uint64_t position = 0;      // stored: every record up to it is acknowledged
    uint64_t lag = 0;           // committed records after the position
    uint64_t acknowledged = 0;  // by this process, all sessions
    uint64_t failures = 0;      // sessions that ended on an error
  };
  struct Lane {
    emit::OutboxEmitterOptions options;
    std::unique_ptr<emit::OutboxEmitter> emitter;
    std::chrono::steady_clock::time_point retry_at;
    uint64_t session_acknowledged = 0;  // what the current session had acknowledged last round
    LaneStats stats;                    // guarded by stats_mu_
  };
  Status OpenLane(Lane& lane);
  void Account(Lane& lane, const emit::EmitProgress& progress);
  // Brings the trail up to date and produces its heads (acknowledged later: ServeCheckpoints).
  Result<std::string> PublishCheckpoint();
  void ServeCheckpoints(std::chrono::milliseconds wait);
  // The periodic checkpoints' thread, and its stop (idempotent).
  void CheckpointLoop();
  void StopCheckpoints();
  void Warn(const std::string& message) const;

  store::Ledger& ledger_;
  const WallClock& clock_;
  const RunOutboxOptions options_;
  std::vector<Lane> lanes_;
  std::string checkpoint_topic_;
  std::unique_ptr<emit::KafkaProducer> checkpoint_producer_;
  // Produced, no delivery report yet. The checkpoint thread's, then (once it stopped) Finish()'s,
  // as is the producer.
  uint64_t checkpoints_pending_ = 0;
  std::atomic<uint64_t> checkpoints_acknowledged_{0};
  std::atomic<uint64_t> checkpoints_failed_{0};
  std::atomic<int64_t> last_checkpoint_unix_{0};  // when the last acknowledged one was published
  int64_t published_unix_ = 0;                    // when the pending ones were published
  mutable std::mutex stats_mu_;
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by stop_mu_
  std::thread checkpoint_thread_;
};

}  // namespace cronledger::app
