#pragma once

// Internal: the machinery behind Decide(). One SyncPass object runs one replay of the pass.

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "reconciler/decide.h"
#include "reconciler/schedule.h"
#include "reconciler/slot_accounting.h"

namespace cronledger::reconciler {

class SyncPass {
 public:
  explicit SyncPass(const SyncInputRef& in);
  Step Run();

 private:
  // kSuspend: an API call without a recorded outcome was reached (pending_ holds it).
  // kReturn: the step returned early, like a Go `return` from syncCronJob.
  enum class Flow { kContinue, kSuspend, kReturn };

  // --- plumbing (sync_pass.cc)
  // The recorded outcome (in the pass's input, not copied), or null when the call is pending.
  const model::ApiOutcome* Call(model::ApiVerb verb, model::ApiKind kind, const std::string& ns,
                                const std::string& name, model::Json object = nullptr);
  void Emit(const char* type, const std::string& reason, const std::string& message);
  model::Decision NewRecord(model::DecisionAction action) const;
  void DrainSlotRecords();
  bool HasJob(Time slot) const;
  Flow Fail(const std::string& error);
  Flow DeleteJob(const std::string& ns, const std::string& name, const std::string& uid,
                 bool* deleted);
  Flow Finish();

  // --- docs/semantics.md §5 and §6.1 (sync_pass.cc)
  Flow Cleanup();
  Flow RemoveOldest(std::vector<const model::Job*> jobs, int64_t limit);
  Flow ReconcileOwnedJobs();
  void RecordSuccess(const model::Job& job);
  Flow DropMissingActive();

  // --- docs/semantics.md §6.2-§6.13 (sync_schedule.cc)
  Flow Schedule();
  // ParseStandard(text, tzdb), through the options' schedule memo when there is one.
  Result<std::shared_ptr<const reconciler::Schedule>> Parse(std::string_view text) const;
  std::shared_ptr<const reconciler::Schedule> ParseQuietly() const;
  Flow CheckPreconditions();
  Flow ParseSchedule();
  Flow ActOnSlot(Time slot);
  Flow ReplaceActive(Time slot);
  Flow CreateJob(Time slot);
  Flow AdoptExisting(Time slot, const std::string& name, const model::Json** response);
  Flow Requeue();
  // Whether the next Call gets its object (DecideOptions::call_objects).
  bool NextCallNeedsObject() const;

  const SyncInputRef& in_;
  size_t next_outcome_ = 0;
  std::optional<model::ApiCall> pending_;
  // The CronJob the pass works on (docs/semantics.md §3 step 3): its metadata and spec are read
  // from `cj_` (the input, or after quirk Q1 the fresh copy in `fresh_`); all status changes go to
  // the copy `status_`. The input is never copied as a whole.
  const model::CronJob* cj_;
  std::optional<model::CronJob> fresh_;
  model::CronJobStatus status_;
  std::vector<const model::Job*> owned_;
  std::set<std::string_view> seen_uids_;  // of the input's Jobs, which outlive the pass
  std::shared_ptr<const reconciler::Schedule> schedule_;
  SlotAccountant accountant_;
  SyncResult out_;
  bool cleanup_update_ = false;  // flag A of docs/semantics.md §3
  bool sync_update_ = false;     // flag B of docs/semantics.md §3
  std::optional<Duration> requeue_;
  std::optional<std::string> sync_error_;
};

}  // namespace cronledger::reconciler
