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
// Best effort, like the recorder: failures are logged and counted, never returned to the pass.
// Thread safety: Record() may be called from any thread (one mutex, held across the API call so
// that a series is never created twice).

#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <string>

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
};

class EventRecorder {
 public:
  // `client` and `clock` must outlive the recorder; `log` may be empty.
  EventRecorder(kube::KubeClient& client, const WallClock& clock, EventRecorderOptions options,
                std::function<void(const std::string&)> log = {});

  // `type` is "Normal" or "Warning".
  void Record(const EventRegarding& regarding, const std::string& type, const std::string& reason,
              const std::string& message);

  EventRecorderStats stats() const;
  size_t cached_series() const;

 private:
  struct Series {
    std::string event_name;
    int64_t count = 1;
    Time last_observed;
    std::list<std::string>::iterator lru;
  };
  bool Create(const EventRegarding& regarding, const std::string& type, const std::string& reason,
              const std::string& message, Time now, Series* series);
  bool Bump(const EventRegarding& regarding, Time now, Series* series);
  void Forget(std::map<std::string, Series>::iterator it);
  void Prune(Time now);

  kube::KubeClient& client_;
  const WallClock& clock_;
  const EventRecorderOptions options_;
  std::function<void(const std::string&)> log_;
  mutable std::mutex mu_;
  std::map<std::string, Series> series_;  // by (regarding uid/ns/name, type, reason, message)
  std::list<std::string> lru_;            // least recently observed first
  int64_t last_name_nanos_ = 0;
  EventRecorderStats stats_;
};

// metav1.MicroTime as the API serves it: "2024-01-01T00:00:00.000000Z".
std::string FormatMicroTime(Time t);

}  // namespace cronledger::emit
