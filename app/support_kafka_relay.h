#pragma once

// `cronledger relay` (docs/kafka.md "Watch relay"): list+watch the CronJobs of the managed
// resource and batch/v1 Jobs through kube/ reflectors and publish every watch event to the watch
// topic `P.watch` (emit/kafka_watch_relay.h), so one process watches the API server and any
// number of consumers (`cronledger run --kafka-watch-topic`, or anything else) read it.
//
// A session: (1) read the watch topic to its end and rebuild what was last published of every
// object (emit::ReadWatchTopicState); (2) list both resources and diff against that
// (kube::ReflectorOptions::known_objects): changes and deletions made while no relay ran are
// published as synthetic ADDED/MODIFIED/DELETED events, unchanged objects are not published
// again; (3) watch from the list's resourceVersion, publishing each event; a 410 or a dropped
// watch relists and diffs against the reflector's cache the same way. A producer failure (fatal,
// non-retriable) ends the session; Run() starts a new one after `retry`, which re-reads the
// topic, so whatever the failed session did not get onto the topic is published again.
//
// Resync: every `resync_period` the session ends and the next one relists against the topic's
// state with the resourceVersions blanked, so every live object is published again (MODIFIED,
// same resourceVersion). Consumers that hold it drop the repeat (by resourceVersion); a consumer
// that rebuilds its view by reading a partition from the beginning of the retained topic finds
// every live object at least once as long as the period is shorter than the topic's retention
// (docs/kafka.md "Operating model").
//
// Guarantee: no change is lost (every object's latest state reaches the topic, and every
// deletion a DELETED); the stream per object is in resourceVersion order (one key, one
// partition, one idempotent producer per session); repeats are possible only across sessions
// (an event acknowledged by the broker but lost from the state read — not possible with
// acks=all — or two relays running at once during a rollout) and are harmless: a repeated event
// carries the same resourceVersion, and consumers apply an object's event only when its
// resourceVersion differs from the one they hold (ingest::KafkaEventSource does; see
// docs/kafka.md).
//
// Thread safety: Run()/RunSession() on one thread (they start two reflector threads); stats()
// from any thread.

#include <chrono>
#include <memory>
#include <mutex>
#include <string>

#include "emit/kafka_producer.h"
#include "emit/kafka_watch_relay.h"
#include "kube/client.h"
#include "kube/reflector.h"
#include "kube/resource.h"
#include "kube/sleeper.h"
#include "model/clock.h"
#include "model/result.h"

namespace cronledger::app {

struct RelayConfig {
  // The CronJobs to relay. Default: the project's CRD.
  kube::ResourceType resource = kube::CronledgerCronJobs();
  // "" = all namespaces.
  std::string namespace_;
  // brokers, pass-through properties, log. Required: brokers.
  emit::KafkaProducerOptions producer;
  // The watch topic, e.g. "cronledger.watch". Required.
  std::string topic;
  // How long reading the topic back at the start of a session may take. Default: 2 min.
  std::chrono::milliseconds state_read_timeout{120000};
  // How long a cancelled session waits for outstanding messages. Default: 10 s.
  std::chrono::milliseconds drain_timeout{10000};
  // Reflector settings (page size, watch/stall timeouts, back-off); type, namespace, resume
  // point and known objects are set by the relay.
  kube::ReflectorOptions reflector;
  // Pause between a failed session and the next. Default: 2 s.
  Duration retry = std::chrono::seconds(2);
  // Republish every live object this often (see the file comment); must be shorter than the
  // watch topic's retention. Zero: never. Default: 24 h.
  Duration resync_period = std::chrono::hours(24);
};

struct RelayStats {
  uint64_t sessions = 0;            // sessions started
  uint64_t resyncs = 0;             // of those, resync sessions
  uint64_t state_objects = 0;       // objects rebuilt from the topic at the last session's start
  emit::WatchRelayStats publisher;  // of the current (or last) session
};

class WatchRelay {
 public:
  // `client`, `sleeper` and `clock` (resync timing) must outlive the relay. `log` may be empty.
  WatchRelay(RelayConfig config, kube::KubeClient& client, kube::Sleeper& sleeper,
             const MonotonicClock& clock, std::function<void(const std::string&)> log);

  // One session (see the file comment); `resync` republishes every live object. OK when `cancel`
  // fired or the resync period ended it (after draining up to drain_timeout); otherwise the
  // error that ended it.
  Status RunSession(const kube::Cancellation& cancel, bool resync = false);
  // Sessions until `cancel` fires; a failed one is logged and retried after `retry`.
  // InvalidArgument (bad options) is returned at once.
  Status Run(const kube::Cancellation& cancel);

  RelayStats stats() const;

 private:
  void Log(const std::string& line) const;

  const RelayConfig config_;
  kube::KubeClient& client_;
  kube::Sleeper& sleeper_;
  const MonotonicClock& clock_;
  std::function<void(const std::string&)> log_;
  mutable std::mutex mu_;
  RelayStats stats_;
};

// Validates a RelayConfig (brokers, topic). InvalidArgument names what is wrong.
Status ValidateRelayConfig(const RelayConfig& config);

}  // namespace cronledger::app
