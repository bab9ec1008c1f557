// docs/semantics.md §6.2-§6.13: from the deletion check to the created Job and the requeue delay.
#include <algorithm>

#include "reconciler/cronjob_time.h"
#include "reconciler/job_builder.h"
#include "reconciler/schedule_memo.h"
#include "reconciler/sync_pass.h"

namespace cronledger::reconciler {
namespace {

using model::ApiKind;
using model::ApiVerb;
namespace skip = model::skip_reason;

constexpr const char* kNormal = "Normal";
constexpr const char* kWarning = "Warning";

bool InActiveByName(const model::CronJobStatus& status, const std::string& ns,
                    const std::string& name) {
  return std::any_of(
      status.active.begin(), status.active.end(),
      [&](const model::ObjectReference& r) { return r.name == name && r.namespace_ == ns; });
}

std::string BlockKey(std::string_view reason, const model::CronJobSpec& spec) {
  return std::string(reason) + "|" + spec.schedule + "|" + spec.time_zone.value_or("<none>");
}

}  // namespace

SyncPass::Flow SyncPass::Schedule() {
  Flow flow = CheckPreconditions();
  if (flow == Flow::kContinue) flow = ParseSchedule();
  if (flow != Flow::kContinue) return flow;
  // docs/semantics.md §6.6 / §7.2: the slot to act on, computed WITH the deadline.
  auto next = NextScheduleTime(*cj_, status_, in_.now, *schedule_);
  if (!next.ok()) {
    const std::string msg =
        "invalid schedule: " + cj_->spec.schedule + " : " + next.status().message();
    Emit(kWarning, "InvalidSchedule", msg);
    accountant_.Block(std::string(skip::kInvalidSchedule),
                      BlockKey(skip::kInvalidSchedule, cj_->spec), msg);
    return Flow::kReturn;
  }
  accountant_.Unblock();
  if (!next->scheduled) {
    // Nothing to start: the due fire times were excluded by the deadline (TooLate), or the
    // missed-count estimate overshot an irregular schedule (docs/semantics.md §7.1).
    std::optional<Time> too_late;
    if (const auto d = cj_->spec.starting_deadline_seconds) too_late = in_.now.Add(-GoSeconds(*d));
    accountant_.EndOlderKeepLatest(*schedule_, std::string(skip::kSuperseded), too_late);
    return Requeue();
  }
  if (next->too_many_missed) {
    Emit(kWarning, "TooManyMissedTimes",
         "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check "
         "clock skew");
  }
  accountant_.Pick(*schedule_, *next->scheduled, next->too_many_missed);
  return ActOnSlot(*next->scheduled);
}

Result<std::shared_ptr<const reconciler::Schedule>> SyncPass::Parse(std::string_view text) const {
  if (in_.options.schedule_memo != nullptr) return in_.options.schedule_memo->Get(text, *in_.tzdb);
  CL_ASSIGN_OR_RETURN(std::unique_ptr<reconciler::Schedule> parsed, ParseStandard(text, *in_.tzdb));
  return std::shared_ptr<const reconciler::Schedule>(std::move(parsed));
}

std::shared_ptr<const reconciler::Schedule> SyncPass::ParseQuietly() const {
  // For accounting only (deletion, suspend): evaluate the schedule without upstream's events.
  if (cj_->spec.time_zone && !in_.tzdb->Load(*cj_->spec.time_zone).ok()) return nullptr;
  auto parsed = Parse(FormatSchedule(cj_->spec.schedule, cj_->spec.time_zone).text);
  return parsed.ok() ? std::move(*parsed) : nullptr;
}

// docs/semantics.md §6.2-§6.4, in upstream's order: deletion, time zone, suspend.
SyncPass::Flow SyncPass::CheckPreconditions() {
  if (cj_->metadata.deletion_timestamp) {
    if (auto quiet = ParseQuietly()) accountant_.EndAllDue(*quiet, std::string(skip::kDeleting));
    return Flow::kReturn;
  }
  if (Status zone = CheckTimeZone(cj_->spec.time_zone, *in_.tzdb); !zone.ok()) {
    const std::string& msg = zone.message();
    Emit(kWarning, "UnknownTimeZone", msg);
    accountant_.Block(std::string(skip::kUnknownTimeZone),
                      BlockKey(skip::kUnknownTimeZone, cj_->spec), msg);
    return Flow::kReturn;
  }
  if (cj_->spec.suspend.value_or(false)) {
    // Due fire times are recorded, not lost: older ones end as Suspended now, the latest stays
    // pending because upstream starts it on resume if it is still the most recent one.
    if (auto quiet = ParseQuietly()) {
      accountant_.EndOlderKeepLatest(*quiet, std::string(skip::kSuspended));
    }
    accountant_.Suspend();
    return Flow::kReturn;
  }
  return Flow::kContinue;
}

// docs/semantics.md §6.5: a schedule containing "TZ" is used verbatim and spec.timeZone is ignored.
SyncPass::Flow SyncPass::ParseSchedule() {
  const FormattedSchedule formatted = FormatSchedule(cj_->spec.schedule, cj_->spec.time_zone);
  if (formatted.contains_tz) {
    Emit(kWarning, "UnsupportedSchedule",
         "CRON_TZ or TZ used in schedule " + GoQuote(cj_->spec.schedule) +
             " is not officially supported, see "
             "https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more "
             "details");
  }
  auto parsed = Parse(formatted.text);
  if (!parsed.ok()) {
    const std::string msg =
        "unparseable schedule: " + GoQuote(cj_->spec.schedule) + " : " + parsed.status().message();
    Emit(kWarning, "UnparseableSchedule", msg);
    accountant_.Block(std::string(skip::kInvalidSchedule),
                      BlockKey(skip::kInvalidSchedule, cj_->spec), msg);
    return Flow::kReturn;
  }
  schedule_ = std::move(*parsed);
  return Flow::kContinue;
}

SyncPass::Flow SyncPass::Requeue() {
  // docs/semantics.md §7.3: computed without the deadline, from the status as it is now.
  requeue_ = NextScheduleTimeDuration(*cj_, status_, in_.now, *schedule_);
  return Flow::kReturn;
}

// docs/semantics.md §6.7-§6.9: too late, already processed, Forbid.
SyncPass::Flow SyncPass::ActOnSlot(Time slot) {
  const auto deadline = cj_->spec.starting_deadline_seconds;
  if (deadline && slot.Add(GoSeconds(*deadline)) < in_.now) {
    // Unreachable for deadlines >= 0 (docs/semantics.md §6.7); kept for fidelity.
    Emit(kWarning, "MissSchedule",
         "Missed scheduled time to start a job: " + FormatRfc1123Z(slot, 0));
    accountant_.Pend(slot, std::string(skip::kTooLate));
    return Requeue();
  }
  const std::string name = JobName(cj_->metadata.name, slot);
  if (InActiveByName(status_, cj_->metadata.namespace_, name) ||
      status_.last_schedule_time == slot) {
    // Already processed, so a Job was created for it. When no completed pass accounted it (the
    // pass that created it was cut off after its status write), this pass records it: createJob
    // (adopted). Upstream's behaviour is unchanged: nothing is called.
    if (!accountant_.AdoptNow(slot)) accountant_.Pend(slot, std::string(skip::kAlreadyProcessed));
    return Requeue();
  }
  if (cj_->spec.concurrency_policy == "Forbid" && !status_.active.empty()) {
    Emit(kNormal, "JobAlreadyActive",
         "Not starting job because prior execution is running and concurrency policy is Forbid");
    // Not terminal: once the running job ends the slot may still start (docs/semantics.md §6.9).
    accountant_.Pend(slot, std::string(skip::kConcurrencyForbid));
    return Requeue();
  }
  if (cj_->spec.concurrency_policy == "Replace") {
    Flow flow = ReplaceActive(slot);
    if (flow != Flow::kContinue) return flow;
  }
  return CreateJob(slot);
}

// docs/semantics.md §6.10: delete every active job, removing entries by the UID of the job fetched.
SyncPass::Flow SyncPass::ReplaceActive(Time slot) {
  const std::vector<model::ObjectReference> snapshot = status_.active;
  for (const auto& ref : snapshot) {
    auto got = Call(ApiVerb::kGet, ApiKind::kJob, ref.namespace_, ref.name);
    if (!got) return Flow::kSuspend;
    std::string err = got->message;
    std::optional<model::Job> job;
    if (got->ok()) {
      auto decoded = model::DecodeJob(got->object);
      if (decoded.ok())
        job = std::move(*decoded);
      else
        err = "decoding the Job from the API: " + decoded.status().message();
    }
    if (!job) {
      Emit(kWarning, "FailedGet", "Get job: " + err);
      accountant_.Pend(slot, std::string(skip::kSuperseded));
      return Fail(err);
    }
    const auto& meta = job->metadata;
    const std::string ns = meta.namespace_.empty() ? ref.namespace_ : meta.namespace_;
    const std::string name = meta.name.empty() ? ref.name : meta.name;
    bool deleted = false;
    if (DeleteJob(ns, name, meta.uid, &deleted) == Flow::kSuspend) return Flow::kSuspend;
    if (!deleted) {
      accountant_.Pend(slot, std::string(skip::kSuperseded));
      return Fail("could not replace job " + ns + "/" + name);
    }
    sync_update_ = true;
  }
  return Flow::kContinue;
}

}  // namespace cronledger::reconciler
