#include "reconciler/sync_pass.h"

#include <algorithm>
#include <utility>

#include "model/job_fields.h"
#include "reconciler/job_builder.h"

namespace cronledger::reconciler {
namespace {

using model::ApiKind;
using model::ApiVerb;
using model::DecisionAction;

constexpr const char* kNormal = "Normal";
constexpr const char* kWarning = "Warning";

bool InActive(const model::CronJobStatus& status, const std::string& uid) {
  return std::any_of(status.active.begin(), status.active.end(),
                     [&](const model::ObjectReference& r) { return r.uid == uid; });
}

void RemoveActive(model::CronJobStatus* status, const std::string& uid) {
  auto& active = status->active;
  active.erase(std::remove_if(active.begin(), active.end(),
                              [&](const model::ObjectReference& r) { return r.uid == uid; }),
               active.end());
}

Time DefaultAnchor(const model::CronJob& cj) {
  if (cj.status.last_schedule_time) return *cj.status.last_schedule_time;
  return cj.metadata.creation_timestamp.value_or(Time::GoZero());
}

}  // namespace

model::ApiOutcome RecordedOutcome(const model::ApiCall& call, model::ApiOutcome outcome) {
  switch (call.verb) {
    case ApiVerb::kGet:
      break;
    case ApiVerb::kUpdateStatus:
    case ApiVerb::kDelete:
      outcome.object = nullptr;  // the pass reads reason and message only
      break;
    case ApiVerb::kCreate: {
      if (call.kind != ApiKind::kJob || !outcome.ok()) break;
      // The create path reads the object through DecodeJobMetadata, and of that only what
      // CreatedJobAsRead keeps. apiVersion and kind decoded: strings, absent or null ("").
      auto meta = model::DecodeJobMetadata(outcome.object);
      if (!meta.ok()) break;
      const auto text = [&outcome](const char* key) {
        auto it = outcome.object.find(key);
        return it != outcome.object.end() && it->is_string() ? it->get<std::string>()
                                                             : std::string();
      };
      outcome.object = model::CreatedJobAsRead(text("apiVersion"), text("kind"), std::move(*meta));
      break;
    }
  }
  return outcome;
}

Step Decide(const SyncInput& in) {
  std::vector<const model::Job*> jobs;
  jobs.reserve(in.jobs.size());
  for (const model::Job& job : in.jobs) jobs.push_back(&job);
  return Decide(
      SyncInputRef{&in.cron_job, jobs, in.now, in.options, in.tzdb, &in.accounting, in.outcomes});
}

Step Decide(const SyncInputRef& in) {
  CL_CHECK(in.tzdb != nullptr);
  CL_CHECK(in.cron_job != nullptr && in.accounting != nullptr);
  return SyncPass(in).Run();
}

SyncPass::SyncPass(const SyncInputRef& in)
    : in_(in),
      cj_(in.cron_job),
      status_(in.cron_job->status),
      accountant_(*in.accounting, DefaultAnchor(*in.cron_job), in.now) {
  // A pass records a few decisions (a requeue, a status update, a fire time and its Job or
  // skip, events): room for the usual ones, so that they are not moved as the vector grows.
  out_.decisions.reserve(4);
}

Step SyncPass::Run() {
  // docs/semantics.md §3: owned jobs, then cleanup (flag A), then syncCronJob (flag B) on the same
  // list.
  owned_ = OwnedJobs(*in_.cron_job, in_.jobs);
  if (in_.accounting->accounted_through) {
    // Not on a first pass: fire times with a Job before cronledger's first pass are taken as
    // handled (the initial anchor), and `cronledger decide` without accounting is unchanged.
    accountant_.AdoptExistingJobs([this](Time slot) { return HasJob(slot); });
  }
  Flow flow = Flow::kContinue;
  if (in_.options.history_cleanup) flow = Cleanup();
  if (flow == Flow::kContinue) flow = ReconcileOwnedJobs();
  if (flow == Flow::kContinue) flow = DropMissingActive();
  if (flow == Flow::kContinue) flow = Schedule();
  if (flow != Flow::kSuspend) flow = Finish();
  if (flow == Flow::kSuspend) return Step{std::move(pending_), {}};
  return Step{std::nullopt, std::move(out_)};
}

SyncPass::Flow SyncPass::Finish() {
  DrainSlotRecords();
  out_.status_changed = cleanup_update_ || sync_update_;
  out_.accounting = accountant_.Finish();
  if (out_.status_changed) {
    model::Json object;
    if (NextCallNeedsObject()) {
      if (in_.options.call_objects == DecideOptions::CallObjects::kPending) {
        // The driver writes the status into the CronJob as it read it (DecideOptions).
        object = {{"status", model::EncodeCronJobStatus(status_)}};
      } else {
        model::CronJob written = *cj_;
        written.status = status_;
        object = model::EncodeCronJob(written);
      }
    }
    auto outcome = Call(ApiVerb::kUpdateStatus, ApiKind::kCronJob, cj_->metadata.namespace_,
                        cj_->metadata.name, std::move(object));
    if (!outcome) return Flow::kSuspend;
    if (!outcome->ok()) {
      // docs/semantics.md §3 step 6: a failed status write wins over any requeue delay.
      out_.error = outcome->message;
      out_.status = std::move(status_);  // the pass ends here
      return Flow::kReturn;
    }
    model::Decision d = NewRecord(DecisionAction::kUpdateStatus);
    d.status = model::EncodeCronJobStatus(status_);
    out_.decisions.push_back(std::move(d));
  }
  if (requeue_) {
    out_.requeue_after = requeue_;
    model::Decision d = NewRecord(DecisionAction::kRequeue);
    d.requeue_after = requeue_;
    out_.decisions.push_back(std::move(d));
  } else {
    out_.error = sync_error_;
  }
  out_.status = std::move(status_);  // the pass ends here
  return Flow::kReturn;
}

const model::ApiOutcome* SyncPass::Call(ApiVerb verb, ApiKind kind, const std::string& ns,
                                        const std::string& name, model::Json object) {
  model::ApiCall call{verb, kind, ns, name, std::move(object)};
  if (next_outcome_ >= in_.outcomes.size()) {
    pending_ = std::move(call);
    return nullptr;
  }
  out_.actions.push_back(std::move(call));
  return &in_.outcomes[next_outcome_++];
}

bool SyncPass::NextCallNeedsObject() const {
  switch (in_.options.call_objects) {
    case DecideOptions::CallObjects::kAll:
      return true;
    case DecideOptions::CallObjects::kPending:
      return next_outcome_ >= in_.outcomes.size();
    case DecideOptions::CallObjects::kNone:
      return false;
  }
  return false;
}

model::Decision SyncPass::NewRecord(DecisionAction action) const {
  model::Decision d;
  d.time = in_.now;
  d.cron_job = {in_.cron_job->metadata.namespace_, in_.cron_job->metadata.name,
                in_.cron_job->metadata.uid};
  d.action = action;
  d.policy = model::SnapshotPolicy(in_.cron_job->spec);
  return d;
}

void SyncPass::Emit(const char* type, const std::string& reason, const std::string& message) {
  DrainSlotRecords();
  out_.events.push_back({type, reason, message});
  model::Decision d = NewRecord(DecisionAction::kEvent);
  d.reason = reason;
  d.event_type = type;
  d.message = message;
  out_.decisions.push_back(std::move(d));
}

// A Job exists for the fire time, whether or not any pass accounted it: the owned Jobs of the
// cache by the slot's deterministic name (docs/semantics.md §8), or the CronJob's status
// (docs/semantics.md §6.8).
bool SyncPass::HasJob(Time slot) const {
  const std::string name = JobName(in_.cron_job->metadata.name, slot);
  if (status_.last_schedule_time == slot) return true;
  for (const auto& r : status_.active) {
    if (r.name == name && r.namespace_ == cj_->metadata.namespace_) return true;
  }
  return std::any_of(owned_.begin(), owned_.end(),
                     [&](const model::Job* j) { return j->metadata.name == name; });
}

void SyncPass::DrainSlotRecords() {
  for (auto& r : accountant_.TakeRecords()) {
    model::Decision d = NewRecord(r.action);
    d.scheduled_time = r.scheduled_time;
    d.range_end = r.range_end;
    d.reason = std::move(r.reason);
    if (r.scheduled_time && r.action != DecisionAction::kSkipped) {
      d.job_name = JobName(in_.cron_job->metadata.name, *r.scheduled_time);
    }
    if (r.scheduled_time && r.action == DecisionAction::kCreateJob) {
      // Adopted: the Job as this CronJob requests it for the fire time (the one that exists
      // carries the same name; its template may have been older).
      auto request = BuildJob(*cj_, *r.scheduled_time, *in_.tzdb);
      if (request.ok()) d.job_object = std::move(*request);
    }
    if (!r.message.empty()) d.message = std::move(r.message);
    out_.decisions.push_back(std::move(d));
  }
}

SyncPass::Flow SyncPass::Fail(const std::string& error) {
  sync_error_ = error;
  return Flow::kReturn;
}

SyncPass::Flow SyncPass::DeleteJob(const std::string& ns, const std::string& name,
                                   const std::string& uid, bool* deleted) {
  *deleted = false;
  auto outcome = Call(ApiVerb::kDelete, ApiKind::kJob, ns, name);
  if (!outcome) return Flow::kSuspend;
  if (!outcome->ok()) {
    Emit(kWarning, "FailedDelete", "Deleted job: " + outcome->message);
    return Flow::kContinue;
  }
  RemoveActive(&status_, uid);
  model::Decision d = NewRecord(DecisionAction::kDeleteJob);
  d.job_name = name;
  out_.decisions.push_back(std::move(d));
  Emit(kNormal, "SuccessfulDelete", "Deleted job " + name);
  *deleted = true;
  return Flow::kContinue;
}

// docs/semantics.md §5: history cleanup runs before scheduling so that a failing create cannot
// block it.
SyncPass::Flow SyncPass::Cleanup() {
  const auto& spec = cj_->spec;
  if (!spec.successful_jobs_history_limit && !spec.failed_jobs_history_limit) {
    return Flow::kContinue;
  }
  std::vector<const model::Job*> succeeded;
  std::vector<const model::Job*> failed;
  for (const model::Job* job : owned_) {
    const auto condition = model::FinishedCondition(*job);
    if (condition == "Complete") succeeded.push_back(job);
    if (condition == "Failed") failed.push_back(job);
  }
  Flow flow = Flow::kContinue;
  if (spec.successful_jobs_history_limit) {
    flow = RemoveOldest(std::move(succeeded), *spec.successful_jobs_history_limit);
  }
  if (flow == Flow::kContinue && spec.failed_jobs_history_limit) {
    flow = RemoveOldest(std::move(failed), *spec.failed_jobs_history_limit);
  }
  return flow;
}

SyncPass::Flow SyncPass::RemoveOldest(std::vector<const model::Job*> jobs, int64_t limit) {
  const int64_t size = static_cast<int64_t>(jobs.size());
  // A negative limit (rejected by API validation) would index past the list in Go; clamp.
  const int64_t excess = std::min(size, size - limit);
  if (excess <= 0) return Flow::kContinue;
  std::stable_sort(jobs.begin(), jobs.end(), [](const model::Job* a, const model::Job* b) {
    return JobStartedBefore(*a, *b);
  });
  for (int64_t i = 0; i < excess; ++i) {
    const auto& meta = jobs[static_cast<size_t>(i)]->metadata;
    bool deleted = false;
    if (DeleteJob(meta.namespace_, meta.name, meta.uid, &deleted) == Flow::kSuspend) {
      return Flow::kSuspend;
    }
    if (deleted) cleanup_update_ = true;
  }
  return Flow::kContinue;
}

// docs/semantics.md §6.1, first loop: owned jobs from the cache against the active list.
SyncPass::Flow SyncPass::ReconcileOwnedJobs() {
  for (const model::Job* job : owned_) {
    const std::string& uid = job->metadata.uid;
    seen_uids_.insert(uid);
    const bool found = InActive(status_, uid);
    const auto condition = model::FinishedCondition(*job);
    if (!found && !condition) {
      auto outcome =
          Call(ApiVerb::kGet, ApiKind::kCronJob, cj_->metadata.namespace_, cj_->metadata.name);
      if (!outcome) return Flow::kSuspend;
      if (!outcome->ok()) return Fail(outcome->message);
      auto fresh = model::DecodeCronJob(outcome->object);
      if (!fresh.ok())
        return Fail("decoding the CronJob from the API: " + fresh.status().message());
      if (InActive(fresh->status, uid)) {
        // Quirk Q1 (docs/semantics.md §12): from here on upstream works on the fresh copy.
        // cronledger also WRITES that copy (upstream writes its stale one), see docs/reconciler.md.
        fresh_ = std::move(*fresh);
        cj_ = &*fresh_;
        status_ = fresh_->status;
        continue;
      }
      Emit(kWarning, "UnexpectedJob",
           "Saw a job that the controller did not create or forgot: " + job->metadata.name);
    } else if (found && condition) {
      RemoveActive(&status_, uid);
      Emit(kNormal, "SawCompletedJob",
           "Saw completed job: " + job->metadata.name + ", condition: " + *condition);
      sync_update_ = true;
    }
    if (condition == "Complete") RecordSuccess(*job);
  }
  return Flow::kContinue;
}

// lastSuccessfulTime only moves forward, but is first set even from an absent completionTime
// (docs/semantics.md §6.1, §12); the newest upstream does this in the same pass that removes the
// job.
void SyncPass::RecordSuccess(const model::Job& job) {
  auto& last = status_.last_successful_time;
  const auto& completed = job.status.completion_time;
  if (!last) {
    last = completed;
    sync_update_ = true;
  }
  if (completed && last && *completed > *last) {
    last = completed;
    sync_update_ = true;
  }
}

// docs/semantics.md §6.1, second loop: active entries the cache did not show are checked with a
// fresh GET.
SyncPass::Flow SyncPass::DropMissingActive() {
  // Usually the cache showed them all: then there is nothing to check (and nothing to copy).
  const auto unseen = [&](const model::ObjectReference& ref) {
    return seen_uids_.count(ref.uid) == 0;
  };
  if (std::none_of(status_.active.begin(), status_.active.end(), unseen)) return Flow::kContinue;
  const std::vector<model::ObjectReference> snapshot = status_.active;
  for (const auto& ref : snapshot) {
    if (seen_uids_.count(ref.uid) != 0) continue;
    auto outcome = Call(ApiVerb::kGet, ApiKind::kJob, ref.namespace_, ref.name);
    if (!outcome) return Flow::kSuspend;
    if (outcome->reason == model::api_reason::kNotFound) {
      Emit(kNormal, "MissingJob", "Active job went missing: " + ref.name);
      RemoveActive(&status_, ref.uid);
      sync_update_ = true;
    } else if (!outcome->ok()) {
      return Fail(outcome->message);
    }
  }
  return Flow::kContinue;
}

}  // namespace cronledger::reconciler
