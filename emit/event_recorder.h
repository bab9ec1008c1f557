#pragma once

// Kubernetes Events for the controller (docs/semantics.md §10; docs/run.md "Events"):
// events.k8s.io/v1 Event objects regarding the CronJob, reportingController `cronjob-controller`,
// with the upstream reasons, messages and types, aggregated like client-go's events recorder
// (k8s.io/client-go/tools/events): the same reason and message of the same type on the same
// object while the previous one is less than `series_window` old is not a new Event — the
// existing Event gets `series: {count, lastObservedTime}` (count 2 on the first repeat, then +1)
// through a merge PATCH. A series whose Event is gone (TTL, deleted) starts over with a new
// Event. The cache is bounded: entries older than the window are dropped, and beyond
// `max_series` the least recently seen is forgotten (its next repeat creates a new Event).
//
// Best effort and asynchronous, like client-go's broadcaster: Record() queues the Event and returns
// at once, so a pass never waits for an Event's API call (nor for the client's rate limiter on its
// behalf). One sender thread makes the calls in the order Events were recorded. The queue holds
// at most `max_queued` Events; beyond that new ones are dropped and counted. Failures are logged
// and counted, never returned to the pass. Record() may be called from any thread.

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "kube/client.h"
#include "model/clock.h"

namespace cronledger::emit {

struct EventRecorderOptions {
  // Default: "cronjob-controller" (the upstream controller's event source component).
  std::string reporting_controller = "cronjob-controller";
  // Default: "cronjob-controller-cronledger"; `cronledger run` uses the pod's host name.
  std::string reporting_instance = "cronjob-controller-cronledger";
  // Default: 6 minutes (client-go's series window).
  Duration series_window = std::chrono::minutes(6);
  // Default: 4096 series remembered.
  size_t max_series = 4096;
  // Events waiting for the sender, at most. Default: 1000 (client-go's maxQueuedEvents).
  size_t max_queued = 1000;
};

// The object an Event is about (the CronJob).
struct EventRegarding {
  std::string api_version;  // "batch/v1" or "cronledger.io/v1"
  std::string kind = "CronJob";
  std::string namespace_;
  std::string name;
  std::string uid;
};

struct EventRecorderStats {
  uint64_t created = 0;
  uint64_t aggregated = 0;  // repeats folded into a series
  uint64_t failed = 0;
  uint64_t dropped = 0;  // the queue was full, or the recorder stopped before sending them
};

class EventRecorder {
 public:
  // `client` and `clock` must outlive the recorder; `log` may be empty. Starts the sender thread.
  EventRecorder(kube::KubeClient& client, const WallClock& clock, EventRecorderOptions options,
                std::function<void(const std::string&)> log = {});
  // Stop(std::chrono::seconds(2)).
  ~EventRecorder();
  EventRecorder(const EventRecorder&) = delete;
  EventRecorder& operator=(const EventRecorder&) = delete;

  // Queues an Event observed now. `type` is "Normal" or "Warning".
  void Record(const EventRegarding& regarding, const std::string& type, const std::string& reason,
              const std::string& message);

  // Waits (real time) until every Event recorded before the call has been sent or has failed.
  // False if `timeout` passed first.
  bool Flush(Duration timeout);

  // Sends what is queued for up to `drain` (real time), drops the rest and stops the sender. The
  // call in flight, if any, finishes first. Later Records are dropped. Idempotent.
  void Stop(Duration drain);

  EventRecorderStats stats() const;
  size_t cached_series() const;
  size_t queued() const;

 private:
  struct Pending {
    EventRegarding regarding;
    std::string type;
    std::string reason;
    std::string message;
    Time observed;
  };
  struct Series {
    std::string event_name;
    int64_t count = 1;
    Time last_observed;
    std::list<std::string>::iterator lru;
  };
  void SendLoop();
  void Send(const Pending& event);
  bool Create(const EventRegarding& regarding, const std::string& type, const std::string& reason,
              const std::string& message, Time now, Series* series);
  bool Bump(const EventRegarding& regarding, Time now, Series* series);
  void Forget(std::map<std::string, Series>::iterator it);
  void Count(uint64_t EventRecorderStats::*counter);
  void Prune(Time now);

  kube::KubeClient& client_;
  const WallClock& clock_;
  const EventRecorderOptions options_;
  std::function<void(const std::string&)> log_;

  mutable std::mutex mu_;            // guards the queue, the counters and stop_
  std::condition_variable wake_;     // the sender: an Event was queued, or stop
  std::condition_variable drained_;  // Flush/Stop: the sender finished an Event
  std::deque<Pending> queue_;
  uint64_t sent_ = 0;  // Events taken off the queue and finished (sent, failed or dropped)
  uint64_t recorded_ = 0;
  bool stop_ = false;
  EventRecorderStats stats_;

  // The series cache belongs to the sender; send_mu_ lets cached_series() read it.
  mutable std::mutex send_mu_;
  std::map<std::string, Series> series_;  // by (regarding uid/ns/name, type, reason, message)
  std::list<std::string> lru_;            // least recently observed first
  int64_t last_name_nanos_ = 0;

  std::thread sender_;  // last: started once everything above is constructed
};

// metav1.MicroTime as the API serves it: "2024-01-01T00:00:00.000000Z".
std::string FormatMicroTime(Time t);

}  // namespace cronledger::emit
