#pragma once

// Internal: the implementation behind Controller::Open. The docs/semantics.md §2 handlers live in
// controller_handlers.cc, one reconcile pass (the outbox of docs/design.md rule 3) in
// reconcile_pass.cc, the queue plumbing and workers in controller_impl.cc. docs/controller.md
// describes the records a pass leaves in the ledger.

#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "controller/controller.h"
#include "controller/typed_view.h"
#include "reconciler/invalid_object.h"
#include "reconciler/schedule.h"
#include "reconciler/schedule_memo.h"

namespace cronledger::controller {

// Why a key was enqueued; recorded as the Tick's trigger.
namespace trigger {
inline constexpr std::string_view kCronJobAdd = "cronjob-add";
inline constexpr std::string_view kCronJobUpdate = "cronjob-update";
inline constexpr std::string_view kCronJobDelete = "cronjob-delete";
inline constexpr std::string_view kJobAdd = "job-add";
inline constexpr std::string_view kJobUpdate = "job-update";
inline constexpr std::string_view kJobDelete = "job-delete";
inline constexpr std::string_view kTimer = "timer";
inline constexpr std::string_view kRetry = "retry";
inline constexpr std::string_view kStartup = "startup";
}  // namespace trigger

// What a pass ended with, for the work-queue decision of docs/semantics.md §2.
struct PassReport {
  bool ran = false;                  // the CronJob was in the view and the clock was read
  std::optional<std::string> error;  // the sync error, or the controller's own failure
  std::optional<Duration> requeue_after;
};

class ControllerImpl final : public Controller {
 public:
  ControllerImpl(const ControllerOptions& options, store::Ledger& ledger, Actuator& actuator,
                 const WallClock& wall, const MonotonicClock& mono, const model::TimeZoneDb& tzdb);
  ~ControllerImpl() override;

  // Records the decision-relevant configuration (rule 1) before the first pass.
  Status Init();

  Status Ingest(std::vector<model::WatchEvent> events) override;
  Result<store::CommitResult> IngestUnit(store::UnitOfWork unit) override;
  Status EnqueueAll() override;
  void SetKeyFilter(std::function<bool(const std::string& key)> owns) override;
  Status EnqueueWhere(const std::function<bool(const std::string& key)>& select) override;
  Result<size_t> RunReady() override;
  std::optional<int64_t> NextDueNanos() override;
  void Start() override;
  void Stop() override;
  ControllerStats Stats() const override;

 private:
  // --- docs/semantics.md §2 handlers (controller_handlers.cc)
  // Commits `events` (appended to unit.inputs) with the rest of `unit`, folds them into view_,
  // then handles them.
  Result<store::CommitResult> IngestEvents(std::vector<model::WatchEvent> events,
                                           store::UnitOfWork unit);
  void HandleCronJob(const model::WatchEvent& ev, const TypedView::Change& change);
  void HandleJob(const model::WatchEvent& ev, const TypedView::Change& change);
  void EnqueueOwner(const std::string& ns, const std::string& owner_name,
                    const std::string& owner_uid, std::string_view why);

  // --- one pass (reconcile_pass.cc)
  struct PassContext {
    std::string key, ns, name, uid, why;
    uint64_t tick_seq = 0;
    // What the pass read (every watch event up to view.view_seq), kept while it decides.
    TypedView::Family view;
    // Set when the CronJob's bytes do not decode, or one of its Jobs' (then jobs stays empty).
    std::optional<reconciler::InvalidCronJob> invalid;
    std::vector<const model::Job*> jobs;  // the view's decoded Jobs
    bool has_state = false;  // accounting is a completed pass's (the state blob, same uid)
    model::AccountingState accounting;
    std::vector<model::ApiOutcome> outcomes;  // of the calls made so far
    Time now;
    reconciler::DecideOptions options;
    // What Decide reads, over the fields above.
    reconciler::SyncInputRef Input(const model::TimeZoneDb& tzdb) const;
  };
  PassReport RunPass(const std::string& key, const std::string& why);
  // Reads the view and the accounting state and reads the clock (the Tick is committed with the
  // pass's first unit, see reconcile_pass.cc). nullopt when the CronJob is gone (docs/semantics.md
  // §3 step 1).
  Result<std::optional<PassContext>> BeginPass(const std::string& key, const std::string& why);
  Result<reconciler::Step> PerformCalls(PassContext& ctx, std::vector<model::Input>* unsent);
  // Decide over ctx; a status write's body is built here from the CronJob's stored bytes.
  Result<reconciler::Step> DecideStep(const PassContext& ctx);
  // The pass of a CronJob that does not decode (ctx.invalid): no call, one record.
  static reconciler::Step InvalidStep(const PassContext& ctx);
  Status FinishPass(const PassContext& ctx, std::vector<model::Input> unsent,
                    reconciler::SyncResult& result);
  // A pass that needs no record: see docs/controller.md "Unrecorded passes".
  static bool Unrecorded(const PassContext& ctx, const reconciler::SyncResult& result);
  // The accounting state of the CronJob's last completed pass; nullopt when there is none for
  // this uid (never reconciled, or a CronJob of the same name before it). From accounted_, or
  // the ledger's state blob for a CronJob this process has not completed a pass of.
  Result<std::optional<model::AccountingState>> LoadAccounting(const std::string& key,
                                                               const std::string& uid);
  // The CronJob's family from view_ into ctx (view, and jobs or invalid); NotFound when
  // the view has no such CronJob.
  Status ReadView(PassContext& ctx);

