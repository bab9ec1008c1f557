#pragma once

// An in-process Kubernetes API for `cronledger simulate`, the scale benchmark and tests
// (docs/simulate.md). It is both sides of the controller's world:
//  - an Actuator: Job create/get/delete, CronJob get and status update, Kubernetes Events;
//  - an event source: every change produces the watch event a real API server would send, with a
//    resourceVersion from one global counter, in the order the changes happened.
// Jobs follow the seeded lifecycle model of sim_lifecycle.h (ADDED on create, MODIFIED when they
// start and when they finish, DELETED on delete).
//
// Time: the cluster reads the injected WallClock when a call is performed and when events are
// taken, and applies every lifecycle transition that is due at that moment first, so the event
// stream is ordered and consistent with what GETs return. With a ManualClock this is virtual time
// (the caller jumps the clock to NextEventTime() or to its own next timer); SimEventPump
// (sim_pump.h) delivers the events of a real clock from a thread.
//
// Determinism: uids are hashes of (seed, namespace, name, how many times that name was created);
// Job plans are hashes of (seed, uid). Given the same sequence of calls at the same clock readings,
// the event stream is identical byte for byte. Thread-safe (one mutex).

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <queue>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "controller/actuator.h"
#include "controller/sim_lifecycle.h"
#include "model/clock.h"
#include "model/inputs.h"
#include "model/objects.h"

namespace cronledger::controller {

struct SimClusterOptions {
  // Seeds uids and Job plans. Default: 1.
  uint64_t seed = 1;
  JobLifecycleOptions lifecycle;
  // Kubernetes Events kept by RecordEvent (oldest dropped first); counts by reason are kept for
  // all of them. Default: 1024.
  size_t event_log_capacity = 1024;
  // Reject a CronJob status update whose metadata.resourceVersion is set and stale with Conflict,
  // as the API server's optimistic concurrency does. Default: true.
  bool check_resource_version = true;
};

// Per-CronJob counters of the Jobs it owns (by the Job's controller owner reference).
struct SimJobCounts {
  uint64_t created = 0;
  uint64_t already_exists = 0;  // create calls answered AlreadyExists
  uint64_t started = 0;
  uint64_t succeeded = 0;
  uint64_t failed = 0;
  uint64_t deleted = 0;          // deleted by the controller (history cleanup, Replace)
  uint64_t deleted_running = 0;  // of those, deleted before they finished (Replace)
  uint64_t running = 0;          // created, not finished, not deleted (now)
  friend bool operator==(const SimJobCounts&, const SimJobCounts&) = default;
};

// A Kubernetes Event recorded on a CronJob.
struct SimEvent {
  Time time;
  model::CronJobRef cron_job;
  reconciler::Event event;
};

class SimCluster final : public Actuator {
 public:
  // `wall` is not owned and must outlive the cluster.
  SimCluster(SimClusterOptions options, const WallClock& wall);
  ~SimCluster() override;

  // Creates the CronJob as `kubectl apply` of a manifest would, or replaces its spec/metadata if
  // it exists (keeping its uid, creationTimestamp and status): ADDED or MODIFIED. A missing
  // namespace is "default"; creationTimestamp is now (the API server ignores the manifest's); the
  // manifest's uid is kept so that ledger records match the manifests, and a missing one is
  // derived from the seed. The API server's defaults are applied (concurrencyPolicy Allow,
  // suspend false, successfulJobsHistoryLimit 3, failedJobsHistoryLimit 1).
  // InvalidArgument when the name is empty.
  Status ApplyCronJob(const model::CronJob& cron_job);
  // Deletes the CronJob (DELETED) and, like the garbage collector with background propagation,
  // the Jobs it controls. NotFound when absent.
  Status DeleteCronJob(std::string_view ns, std::string_view name);

  // Actuator.
  model::ApiOutcome Perform(const model::ApiCall& call) override;
  void RecordEvent(const model::CronJobRef& cron_job, const reconciler::Event& event) override;

