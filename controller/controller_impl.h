#pragma once

// Internal: the implementation behind Controller::Open. The docs/semantics.md §2 handlers live in
// controller_handlers.cc, one reconcile pass (the outbox of docs/design.md rule 3) in
// reconcile_pass.cc, the queue plumbing and workers in controller_impl.cc. docs/controller.md
// describes the records a pass leaves in the ledger.

#include <atomic>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "controller/controller.h"
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
  // A uid as the handlers keep it: 16 bytes instead of a 36-character heap string. A canonical
  // lowercase UUID (what Kubernetes assigns) is stored exactly; any other string, as a 128-bit
  // hash. The handlers only compare uids for equality.
  struct Uid {
    uint64_t hi = 0;
    uint64_t lo = 0;
    static Uid Of(std::string_view uid);
    friend bool operator==(const Uid&, const Uid&) = default;
  };
  // An object as the view held it before an ingested event (controller_handlers.cc).
  struct Prior {
    std::string resource_version;
    std::string owner_name;
    Uid owner_uid;
    std::string schedule;
    std::optional<std::string> time_zone;
    Uid uid;
    bool decoded = false;  // CronJobs: schedule/time_zone come from a decodable object
  };
  // What is kept per object between events (the facts of Prior that apply to its kind).
  struct KnownCronJob {
    std::string resource_version;
    Uid uid;
    std::string schedule;
    std::optional<std::string> time_zone;
    bool decoded = false;
  };
  struct KnownJob {
    std::string resource_version;
    std::string owner_name;
    Uid owner_uid;
    Uid uid;
  };
  using ObjectKey = std::pair<model::ObjectKind, std::string>;

  // --- docs/semantics.md §2 handlers (controller_handlers.cc)
  // Commits `events` (appended to unit.inputs) with the rest of `unit`, then handles them.
  Result<store::CommitResult> IngestEvents(std::vector<model::WatchEvent> events,
                                           store::UnitOfWork unit);
  Result<std::optional<Prior>> ReadPrior(const model::WatchEvent& ev);
  static std::optional<Prior> PriorOf(const model::WatchEvent& ev);
  void HandleCronJob(const model::WatchEvent& ev, const std::optional<Prior>& prior,
                     const std::optional<Prior>& current);
  void Remember(const model::WatchEvent& ev, std::optional<Prior> state);
  void HandleJob(const model::WatchEvent& ev, const std::optional<Prior>& prior);
  void EnqueueOwner(const std::string& ns, const std::string& owner_name, const Uid& owner_uid,
                    std::string_view why);
  std::optional<Prior> FindKnown(model::ObjectKind kind, const std::string& key) const;

  // --- one pass (reconcile_pass.cc)
  struct PassContext {
    std::string key, ns, name, uid, why;
    uint64_t tick_seq = 0;
    uint64_t view_seq = 0;  // the last input folded into the view the pass read
    // Set instead of in.cron_job when the stored CronJob does not decode (then in.jobs stays
    // empty).
    std::optional<reconciler::InvalidCronJob> invalid;
    bool has_state = false;    // in.accounting is a completed pass's (the state blob, same uid)
    reconciler::SyncInput in;  // what Decide reads
  };
  PassReport RunPass(const std::string& key, const std::string& why);
  // Reads the view and the accounting state and reads the clock (the Tick is committed with the
  // pass's first unit, see reconcile_pass.cc). nullopt when the CronJob is gone (docs/semantics.md
  // §3 step 1).
  Result<std::optional<PassContext>> BeginPass(const std::string& key, const std::string& why);
  Result<reconciler::Step> PerformCalls(PassContext& ctx, std::vector<model::Input>* unsent);
  // The pass of a CronJob that does not decode (ctx.invalid): no call, one record.
  static reconciler::Step InvalidStep(const PassContext& ctx);
  Status FinishPass(const PassContext& ctx, std::vector<model::Input> unsent,
                    reconciler::SyncResult& result);
  // A pass that needs no record: see docs/controller.md "Unrecorded passes".
  static bool Unrecorded(const PassContext& ctx, const reconciler::SyncResult& result);
  // The accounting state of the CronJob's last completed pass; nullopt when there is none for
  // this uid (never reconciled, or a CronJob of the same name before it).
  Result<std::optional<model::AccountingState>> LoadAccounting(const std::string& key,
                                                               const std::string& uid);
  // The CronJob and its Jobs into ctx (in.cron_job and in.jobs, or invalid; view_seq).
  Status ReadView(PassContext& ctx);

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
  // One Ingest at a time: priors are read before their commit. Stats() takes it to read a
  // CronJob's schedule.
  mutable std::mutex ingest_mu_;
  // What the handlers need of every object the view holds, as of the last committed Ingest
  // (guarded by ingest_mu_). The same facts ReadPrior reads from the ledger's view, kept here so
  // that handling an event costs no ledger read and no second JSON parse. Objects ingested before
  // this process started are read from the ledger once (a miss), then kept.
  // Keyed by "ns/name"; a compact form (Uid, no unused fields) because it holds an entry for
  // every CronJob and every Job the view holds (with the default history limits, up to four Jobs
  // per CronJob).
  std::unordered_map<std::string, KnownCronJob> known_cron_jobs_;
  std::unordered_map<std::string, KnownJob> known_jobs_;
  std::vector<std::thread> workers_;

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
  // The CronJob's schedule as the handlers know it (or as the view holds it), parsed.
  std::shared_ptr<const reconciler::Schedule> ScheduleOf(const std::string& key) const;
  mutable std::mutex expecting_mu_;
  std::unordered_map<std::string, Expecting> expecting_;    // guarded by expecting_mu_
  std::function<bool(const std::string& key)> key_filter_;  // guarded by expecting_mu_

  std::atomic<uint64_t> passes_{0};
  std::atomic<uint64_t> unrecorded_passes_{0};
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
