#include "replay/state_at.h"

#include "replay/engine.h"
#include "replay/view_history.h"

namespace cronledger::replay {
namespace {

class StateObserver final : public ReplayObserver {
 public:
  StateObserver(const StateQuery& q)
      : key_(q.cron_job), at_(q.at), history_([this](std::string_view ns, std::string_view name) {
          return FamilyKey(ns, name) == key_;
        }) {}

  void OnInput(const store::LogRecord& rec) override {
    if (done_) return;
    if (const auto* t = std::get_if<model::Tick>(&rec.input); t != nullptr && t->now > at_) {
      done_ = true;
      return;
    }
    view_seq_ = rec.seq;
    status_ = history_.Fold(rec);
    if (!status_.ok()) done_ = true;
  }
  void OnPass(const PassContext& p) override {
    if (p.summary.tick.now > at_) return;
    last_pass_ = p.summary;
    accounting_ = p.result.accounting;
    requeue_ = p.result.requeue_after;
    error_ = p.result.error;
  }

  std::string key_;
  Time at_;
  ViewHistory history_;
  bool done_ = false;
  uint64_t view_seq_ = 0;
  Status status_;
  std::optional<PassSummary> last_pass_;
  model::AccountingState accounting_;
  std::optional<Duration> requeue_;
  std::optional<std::string> error_;
};

model::Json JobsJson(const FamilyView& view, std::vector<std::string>* lines) {
  model::Json jobs = model::Json::array();
  for (const auto& [name, e] : view.jobs) {
    const auto finished = model::FinishedCondition(*e.job);
    model::Json j = {{"name", name}, {"inputSeq", e.seq}, {"state", finished.value_or("Active")}};
    model::PutOptTime(&j, "created", e.job->metadata.creation_timestamp);
    model::PutOptTime(&j, "completionTime", e.job->status.completion_time);
    lines->push_back("  job " + name + ": " + finished.value_or("Active") + " (" + "input #" +
                     std::to_string(e.seq) + ")");
    jobs.push_back(std::move(j));
  }
  return jobs;
}

model::Json CronJobJson(const model::CronJob& cj, uint64_t seq, std::vector<std::string>* lines) {
  model::Json active = model::Json::array();
  for (const auto& ref : cj.status.active) active.push_back(ref.name);
  model::Json j = {{"inputSeq", seq},
                   {"uid", cj.metadata.uid},
                   {"resourceVersion", cj.metadata.resource_version},
                   {"schedule", cj.spec.schedule},
                   {"concurrencyPolicy", cj.spec.concurrency_policy},
                   {"suspend", cj.spec.suspend.value_or(false)},
                   {"active", active}};
  model::PutOptString(&j, "timeZone", cj.spec.time_zone);
  model::PutOptInt(&j, "startingDeadlineSeconds", cj.spec.starting_deadline_seconds);
  model::PutOptTime(&j, "lastScheduleTime", cj.status.last_schedule_time);
  model::PutOptTime(&j, "lastSuccessfulTime", cj.status.last_successful_time);
  lines->push_back("cronjob " + cj.metadata.Key() + " resourceVersion " +
                   cj.metadata.resource_version + " (input #" + std::to_string(seq) + ")");
  lines->push_back(
      "  schedule \"" + cj.spec.schedule + "\"" +
      (cj.spec.time_zone ? " in " + *cj.spec.time_zone : std::string()) + ", concurrencyPolicy " +
      cj.spec.concurrency_policy + ", suspend " +
      (cj.spec.suspend.value_or(false) ? "true" : "false") +
      (cj.spec.starting_deadline_seconds
           ? ", startingDeadlineSeconds " + std::to_string(*cj.spec.starting_deadline_seconds)
           : std::string()));
  lines->push_back("  lastScheduleTime " +
                   (cj.status.last_schedule_time ? FormatRfc3339(*cj.status.last_schedule_time)
                                                 : std::string("-")) +
                   ", active " + std::to_string(active.size()));
  return j;
}

void PassFacts(const StateObserver& o, model::Json* state, std::vector<std::string>* lines) {
  if (!o.last_pass_) {
    lines->push_back("no pass of the CronJob ran at or before this time");
    return;
  }
  const PassSummary& p = *o.last_pass_;
  (*state)["lastPass"] = {
      {"tickSeq", p.tick_seq}, {"now", FormatRfc3339Nano(p.tick.now)}, {"trigger", p.tick.trigger}};
  (*state)["accounting"] = model::EncodeAccountingState(o.accounting_);
  lines->push_back("last pass: tick #" + std::to_string(p.tick_seq) + " at " +
                   FormatRfc3339(p.tick.now) + " (" + p.tick.trigger + ")");
  lines->push_back("accounting: " + model::DumpJson((*state)["accounting"]));
  if (o.requeue_) {
    const Time due = p.tick.now.Add(*o.requeue_);
    (*state)["timer"] = {{"due", FormatRfc3339Nano(due)}, {"after", FormatGoDuration(*o.requeue_)}};
    lines->push_back("pending timer: next pass due at " + FormatRfc3339(due) + " (requeue after " +
                     FormatGoDuration(*o.requeue_) + ")");
  } else if (o.error_) {
    (*state)["timer"] = {{"retry", *o.error_}};
    lines->push_back("pending timer: retry with back-off after the error: " + *o.error_);
  } else {
    (*state)["timer"] = nullptr;
    lines->push_back("pending timer: none (the next pass waits for a watch event)");
  }
}

}  // namespace

Result<StateAtResult> StateAt(RecordSource& source, const StateQuery& q) {
  StateObserver o(q);
  ReplayOptions options;
  options.scope.cron_job = q.cron_job;
  options.scope.until = q.at.Add(Duration(1));
  options.zoneinfo_dir = q.zoneinfo_dir;
  CL_ASSIGN_OR_RETURN(ReplayResult r, Replay(source, options, &o));
  CL_RETURN_IF_ERROR(o.status_);
  StateAtResult out;
  out.view_seq = o.view_seq_;
  out.state = {{"cronJob", q.cron_job}, {"at", FormatRfc3339Nano(q.at)}, {"viewSeq", o.view_seq_}};
  out.lines.push_back("view of " + q.cron_job + " at " + FormatRfc3339(q.at) + " (inputs up to #" +
                      std::to_string(o.view_seq_) + ")");
  auto view = o.history_.Latest(q.cron_job);
  if (view && !view->cron_job && view->invalid_cron_job) {
    // The view holds the CronJob but its stored bytes do not decode: its facts are the error,
    // its Jobs and the controller's last pass (which recorded why it did not act on it).
    out.exists = true;
    const reconciler::InvalidCronJob& invalid = *view->invalid_cron_job;
    out.state["exists"] = true;
    out.state["error"] = invalid.message;
    out.state["cronJobObject"] = {{"inputSeq", view->cron_job_seq}, {"uid", invalid.ref.uid}};
    out.lines.push_back("cronjob " + q.cron_job + " (input #" + std::to_string(view->cron_job_seq) +
                        "): cannot be read: " + invalid.message);
    out.state["jobs"] = JobsJson(*view, &out.lines);
    PassFacts(o, &out.state, &out.lines);
    out.state["replayDivergences"] = r.divergences;
    return out;
  }
  out.exists = view && view->cron_job;
  // Inputs recorded before the first pass are not placed in time by a Tick; an object the API
  // server created after T was not there at T.
  const auto created = out.exists ? view->cron_job->metadata.creation_timestamp : std::nullopt;
  if (created && *created > q.at) out.exists = false;
  if (!out.exists) {
    out.state["exists"] = false;
    out.lines.push_back("the CronJob was not in the view");
    return out;
  }
  out.state["exists"] = true;
  out.state["cronJobObject"] = CronJobJson(*view->cron_job, view->cron_job_seq, &out.lines);
  out.state["jobs"] = JobsJson(*view, &out.lines);
  PassFacts(o, &out.state, &out.lines);
  out.state["replayDivergences"] = r.divergences;
  if (r.divergences > 0) {
    out.lines.push_back("warning: replaying this history diverged from the record at " +
                        std::to_string(r.divergences) +
                        " place(s); run `cronledger replay --verify`");
  }
  return out;
}

}  // namespace cronledger::replay
