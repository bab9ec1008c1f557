#include "app/support_run_outbox.h"

#include <algorithm>
#include <utility>

#include "app/support_admin.h"
#include "emit/ledger_record.h"
#include "replay/trail.h"

namespace cronledger::app {
namespace {

constexpr auto kRetryAfter = std::chrono::seconds(2);

std::string_view StreamName(emit::EmitStream s) {
  return s == emit::EmitStream::kDecisions ? "decisions" : "ledger";
}

void Metric(std::string* out, const char* name, const char* type, const char* help) {
  *out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

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
  if (options_.checkpoint_interval > Duration::zero()) {
    checkpoint_thread_ = std::thread([this] { CheckpointLoop(); });
  }
}

RunOutbox::~RunOutbox() { StopCheckpoints(); }

void RunOutbox::StopCheckpoints() {
  {
    const std::lock_guard<std::mutex> lock(stop_mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  if (checkpoint_thread_.joinable()) checkpoint_thread_.join();
}

void RunOutbox::CheckpointLoop() {
  const auto interval =
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(options_.checkpoint_interval);
  auto next = std::chrono::steady_clock::now() + interval;
  std::unique_lock<std::mutex> lock(stop_mu_);
  while (!stopping_) {
    lock.unlock();
    if (std::chrono::steady_clock::now() >= next) {
      next = std::chrono::steady_clock::now() + interval;
      if (auto published = PublishCheckpoint(); !published.ok()) {
        ++checkpoints_failed_;
        Warn("kafka checkpoint: " + published.status().ToString());
      }
    }
    ServeCheckpoints(std::chrono::milliseconds(0));
    lock.lock();
    // Delivery reports are served every 100 ms; a stop wakes it at once.
    stop_cv_.wait_until(
        lock, std::min(next, std::chrono::steady_clock::now() + std::chrono::milliseconds(100)),
        [this] { return stopping_; });
  }
}

void RunOutbox::Warn(const std::string& message) const {
  if (options_.warn) options_.warn(message);
}

void RunOutbox::Account(Lane& lane, const emit::EmitProgress& progress) {
  auto head = lane.emitter->Head();
  const std::lock_guard<std::mutex> lock(stats_mu_);
  lane.stats.acknowledged += progress.acknowledged - lane.session_acknowledged;
  lane.session_acknowledged = progress.acknowledged;
  lane.stats.position = progress.position;
  if (head.ok()) lane.stats.lag = *head > progress.position ? *head - progress.position : 0;
}

std::string RunOutbox::RenderMetrics() const {
  std::string o;
  struct Series {
    const char* name;
    const char* type;
    const char* help;
    uint64_t LaneStats::*field;
  };
  const Series series[] = {
      {"cronledger_outbox_position", "gauge",
       "The stream's stored position: every record of the log up to this seq is acknowledged.",
       &LaneStats::position},
      {"cronledger_outbox_lag_records", "gauge",
       "Records committed to the ledger that the stream has not had acknowledged yet.",
       &LaneStats::lag},
      {"cronledger_outbox_acknowledged_total", "counter",
       "Records of the stream the broker acknowledged (this process).", &LaneStats::acknowledged},
      {"cronledger_outbox_session_failures_total", "counter",
       "Producer sessions of the stream that ended on an error (reopened after a back-off).",
       &LaneStats::failures},
  };
  {
    const std::lock_guard<std::mutex> lock(stats_mu_);
    for (const Series& m : series) {
      Metric(&o, m.name, m.type, m.help);
      for (const Lane& lane : lanes_) {
        o += std::string(m.name) + "{stream=\"" + std::string(StreamName(lane.options.stream)) +
             "\"} " + std::to_string(lane.stats.*m.field) + "\n";
      }
    }
  }
  if (options_.checkpoint_interval > Duration::zero()) {
    Metric(&o, "cronledger_checkpoints_acknowledged_total", "counter",
           "Audit trail checkpoints the broker acknowledged on P.checkpoints.");
    o += "cronledger_checkpoints_acknowledged_total " +
         std::to_string(checkpoints_acknowledged_.load()) + "\n";
    Metric(&o, "cronledger_checkpoints_failed_total", "counter",
           "Audit trail checkpoints that could not be published or delivered.");
    o += "cronledger_checkpoints_failed_total " + std::to_string(checkpoints_failed_.load()) + "\n";
    Metric(&o, "cronledger_checkpoint_last_acknowledged_timestamp_seconds", "gauge",
           "When the last acknowledged checkpoint was published (Unix seconds; 0: none yet).");
    o += "cronledger_checkpoint_last_acknowledged_timestamp_seconds " +
         std::to_string(last_checkpoint_unix_.load()) + "\n";
  }
  return o;
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
  lane.session_acknowledged = 0;
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
      const std::lock_guard<std::mutex> lock(stats_mu_);
      ++lane.stats.failures;
      continue;
    }
    Account(lane, *step);
  }
  // Nothing waited (every lane is backing off, or there is none): wait here instead.
  const auto spent = std::chrono::steady_clock::now() - started;
  if (spent < wait / 2) std::this_thread::sleep_for(wait - spent);
}

Result<std::string> RunOutbox::PublishCheckpoint() {
  replay::trail::Checkpoint checkpoint;
  const int64_t checkpoint_publish_unix = clock_.Now().unix_seconds();
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
  published_unix_ = checkpoint_publish_unix;
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
      last_checkpoint_unix_.store(published_unix_);
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
  StopCheckpoints();
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
    const uint64_t failed = checkpoints_failed_.load();
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