  // --- echoes of the controller's own writes (docs/controller.md "Echoes of the controller's
  // own writes")
  // Handles one committed event as upstream's handlers do (HandleCronJob or HandleJob).
  void React(const model::WatchEvent& ev, const TypedView::Change& change);
  // Around a call of a pass: the object a write (create Job, status write, delete Job) is
  // about, then the version its answer names, until that version's watch event comes back.
  // BeginOwnWrite is false for a call that is not followed (a read, skip_own_echoes off), whose
  // answer EndOwnWrite is then not given.
  bool BeginOwnWrite(const PassContext& ctx, const model::ApiCall& call);
  void EndOwnWrite(const model::ApiCall& call, const model::ApiOutcome& answer);
  // Whether the handlers leave `ev` alone: the echo of such a write (the pass that made the write
  // went on with its answer, so the event brings its CronJob's pass nothing new), or an event of
  // an object whose write is in flight, held until the call answers.
  bool TakeOwnEcho(const model::WatchEvent& ev, const TypedView::Change& change);

  // --- queue plumbing (controller_impl.cc)
  void Process(const WorkItem& item);
  void WorkerLoop();

  const ControllerOptions options_;
  store::Ledger& ledger_;
  Actuator& actuator_;
  const WallClock& wall_;
  const model::TimeZoneDb& tzdb_;
  // Every pass's schedule, parsed once per distinct text (thread-safe; Decide decides the same
  // with and without it).
  mutable reconciler::ScheduleMemo schedule_memo_;
  WorkQueue queue_;
  // One Ingest at a time, so that view_ folds the units in commit order.
  std::mutex ingest_mu_;
  // The ledger's view, decoded (typed_view.h): what passes read and the handlers compare.
  TypedView view_;
  // The accounting state each CronJob's last completed pass committed (its state blob, decoded),
  // by key, with the uid of the CronJob it belongs to. Filled by the first pass of a CronJob
  // from the ledger and replaced by each completed pass after its commit; a CronJob gone from the
  // view loses it with its blob. Passes of one key never overlap (the work queue), so an entry
  // is only ever read and replaced by that key's pass.
  struct Accounted {
    std::string uid;
    model::AccountingState state;
  };
  std::mutex accounted_mu_;
  std::unordered_map<std::string, Accounted> accounted_;  // guarded by accounted_mu_
  std::vector<std::thread> workers_;
  // By object ("c:" or "j:" + ns/name): the controller's last write of it, while its echo has
  // not come back. Before the answer, the uid of a deleted Job; after it, the uid and
  // resourceVersion the answer names (resourceVersion empty for a delete). An entry goes when its
  // echo or any other event of the object comes, or when the next write replaces it: at most one
  // per object.
  struct Held {
    model::WatchEvent event;
    TypedView::Change change;
  };
  struct OwnWrite {
    std::string uid;
    std::string resource_version;
    bool answered = false;   // false while the call is in flight
    std::vector<Held> held;  // the object's events that came while it was in flight
  };
  static bool IsEchoOf(const OwnWrite& w, const model::WatchEvent& ev);
  std::mutex own_writes_mu_;
  std::unordered_map<std::string, OwnWrite> own_writes_;  // guarded by own_writes_mu_

  // --- unaccounted fire times (controller_impl.cc, ControllerStats::unaccounted_fire_times)
  // Per CronJob whose last completed pass asked to be requeued: the wall time that pass settled
  // at, and when its requeue comes due.
  struct Expecting {
    Time settled;
    Time due;
  };
  // After a pass: an error keeps what the last good pass expected; a requeue replaces it;
  // anything else (the CronJob is gone, suspended, or has no next fire time) drops it.
  void TrackExpected(const std::string& key, const PassReport& report);
  // The CronJob's schedule as the view holds it, parsed; null when it has none that parses.
  std::shared_ptr<const reconciler::Schedule> ScheduleOf(const std::string& key) const;
  mutable std::mutex expecting_mu_;
  std::unordered_map<std::string, Expecting> expecting_;    // guarded by expecting_mu_
  std::function<bool(const std::string& key)> key_filter_;  // guarded by expecting_mu_

  std::atomic<uint64_t> passes_{0};
  std::atomic<uint64_t> unrecorded_passes_{0};
  std::atomic<uint64_t> echoes_skipped_{0};
  std::atomic<uint64_t> errors_{0};
  std::atomic<uint64_t> api_calls_{0};
  std::atomic<uint64_t> decisions_{0};
  std::atomic<uint64_t> events_ingested_{0};
};

// The controller-state blob of a CronJob: its accounting state, tagged with the uid of the
// CronJob it belongs to (a re-created CronJob of the same name starts afresh).
std::string EncodeControllerState(const std::string& uid, const model::AccountingState& s);
// The same blob from the accounting state's bytes (model::AccountingStateBytes, what the PassEnd
// records), so a pass encodes its state once.
std::string EncodeControllerStateBytes(const std::string& uid, std::string_view accounting);
Result<std::pair<std::string, model::AccountingState>> DecodeControllerState(
    std::string_view bytes);

}  // namespace cronledger::controller