  // When the next watch event is due: the time of the oldest undelivered change, or of the next
  // lifecycle transition. nullopt when nothing will ever happen without a call.
  std::optional<Time> NextEventTime();
  // Applies the transitions due at or before `now` and returns up to `max` undelivered watch
  // events, oldest first (the rest stay queued).
  std::vector<model::WatchEvent> TakeDueEvents(Time now, size_t max = SIZE_MAX);
  // Called (without the cluster's lock held) whenever a call queues an event, so a real-time pump
  // can wake up. Set before use; not thread-safe against concurrent calls.
  void SetOnChange(std::function<void()> fn);

  // --- inspection (tests, summaries) ---
  // The Job as the API serves it now; NotFound when absent.
  Result<model::Json> GetJob(std::string_view ns, std::string_view name);
  Result<model::Json> GetCronJob(std::string_view ns, std::string_view name);
  size_t JobCount();
  size_t CronJobCount();
  // An estimate of the heap the cluster's own state holds (objects with their JSON, Job plans,
  // pending events and transitions, counters): string capacities beyond the inline buffer plus
  // fixed per-node costs of the containers. The scale benchmark reports it so that the memory of
  // this stand-in for a real API server can be told apart from the controller's.
  size_t ApproxHeapBytes();
  // Counters for the CronJob "ns/name" (zeros when it never owned a Job).
  SimJobCounts JobCounts(std::string_view key);
  std::map<std::string, SimJobCounts> AllJobCounts();
  std::vector<SimEvent> RecentEvents();
  std::map<std::string, uint64_t> EventCountsByReason();

 private:
  enum class Phase : uint8_t { kPending, kRunning, kFinished };
  struct JobState {
    std::string namespace_;
    std::string name;
    std::string uid;
    std::string resource_version;
    std::string owner_key;  // "ns/owner" of the controller owner reference, "" when none
    std::string owner_name;
    std::string owner_uid;
    std::string raw;  // the object as the API serves it now (compact JSON)
    Phase phase = Phase::kPending;
    Time created;
    Time started;
    JobPlan plan;
  };
  struct CronJobState {
    std::string api_version;
    std::string namespace_;
    std::string name;
    std::string uid;
    std::string resource_version;
    std::string raw;
  };
  struct Transition {
    int64_t due_nanos;
    uint64_t order;
    std::string key;  // "ns/name"
    std::string uid;
    bool operator>(const Transition& o) const {
      return due_nanos != o.due_nanos ? due_nanos > o.due_nanos : order > o.order;
    }
  };

  model::ApiOutcome PerformLocked(const model::ApiCall& call, Time now);
  model::ApiOutcome CreateJobLocked(const model::ApiCall& call, Time now);
  model::ApiOutcome DeleteJobLocked(const model::ApiCall& call);
  model::ApiOutcome UpdateStatusLocked(const model::ApiCall& call);
  void AdvanceLocked(Time now);
  void ApplyTransitionLocked(const Transition& t);
  void ScheduleLocked(Time at, const std::string& key, const std::string& uid);
  void EmitJobLocked(model::WatchEventType type, const JobState& job, Time at);
  void EmitCronJobLocked(model::WatchEventType type, const CronJobState& cj, Time at);
  void RemoveJobLocked(std::unordered_map<std::string, JobState>::iterator it, Time now);
  std::string NextResourceVersionLocked();
  void NotifyChange();

  const SimClusterOptions options_;
  const WallClock& wall_;
  std::function<void()> on_change_;

  std::mutex mu_;
  uint64_t resource_version_ = 0;
  uint64_t transition_order_ = 0;
  std::unordered_map<std::string, CronJobState> cron_jobs_;
  std::unordered_map<std::string, JobState> jobs_;
  std::unordered_map<std::string, uint64_t> create_generation_;  // "ns/name" -> times created
  std::priority_queue<Transition, std::vector<Transition>, std::greater<>> transitions_;
  struct Pending {
    Time at;
    model::WatchEvent event;
  };
  std::deque<Pending> pending_;
  std::map<std::string, SimJobCounts> counts_;
  std::deque<SimEvent> events_;
  std::map<std::string, uint64_t> event_reasons_;
};

}  // namespace cronledger::controller
