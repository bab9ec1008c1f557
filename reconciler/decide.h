#pragma once

// decide(): one upstream `sync(key)` pass (docs/semantics.md §3-§8) as a pure, replayable state
// machine.
//
// The upstream pass interleaves API calls with its decisions. Decide() re-runs the pass from the
// start every time it is called, answering each API call it reaches with the next recorded
// outcome from `SyncInput::outcomes`. When it reaches a call that has no recorded outcome yet it
// stops and returns that call; the driver performs it, appends the outcome, and calls Decide()
// again. When the pass completes it returns the final result. The same input always gives the
// same output (docs/design.md rules 2 and 4): no clocks, I/O, randomness or unordered iteration.
//
//   Step s = Decide(in);
//   while (s.next_call) { in.outcomes.push_back(Perform(*s.next_call)); s = Decide(in); }

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/api_call.h"
#include "model/decision.h"
#include "model/objects.h"
#include "model/time.h"
#include "model/timezone.h"

namespace cronledger::reconciler {

class ScheduleMemo;

struct DecideOptions {
  // Run history cleanup (docs/semantics.md §5) before scheduling. Default: true.
  bool history_cleanup = true;
  // Which create and updateStatus calls get their ApiCall::object: all (SyncResult::actions and
  // the pending call), only the pending one (a driver that sends it and keeps nothing else: the
  // controller, which would otherwise encode a body it drops each time Decide runs the pass
  // again), or none (replay, which compares decisions and never sends the calls). With kPending,
  // a pending status write's object is {"status": <the CronJob's new status>} alone: the driver
  // writes it into the CronJob as it read it (the controller: the bytes the ledger keeps), so
  // the input's CronJob may be the decoded fields of model/job_fields.h. Nothing else changes:
  // the decisions are the same. Default: kAll.
  enum class CallObjects { kAll, kPending, kNone };
  CallObjects call_objects = CallObjects::kAll;
  // Where parsed schedules are looked up and kept (reconciler/schedule_memo.h); null parses the
  // schedule on every pass. Not owned; must outlive the call, and the tz database must outlive
  // the memo. The decisions are the same with and without one.
  ScheduleMemo* schedule_memo = nullptr;
};

// A Kubernetes Event recorded on the CronJob (docs/semantics.md §10).
struct Event {
  std::string type;  // "Normal" | "Warning"
  std::string reason;
  std::string message;
  friend bool operator==(const Event&, const Event&) = default;
};

struct SyncInput {
  model::CronJob cron_job;       // from the informer cache
  std::vector<model::Job> jobs;  // the Jobs of the CronJob's namespace from the cache
  Time now;                      // read once by the driver and recorded
  DecideOptions options;
  // The tz database; its Local() is Go's Local for schedules without a zone. Not owned; must
  // outlive the call.
  const model::TimeZoneDb* tzdb = nullptr;
  model::AccountingState accounting;        // the per-CronJob ledger bookkeeping (input)
  std::vector<model::ApiOutcome> outcomes;  // outcomes of the calls already made in this pass
};

// SyncInput without ownership (replay reads the objects from its versioned view and does not
// copy them): the same pass, the same result. Every pointer must outlive the Decide() call.
struct SyncInputRef {
  const model::CronJob* cron_job = nullptr;
  std::span<const model::Job* const> jobs;
  Time now;
  DecideOptions options;
  const model::TimeZoneDb* tzdb = nullptr;
  const model::AccountingState* accounting = nullptr;
  std::span<const model::ApiOutcome> outcomes;
};

struct SyncResult {
  std::vector<model::ApiCall> actions;  // the API calls of the pass, in the order performed
  std::vector<Event> events;
  model::CronJobStatus status;  // the status after the pass (written or not)
  bool status_changed = false;  // an UpdateStatus call was made (docs/semantics.md §3 step 6)
  std::optional<Duration> requeue_after;
  std::optional<std::string> error;  // the pass failed: retry with back-off
  // The records this pass appends to the ledger; cause and seq are left for the driver.
  std::vector<model::Decision> decisions;
  model::AccountingState accounting;  // the bookkeeping after the pass (output)
};

struct Step {
  // Set while the pass needs an API call performed; `result` is then meaningless.
  std::optional<model::ApiCall> next_call;
  SyncResult result;
};

// The part of an API answer a pass reads, which is all a driver needs to keep of it to replay the
// pass (the ledger's ActionOutcome): a pass decides the same with `outcome` or with its recorded
// form. A created Job keeps apiVersion, kind and metadata's name, namespace, uid and
// resourceVersion (when its metadata decodes; otherwise the whole object, whose error the pass
// reports); a status write's and a delete's answer keep only reason and message; a get's answer is
// kept whole.
model::ApiOutcome RecordedOutcome(const model::ApiCall& call, model::ApiOutcome outcome);

// Never throws; CL_CHECKs that `in.tzdb` is set.
Step Decide(const SyncInput& in);
// The same over borrowed objects; also CL_CHECKs `cron_job` and `accounting`.
Step Decide(const SyncInputRef& in);

}  // namespace cronledger::reconciler
