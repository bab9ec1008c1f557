#pragma once

// The controller loop: upstream event handlers (docs/semantics.md §2) over the ledger's view, a
// rate-limited work queue with timers, workers with per-key exclusivity, and the outbox discipline
// of docs/design.md rule 3. One reconcile pass of a key:
//   1. read the CronJob and its Jobs from the view in memory (typed_view.h) and its accounting
//      state;
//   2. read the wall clock once; record a Tick (rule 1), committed in the unit of the first intent
//      (or of step 4 when the pass makes no call), so it is durable before anything it causes;
//   3. run reconciler::Decide; before performing a mutating call (create/delete/updateStatus),
//      commit its intent; perform it through the Actuator; commit its outcome as an input;
//      repeat until the pass completes (reads such as GET are performed, then their outcomes
//      committed);
//   4. commit the pass's decisions with the new accounting state in one unit of work;
//   5. record the pass's Kubernetes Events through the Actuator; requeue / retry per
//   docs/semantics.md §2.
// A crash anywhere loses nothing and creates no duplicate Job (names derive from the slot), and
// replaying the recorded inputs through Decide reproduces the recorded decisions.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/actuator.h"
#include "controller/work_queue.h"
#include "model/clock.h"
#include "model/inputs.h"
#include "model/result.h"
#include "model/timezone.h"
#include "reconciler/decide.h"
#include "store/ledger.h"

namespace cronledger::controller {

struct ControllerOptions {
  // Worker threads for Start(). Default: 2. RunReady() is single-threaded regardless.
  int workers = 2;
  reconciler::DecideOptions decide;
  RateLimiterOptions rate_limiter;
  // The IANA name of the zone the TimeZoneDb's Local() is (what it was opened with:
  // model::SystemTimeZoneDbOptions::local_zone, default UTC). Recorded as the "localTimeZone"
  // ConfigChange so that replay and `why` know the zone; Open fails when it is not that zone.
  std::string local_time_zone = "UTC";
  // Whether the watch event of the controller's own write starts no pass (docs/controller.md
  // "Echoes of the controller's own writes"). Off for an actuator whose answers are not writes
  // (the shadow auditor's): the events it sees are the cluster controller's, each to be handled as
  // upstream handles it.
  bool skip_own_echoes = true;
  // Test hook: called by every pass that finds its CronJob in the view, with its key
  // ("ns/name"), before it decides; a pass that records nothing is seen here too. Default: empty.
  std::function<void(const std::string& key)> before_pass;
};

struct ControllerStats {
  uint64_t passes = 0;
  // Passes that left no record: no call, no decision but their requeue, the accounting unchanged,
  // triggered by a Job's watch event or a CronJob update (docs/controller.md "Unrecorded passes").
  uint64_t unrecorded_passes = 0;
  // Watch events that started no pass: the controller's own writes coming back (a created Job's
  // ADDED, a written status's MODIFIED, a deleted Job's DELETED; docs/controller.md "Echoes of
  // the controller's own writes").
  uint64_t echoes_skipped = 0;
  uint64_t errors = 0;  // passes that ended with an error (retried with back-off)
  uint64_t api_calls = 0;
  uint64_t decisions = 0;
  uint64_t events_ingested = 0;
  // The work queue now: keys ready for a worker, and keys waiting for their time (a next fire
  // time, a back-off).
  uint64_t queue_ready = 0;
  uint64_t queue_delayed = 0;
  // Fire times that came due at least kUnaccountedGrace ago and that no pass has accounted: for
  // each CronJob whose last completed pass asked to be requeued (it expects a next fire time),
  // the fire times of its schedule after that pass, when no pass of it has completed without
  // error since (docs/reference/metrics.md "Unaccounted fire times"). Suspended CronJobs and
  // those whose schedule or time zone cannot be evaluated expect no fire time and count none.
  uint64_t unaccounted_fire_times = 0;
};

// How long after a fire time a pass may take to account it before the fire time counts as
// unaccounted: the timer comes due 100 ms after the fire time, and a worker may be busy.
inline constexpr Duration kUnaccountedGrace = std::chrono::seconds(10);

class Controller {
 public:
  virtual ~Controller() = default;

  // Collaborators are not owned and must outlive the controller.
  static Result<std::unique_ptr<Controller>> Open(const ControllerOptions& options,
                                                  store::Ledger& ledger, Actuator& actuator,
                                                  const WallClock& wall, const MonotonicClock& mono,
                                                  const model::TimeZoneDb& tzdb);

  // Commits watch events to the ledger as one unit of work (rule 1: before they take effect),
  // then runs the docs/semantics.md §2 handlers for them (enqueue, schedule-change requeue, Job →
  // owner).
  virtual Status Ingest(std::vector<model::WatchEvent> events) = 0;
  // Enqueues every CronJob of the view (start-up after a restart, resync).
  virtual Status EnqueueAll() = 0;

  // For sources that keep their resume point in the ledger (a Kafka consumer's per-partition
  // offsets, docs/kafka.md): commits `unit` — watch events in `inputs`, with the quarantine
  // entries and source positions that belong to them — as ONE unit of work, then runs the spec
  // §2 handlers for its watch events exactly as Ingest() does. A crash therefore never separates
  // a batch from its positions: it is applied once or not at all. InvalidArgument (nothing
  // committed) when the unit holds anything else (other inputs, decisions, controller state).
  virtual Result<store::CommitResult> IngestUnit(store::UnitOfWork unit) = 0;
  // Scale-out (docs/kafka.md "Operating model"): only keys `owns` accepts are handed to passes;
  // any other key is dropped when it would be handed out (events, timers, retries alike), so a
  // replica stops acting on CronJobs whose partition it lost. Called under the work queue's lock
  // from any thread: it must be thread-safe and must not call into the controller. Empty (the
  // default): every key.
  virtual void SetKeyFilter(std::function<bool(const std::string& key)> owns) = 0;
  // Enqueues the CronJobs of the view whose key ("namespace/name") `select` accepts (a replica
  // that just took over a partition looks at its CronJobs once).
  virtual Status EnqueueWhere(const std::function<bool(const std::string& key)>& select) = 0;

  // Virtual time / tests: runs passes on the calling thread until no key is ready now.
  // Returns the number of passes run.
  virtual Result<size_t> RunReady() = 0;
  // Monotonic time when the earliest delayed key becomes due.
  virtual std::optional<int64_t> NextDueNanos() = 0;

  // Real time: starts `workers` threads that wait for ready keys; Stop() drains and joins them.
  virtual void Start() = 0;
  virtual void Stop() = 0;

  virtual ControllerStats Stats() const = 0;
};

}  // namespace cronledger::controller
