// RunAssembly with the Kafka watch topic (docs/kafka.md "`cronledger run --kafka-watch-topic`"):
// a KafkaEventSource hands each batch, with its partitions' next offsets, to
// Controller::IngestUnit (one unit of work, then the event handlers); the controller's work queue
// keeps only CronJobs of partitions this replica owns and has caught up on; a partition that
// catches up has its CronJobs enqueued once.
#include <set>
#include <utility>

#include "app/support_run.h"

namespace cronledger::app {

Status RunAssembly::StartKafkaIngest() {
  if (kafka_) return Status::FailedPrecondition("the watch topic is already consumed");
  ingest::KafkaSourceOptions options = *config_.kafka_watch;
  options.commit = [this](store::UnitOfWork unit) {
    return controller_->IngestUnit(std::move(unit));
  };
  options.on_caught_up = [this](const std::vector<int32_t>& partitions) {
    OnPartitionsCaughtUp(partitions);
  };
  CL_ASSIGN_OR_RETURN(kafka_, ingest::KafkaEventSource::Open(*parts_.ledger, options));
  ingest::KafkaEventSource* source = kafka_.get();
  controller_->SetKeyFilter([source](const std::string& key) { return source->OwnsKey(key); });
  Log("consuming watch topic " + options.topic + " as group " + options.group_id);
  threads_.emplace_back([this, source] {
    while (!ingest_cancel_.cancelled()) {
      auto polled = source->Poll(
          std::chrono::duration_cast<std::chrono::milliseconds>(config_.kafka_poll_wait));
      if (!polled.ok()) {
        // A ledger or fatal consumer error: committed units stay; a restart resumes from the
        // offsets in the ledger.
        Log("kafka ingest stopped: " + polled.status().ToString());
        std::lock_guard lock(mu_);
        if (ingest_error_.ok()) ingest_error_ = polled.status();
        return;
      }
      if (polled->quarantined > 0) {
        Log("kafka ingest: " + std::to_string(polled->quarantined) +
            " message(s) quarantined (cronledger audit shows the quarantine)");
      }
      std::lock_guard lock(mu_);
      ingest::KafkaIngestProgress& t = kafka_totals_;
      t.messages += polled->messages;
      t.events += polled->events;
      t.quarantined += polled->quarantined;
      t.skipped += polled->skipped;
      t.duplicates += polled->duplicates;
      t.misrouted += polled->misrouted;
      if (polled->last_seq != 0) t.last_seq = polled->last_seq;
    }
  });
  return Status::Ok();
}

void RunAssembly::StopKafkaIngest() {
  if (!kafka_) return;
  // Nothing is owned any more; the filter must not outlive the source it asks.
  controller_->SetKeyFilter([](const std::string&) { return false; });
  // Leaving the group revokes every partition; the batch read so far (none after a completed
  // Poll) is committed through the controller first.
  kafka_.reset();
}

void RunAssembly::OnPartitionsCaughtUp(const std::vector<int32_t>& partitions) {
  const std::set<int32_t> caught_up(partitions.begin(), partitions.end());
  std::string list;
  for (int32_t p : partitions) {
    if (!list.empty()) list += ',';
    list += std::to_string(p);
  }
  Log("watch topic partitions caught up: " + list + "; enqueueing their CronJobs");
  // The new owner looks at each CronJob of these partitions once (timers of the previous owner
  // are not known here), as a new leader does with EnqueueAll.
  Status s = controller_->EnqueueWhere([this, &caught_up](const std::string& key) {
    auto partition = kafka_->PartitionOfKey(key);
    return partition && caught_up.count(*partition) != 0;
  });
  if (!s.ok()) Log("enqueue caught-up partitions: " + s.ToString());
}

ingest::KafkaIngestProgress RunAssembly::KafkaTotals() const {
  std::lock_guard lock(mu_);
  return kafka_totals_;
}

std::string RunAssembly::RenderKafkaMetrics() const {
  const ingest::KafkaIngestProgress t = KafkaTotals();
  std::string o;
  auto metric = [&o](const std::string& name, const char* type, const char* help, uint64_t v) {
    o += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " +
         std::to_string(v) + "\n";
  };
  metric("cronledger_kafka_watch_messages_total", "counter",
         "Watch-topic messages committed to the ledger (events and quarantined).", t.messages);
  metric("cronledger_kafka_watch_events_total", "counter", "Watch events committed.", t.events);
  metric("cronledger_kafka_watch_quarantined_total", "counter",
         "Watch-topic messages quarantined (not a watch document).", t.quarantined);
  metric("cronledger_kafka_watch_duplicates_total", "counter",
         "Watch events dropped because the view already held them (resourceVersion).",
         t.duplicates);
  metric("cronledger_kafka_watch_misrouted_total", "counter",
         "Messages on another partition than the partitioner gives their key.", t.misrouted);
  const ingest::KafkaEventSource* source = kafka_.get();
  metric("cronledger_kafka_watch_assigned_partitions", "gauge",
         "Watch-topic partitions assigned to this replica.",
         source != nullptr ? source->AssignedPartitions().size() : 0);
  metric("cronledger_kafka_watch_caught_up", "gauge",
         "1 when every assigned partition has caught up since its assignment.",
         source != nullptr && source->CaughtUp() ? 1 : 0);
  return o;
}

}  // namespace cronledger::app
