#include "controller/controller_impl.h"

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "controller/local_zone.h"

namespace cronledger::controller {

Result<std::unique_ptr<Controller>> Controller::Open(const ControllerOptions& options,
                                                     store::Ledger& ledger, Actuator& actuator,
                                                     const WallClock& wall,
                                                     const MonotonicClock& mono,
                                                     const model::TimeZoneDb& tzdb) {
  if (options.workers < 1) return Status::InvalidArgument("controller: workers must be >= 1");
  CL_ASSIGN_OR_RETURN(std::string local_zone, LocalZoneName(tzdb, options.local_time_zone));
  ControllerOptions checked = options;
  checked.local_time_zone = std::move(local_zone);
  auto impl = std::make_unique<ControllerImpl>(checked, ledger, actuator, wall, mono, tzdb);
  CL_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<Controller>(std::move(impl));
}

ControllerImpl::ControllerImpl(const ControllerOptions& options, store::Ledger& ledger,
                               Actuator& actuator, const WallClock& wall,
                               const MonotonicClock& mono, const model::TimeZoneDb& tzdb)
    : options_(options),
      ledger_(ledger),
      actuator_(actuator),
      wall_(wall),
      tzdb_(tzdb),
      queue_(mono, options.rate_limiter) {}

ControllerImpl::~ControllerImpl() { Stop(); }

Status ControllerImpl::Init() {
  // Configuration that changes decisions is an input (rule 1): replay reads it from the log.
  const Time now = wall_.Now();
  store::UnitOfWork unit;
  unit.inputs.emplace_back(model::ConfigChange{now, "historyCleanup",
                                               options_.decide.history_cleanup ? "true" : "false"});
  // The zone's IANA name (checked by Open), not Local()->name(), which is always "Local".
  unit.inputs.emplace_back(model::ConfigChange{now, "localTimeZone", options_.local_time_zone});
  CL_RETURN_IF_ERROR(ledger_.Commit(std::move(unit)).status());
  // What earlier runs ingested: from here on, every watch event comes through Ingest.
  return view_.Load(ledger_);
}

Status ControllerImpl::EnqueueAll() {
  CL_ASSIGN_OR_RETURN(std::vector<store::ObjectEntry> entries, ledger_.ListCronJobEntries());
  for (const store::ObjectEntry& e : entries) {
    queue_.Add(e.namespace_ + "/" + e.name, trigger::kStartup);
  }
  return Status::Ok();
}

Status ControllerImpl::EnqueueWhere(const std::function<bool(const std::string& key)>& select) {
  CL_ASSIGN_OR_RETURN(std::vector<store::ObjectEntry> entries, ledger_.ListCronJobEntries());
  for (const store::ObjectEntry& e : entries) {
    std::string key = e.namespace_ + "/" + e.name;
    if (select(key)) queue_.Add(key, trigger::kStartup);
  }
  return Status::Ok();
}

void ControllerImpl::SetKeyFilter(std::function<bool(const std::string& key)> owns) {
  {
    std::lock_guard lock(expecting_mu_);
    key_filter_ = owns;
  }
  queue_.SetFilter(std::move(owns));
}

void ControllerImpl::Process(const WorkItem& item) {
  // A key made ready without a reason can only have come from a plain timer.
  const std::string why = item.reason.empty() ? std::string(trigger::kTimer) : item.reason;
  const PassReport report = RunPass(item.key, why);
  // docs/semantics.md §2 worker loop: error -> rate-limited retry; requeue -> forget the back-off
  // and come back after the delay; neither -> drop the key until a watch event adds it again.
  if (report.error) {
    ++errors_;
    queue_.AddRateLimited(item.key, trigger::kRetry);
  } else if (report.requeue_after) {
    queue_.Forget(item.key);
    queue_.AddAfter(item.key, *report.requeue_after, trigger::kTimer);
  }
  TrackExpected(item.key, report);
  queue_.Done(item.key);
}

void ControllerImpl::TrackExpected(const std::string& key, const PassReport& report) {
  std::lock_guard lock(expecting_mu_);
  if (report.error) return;
  if (report.ran && report.requeue_after) {
    const Time now = wall_.Now();
    expecting_.insert_or_assign(key, Expecting{now, now.Add(*report.requeue_after)});
  } else {
    expecting_.erase(key);
  }
}

std::shared_ptr<const reconciler::Schedule> ControllerImpl::ScheduleOf(
    const std::string& key) const {
  const size_t slash = key.find('/');
  if (slash == std::string::npos) return nullptr;
  const TypedView::ObjectPtr object =
      view_.Find(model::ObjectKind::kCronJob, std::string_view(key).substr(0, slash),
                 std::string_view(key).substr(slash + 1));
  if (object == nullptr || !object->cron_job) return nullptr;
  const model::CronJobSpec& spec = object->cron_job->spec;
  auto schedule =
      schedule_memo_.Get(reconciler::FormatSchedule(spec.schedule, spec.time_zone).text, tzdb_);
  return schedule.ok() ? std::move(*schedule) : nullptr;
}

Result<size_t> ControllerImpl::RunReady() {
  size_t passes = 0;
  while (auto item = queue_.GetItem()) {
    Process(*item);
    ++passes;
  }
  return passes;
}

std::optional<int64_t> ControllerImpl::NextDueNanos() { return queue_.NextDueNanos(); }

void ControllerImpl::WorkerLoop() {
  while (auto item = queue_.WaitGet()) Process(*item);
}

void ControllerImpl::Start() {
  if (!workers_.empty()) return;
  queue_.Reopen();
  for (int i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

void ControllerImpl::Stop() {
  if (workers_.empty()) return;
  // Passes in flight finish (their records are committed); queued keys stay for the next Start.
  queue_.ShutDown();
  for (std::thread& t : workers_) t.join();
  workers_.clear();
  queue_.Reopen();
  // Not acting: nothing is expected of this process until the next Start's passes.
  std::lock_guard lock(expecting_mu_);
  expecting_.clear();
}

ControllerStats ControllerImpl::Stats() const {
  ControllerStats s;
  s.passes = passes_.load();
  s.unrecorded_passes = unrecorded_passes_.load();
  s.echoes_skipped = echoes_skipped_.load();
  s.errors = errors_.load();
  s.api_calls = api_calls_.load();
  s.decisions = decisions_.load();
  s.events_ingested = events_ingested_.load();
  s.queue_ready = queue_.ReadyLen();
  s.queue_delayed = queue_.DelayedLen();
  // Unaccounted fire times: only CronJobs whose requeue is overdue are looked at (a requeue comes
  // due just after the next fire time), so a controller that keeps up parses no schedule here.
  const Time cutoff = wall_.Now().Add(-kUnaccountedGrace);
  std::vector<std::pair<std::string, Time>> overdue;
  {
    std::lock_guard lock(expecting_mu_);
    for (const auto& [key, e] : expecting_) {
      if (e.due.Add(-std::chrono::seconds(1)) <= cutoff && (!key_filter_ || key_filter_(key))) {
        overdue.emplace_back(key, e.settled);
      }
    }
  }
  // At most this many per CronJob (a per-minute schedule for a week), so a scrape stays cheap.
  constexpr uint64_t kMaxPerCronJob = 10'080;
  for (const auto& [key, settled] : overdue) {
    std::shared_ptr<const reconciler::Schedule> schedule = ScheduleOf(key);
    if (schedule == nullptr) continue;
    uint64_t n = 0;
    for (std::optional<Time> t = schedule->Next(settled); t && *t <= cutoff && n < kMaxPerCronJob;
         t = schedule->Next(*t)) {
      ++n;
    }
    s.unaccounted_fire_times += n;
  }
  return s;
}

}  // namespace cronledger::controller
