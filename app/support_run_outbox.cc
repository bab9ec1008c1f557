#include "app/support_run_outbox.h"

#include <algorithm>
#include <mutex>
#include <thread>
#include <utility>

#include "app/support_admin.h"
#include "emit/ledger_record.h"
#include "replay/trail.h"

namespace cronledger::app {
namespace {

constexpr auto kRetryAfter = std::chrono::seconds(2);

}  // namespace

Result<std::vector<emit::EmitStream>> ParseKafkaStreams(std::string_view list) {
  std::vector<emit::EmitStream> streams;
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, comma - start);
    emit::EmitStream s;
    if (name == "decisions") {
      s = emit::EmitStream::kDecisions;
    } else if (name == "ledger") {
      s = emit::EmitStream::kLedger;
    } else {
      return Status::InvalidArgument("--kafka-streams: want decisions and/or ledger, got \"" +
                                     std::string(name) + "\"");
    }
    if (std::find(streams.begin(), streams.end(), s) != streams.end()) {
      return Status::InvalidArgument("--kafka-streams: \"" + std::string(name) + "\" twice");
    }
    streams.push_back(s);
    start = comma + 1;
  }
  return streams;
}

RunOutbox::RunOutbox(store::Ledger& ledger, const WallClock& clock, RunOutboxOptions options)
    : ledger_(ledger), clock_(clock), options_(std::move(options)) {
  for (emit::EmitStream s : options_.streams) {
    Lane lane;
    lane.options = emit::OutboxOptionsFor(options_.kafka, s, options_.source_id);
    lane.options.producer.log = options_.kafka_log;
    lanes_.push_back(std::move(lane));
  }
  checkpoint_topic_ = emit::TopicsForPrefix(options_.kafka.topic_prefix).checkpoints;
  next_checkpoint_ = std::chrono::steady_clock::now() + options_.checkpoint_interval;
}

RunOutbox::~RunOutbox() = default;

void RunOutbox::Warn(const std::string& message) const {
  if (options_.warn) options_.warn(message);
}

Status RunOutbox::OpenLane(Lane& lane) {
  if (lane.emitter) return Status::Ok();
  if (std::chrono::steady_clock::now() < lane.retry_at) {
    return Status::Unavailable(lane.options.topic + ": waiting to reopen");
  }
  auto opened = emit::OutboxEmitter::Open(ledger_, lane.options);
  if (!opened.ok()) {
    Warn("kafka outbox " + lane.options.topic + ": " + opened.status().ToString());
    lane.retry_at = std::chrono::steady_clock::now() + kRetryAfter;
    return opened.status();
  }
  lane.emitter = std::move(opened).value();
  return Status::Ok();
}

void RunOutbox::Step(std::chrono::milliseconds wait) {
  const auto started = std::chrono::steady_clock::now();
  const auto share =
      lanes_.empty() ? wait : wait / static_cast<std::chrono::milliseconds::rep>(lanes_.size());
  for (Lane& lane : lanes_) {
    if (!OpenLane(lane).ok()) continue;
    auto step = lane.emitter->Step(share);
    if (!step.ok()) {
      // The session is over; a new one resumes at the stored position.
      Warn("kafka outbox " + lane.options.topic + ": " + step.status().ToString() + " (reopening)");
      lane.emitter.reset();
      lane.retry_at = std::chrono::steady_clock::now() + kRetryAfter;
    }
  }
  if (options_.checkpoint_interval > Duration::zero() &&
      std::chrono::steady_clock::now() >= next_checkpoint_) {
    next_checkpoint_ = std::chrono::steady_clock::now() + options_.checkpoint_interval;
    if (auto published = PublishCheckpoint(); !published.ok()) {
      Warn("kafka checkpoint: " + published.status().ToString());
    }
  }
  ServeCheckpoints(std::chrono::milliseconds(0));
  // Nothing waited (every lane is backing off, or there is none): wait here instead.
  const auto spent = std::chrono::steady_clock::now() - started;
  if (spent < wait / 2) std::this_thread::sleep_for(wait - spent);
}

Result<std::string> RunOutbox::PublishCheckpoint() {
  replay::trail::Checkpoint checkpoint;
  {
    const std::lock_guard<std::mutex> lock(TrailUpdateMutex());
    CL_ASSIGN_OR_RETURN(checkpoint, replay::trail::UpdateTrail(ledger_, {}, clock_.Now()));
  }
  const std::string value = replay::trail::CheckpointJson(checkpoint).dump();
  if (!checkpoint_producer_) {
    emit::KafkaProducerOptions po;
    po.brokers = options_.kafka.brokers;
    po.properties = options_.kafka.properties;
    po.client_id = "cronledger-checkpoints";
    po.log = options_.kafka_log;
    CL_ASSIGN_OR_RETURN(checkpoint_producer_, emit::KafkaProducer::Open(po));
  }
  emit::ProducerRecord record;
  record.topic = checkpoint_topic_;
  record.key = options_.source_id;
  record.value = value;
  record.headers = {{emit::kSchemaHeader, emit::kCheckpointSchema},
                    {emit::kSourceHeader, options_.source_id}};
  if (Status s = checkpoint_producer_->Produce(record); !s.ok()) {
    // A producer that failed for good is replaced with the next checkpoint.
    if (!checkpoint_producer_->FatalError().ok()) checkpoint_producer_.reset();
    return s;
  }
  ++checkpoints_pending_;
  return value;
}

void RunOutbox::ServeCheckpoints(std::chrono::milliseconds wait) {
  if (!checkpoint_producer_) return;
  std::vector<emit::DeliveryReport> reports;
  checkpoint_producer_->Poll(wait, &reports);
  for (const emit::DeliveryReport& r : reports) {
    --checkpoints_pending_;
    if (r.status.ok()) {
      ++checkpoints_acknowledged_;
    } else {
      ++checkpoints_failed_;
      Warn("kafka checkpoint not delivered: " + r.status.ToString());
    }
  }
  if (Status fatal = checkpoint_producer_->FatalError(); !fatal.ok()) {
    Warn("kafka checkpoint producer: " + fatal.ToString());
    checkpoint_producer_.reset();
    checkpoints_failed_ += checkpoints_pending_;
    checkpoints_pending_ = 0;
  }
}

Status RunOutbox::Finish(std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::max(std::chrono::milliseconds(0),
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()));
  };
  Status first;
  auto note = [&first](const Status& s) {
    if (first.ok()) first = s;
  };
  for (Lane& lane : lanes_) {
    // A lane waiting out a back-off gets one more try now.
    lane.retry_at = {};
    Status s = OpenLane(lane);
    if (s.ok()) s = lane.emitter->Drain(left());
    if (!s.ok()) note(s.WithContext(lane.options.topic));
    lane.emitter.reset();
  }
  if (options_.checkpoint_interval > Duration::zero()) {
    const uint64_t failed = checkpoints_failed_;
    auto published = PublishCheckpoint();
    if (!published.ok()) {
      note(published.status().WithContext("checkpoint"));
    } else {
      while (checkpoints_pending_ > 0 && left() > std::chrono::milliseconds(0)) {
        ServeCheckpoints(std::min(left(), std::chrono::milliseconds(100)));
      }
      if (checkpoints_pending_ > 0 || checkpoints_failed_ != failed) {
        note(Status::Unavailable("the last checkpoint was not acknowledged"));
      }
    }
  }
  checkpoint_producer_.reset();
  return first;
}

}  // namespace cronledger::app
