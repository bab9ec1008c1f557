// docs/semantics.md §6.11-§6.13: build the Job, create it, handle the create outcomes, record the
// result.
#include "reconciler/cronjob_time.h"
#include "reconciler/job_builder.h"
#include "reconciler/sync_pass.h"

namespace cronledger::reconciler {
namespace {

using model::ApiKind;
using model::ApiVerb;
namespace skip = model::skip_reason;

bool InActive(const model::CronJobStatus& status, const std::string& uid) {
  for (const auto& r : status.active) {
    if (r.uid == uid) return true;
  }
  return false;
}

}  // namespace

SyncPass::Flow SyncPass::CreateJob(Time slot) {
  auto request = BuildJob(*cj_, slot, *in_.tzdb);
  if (!request.ok()) {
    accountant_.Pend(slot, std::string(skip::kSuperseded));
    return Fail(request.status().message());
  }
  const std::string name = JobName(cj_->metadata.name, slot);
  auto created = Call(ApiVerb::kCreate, ApiKind::kJob, cj_->metadata.namespace_, name,
                      NextCallNeedsObject() ? *request : model::Json());
  if (!created) return Flow::kSuspend;
  const model::Json* response = nullptr;
  bool adopted = false;
  if (created->reason == model::api_reason::kNamespaceTerminating) {
    // Any creation will fail; no event (docs/semantics.md §6.12).
    accountant_.Pend(slot, std::string(skip::kDeleting));
    return Fail(created->message);
  } else if (created->reason == model::api_reason::kAlreadyExists) {
    Flow flow = AdoptExisting(slot, name, &response);
    if (flow != Flow::kContinue) return flow;
    adopted = true;
  } else if (!created->ok()) {
    Emit("Warning", "FailedCreate", "Error creating job: " + created->message);
    accountant_.Pend(slot, std::string(skip::kSuperseded));
    return Fail(created->message);
  } else {
    response = &created->object;
  }
  auto meta = model::DecodeJobMetadata(*response);  // all the pass reads of the created Job
  if (!meta.ok()) {
    accountant_.Pend(slot, std::string(skip::kSuperseded));
    return Fail("unable to make object reference for job for " + cj_->metadata.Key());
  }
  if (accountant_.Created(slot)) {
    model::Decision d = NewRecord(model::DecisionAction::kCreateJob);
    d.scheduled_time = slot;
    d.job_name = name;
    d.job_object = std::move(*request);  // not read again
    if (adopted) d.message = "the Job already existed and is controlled by this CronJob";
    DrainSlotRecords();
    out_.decisions.push_back(std::move(d));
  }
  // No SuccessfulCreate (and no skew metric) on the AlreadyExists path (docs/semantics.md §6.12,
  // §11).
  if (!adopted) Emit("Normal", "SuccessfulCreate", "Created job " + name);
  // docs/semantics.md §6.13 / §8: the reference comes from the API response; lastScheduleTime = the
  // slot.
  model::ObjectReference ref;
  ref.api_version = "batch/v1";
  ref.kind = "Job";
  ref.namespace_ = std::move(meta->namespace_);
  ref.name = std::move(meta->name);
  ref.uid = std::move(meta->uid);
  ref.resource_version = std::move(meta->resource_version);
  status_.active.push_back(std::move(ref));
  status_.last_schedule_time = slot;
  sync_update_ = true;
  return Requeue();
}

// AlreadyExists: fetch the Job by the requested name in the CronJob's namespace and continue with
// it only if this CronJob controls it and it is not already in the active list. The early returns
// carry no requeue delay (docs/semantics.md §6.12).
SyncPass::Flow SyncPass::AdoptExisting(Time slot, const std::string& name,
                                       const model::Json** response) {
  auto got = Call(ApiVerb::kGet, ApiKind::kJob, cj_->metadata.namespace_, name);
  if (!got) return Flow::kSuspend;
  if (!got->ok()) {
    accountant_.Pend(slot, std::string(skip::kSuperseded));
    return Fail(got->message);
  }
  auto meta = model::DecodeJobMetadata(got->object);
  if (!meta.ok()) {
    accountant_.Pend(slot, std::string(skip::kSuperseded));
    return Fail("decoding the Job from the API: " + meta.status().message());
  }
  const model::OwnerReference* owner = meta->ControllerRef();
  if (owner == nullptr || owner->uid != cj_->metadata.uid || InActive(status_, meta->uid)) {
    // Another actor manages it, or it is already tracked.
    accountant_.Pend(slot, std::string(skip::kAlreadyProcessed));
    return Flow::kReturn;
  }
  *response = &got->object;
  return Flow::kContinue;
}

}  // namespace cronledger::reconciler
