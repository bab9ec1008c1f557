#pragma once

// The watch relay (docs/kafka.md "Watch relay"): publishes the Kubernetes watch stream
// of CronJobs and Jobs to the watch topic `P.watch`, so one process watches the API server and
// many consume. Each kube::Reflector gets a sink from KafkaWatchPublisher::SinkFor(); every event
// becomes one message, the same JSON the watch API streams ({"type", "object"}, the object's
// bytes as the API server sent them), keyed by CronJob (model::WatchEventKey: a Job by its
// controller owner), through one idempotent producer
// (acks=all, no delivery timeout): within a session the topic gets every event once, in order
// per partition, or the session fails (a fatal producer error) and the sinks refuse further
// events, which stops the reflectors.
//
// Checkpoints (a bookmark, the end of a relist) are published as BOOKMARK documents
// ({"type":"BOOKMARK","object":{"apiVersion","kind","metadata":{"resourceVersion"}}}) keyed "/",
// as the ledger records them for the direct watch (ingest/kube_source.h).
//
// Restart: ReadWatchTopicState() rebuilds from the topic what was last published of every
// object; the relay relists and diffs against it (kube::ReflectorOptions::known_objects), so
// changes and deletions made while it was down are published (as synthetic events; intermediate
// states are not, exactly as a 410 relist of any informer) and unchanged objects are not.
//
// Thread safety: the sinks and Poll() may be called from different threads (one mutex).

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "emit/kafka_producer.h"
#include "emit/kafka_topic_reader.h"
#include "kube/reflector.h"
#include "model/json.h"
#include "model/result.h"

namespace cronledger::emit {

struct WatchRelayStats {
  uint64_t events = 0;        // object events produced (synthetic included)
  uint64_t synthetic = 0;     // of those, from a relist difference
  uint64_t bookmarks = 0;     // checkpoints produced
  uint64_t acknowledged = 0;  // messages the broker acknowledged
};

class KafkaWatchPublisher {
 public:
  // InvalidArgument for bad options (brokers, forbidden producer properties).
  static Result<std::unique_ptr<KafkaWatchPublisher>> Open(const KafkaProducerOptions& producer,
                                                           std::string topic);
  ~KafkaWatchPublisher();
  KafkaWatchPublisher(const KafkaWatchPublisher&) = delete;
  KafkaWatchPublisher& operator=(const KafkaWatchPublisher&) = delete;

  // A sink for the reflector of one resource. The publisher must outlive the sink.
  std::unique_ptr<kube::ReflectorSink> SinkFor(std::string api_version, std::string kind);

  // Serves delivery reports, waiting up to `wait` for one (in slices of 10 ms, so that the
  // reflectors' Publish calls are never held up longer). Returns the error that ended the session
  // (a failed delivery or a fatal producer error); then every sink refuses events.
  Status Poll(std::chrono::milliseconds wait);
  // Messages produced and not yet acknowledged.
  size_t Outstanding();
  WatchRelayStats stats();

  // Produces one document (used by the sinks). Waits while the local queue is full.
  Status Publish(const std::string& key, const std::string& value, bool synthetic, bool bookmark);

 private:
  KafkaWatchPublisher(std::unique_ptr<KafkaProducer> producer, std::string topic);
  Status ServeReports(std::chrono::milliseconds wait);  // mu_ held

  std::mutex mu_;
  std::unique_ptr<KafkaProducer> producer_;
  const std::string topic_;
  uint64_t produced_ = 0;
  WatchRelayStats stats_;
  Status failed_;
};

// What the topic says the relay last published: per resource ("<apiVersion>/<Kind>"), the
// objects not deleted, by "namespace/name", in their last published state. Messages that are
// not watch documents, or whose object model::WatchDecoder refuses, are counted and skipped (the
// relay is not the topic's only writer in every deployment).
struct WatchTopicState {
  std::map<std::string, std::map<std::string, model::WatchEvent>> objects;
  uint64_t messages = 0;
  uint64_t skipped = 0;
};
Result<WatchTopicState> ReadWatchTopicState(const TopicReaderOptions& options,
                                            const std::string& topic);

}  // namespace cronledger::emit
