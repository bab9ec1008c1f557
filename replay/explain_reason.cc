// The reason-specific half of `why` (replay/explain_text.h): the facts behind a skip reason, the
// gaps with no passes, and the explanation when no record covers the time.

#include <cstdio>

#include "model/decision.h"
#include "reconciler/invalid_object.h"
#include "replay/explain_text.h"

namespace cronledger::replay::internal {

// ConcurrencyForbid: the Jobs that were still active in the view (upstream checks
// status.active, docs/semantics.md §6.9), where they came from, and when they finished.
void WhyWriter::ActiveJobs(const PassFacts& pass) {
  model::Json list = model::Json::array();
  for (const std::string& name : pass.active) {
    model::Json j = {{"name", name}};
    std::string s = "Job " + name;
    auto seq = pass.summary.job_seqs.find(name);
    auto versions = facts_.jobs.find(name);
    const JobVersion* first = versions == facts_.jobs.end() ? nullptr : &versions->second.front();
    if (first != nullptr && first->created) {
      s += " (created " + FmtTime(*first->created) + ", " + FmtSeq(first->seq) + ")";
      j["created"] = FmtTime(*first->created);
      j["createdSeq"] = first->seq;
    }
    if (seq != pass.summary.job_seqs.end()) j["viewSeq"] = seq->second;
    const JobVersion* done = nullptr;
    if (versions != facts_.jobs.end()) {
      for (const JobVersion& v : versions->second) {
        if (v.seq > pass.summary.view_seq && (v.finished || v.deleted)) {
          done = &v;
          break;
        }
      }
    }
    if (done != nullptr && done->finished) {
      const Time at = done->completion.value_or(Time());
      s += " was still active; it finished (" + *done->finished + ") at " + FmtTime(at) + " (" +
           FmtSeq(done->seq) + ")";
      j["finished"] = *done->finished;
      j["finishedAt"] = FmtTime(at);
      j["finishedSeq"] = done->seq;
    } else if (done != nullptr) {
      s += " was still active; it was deleted by " + FmtSeq(done->seq);
      j["deletedSeq"] = done->seq;
    } else {
      s += " was still active and had not finished by the end of the ledger";
    }
    Say(s + ". concurrencyPolicy is Forbid, so no new Job was started (docs/semantics.md §6.9).");
    list.push_back(std::move(j));
  }
  why_.facts["activeJobs"] = std::move(list);
}

// Suspended: the update that set spec.suspend (in force at t) and the one that lifted it.
void WhyWriter::Suspension(Time t) {
  const CronJobVersion* at = VersionAt(t);
  if (at == nullptr || !at->spec.suspend.value_or(false)) return;
  const CronJobVersion* set = at;
  const CronJobVersion* cleared = nullptr;
  for (const CronJobVersion& v : facts_.cron_job) {
    if (v.seq < at->seq && !v.spec.suspend.value_or(false)) set = nullptr;
    if (v.seq <= at->seq && v.spec.suspend.value_or(false) && set == nullptr) set = &v;
    if (v.seq > at->seq && !v.deleted && !v.spec.suspend.value_or(false) && !cleared) cleared = &v;
  }
  if (set == nullptr) set = at;
  std::string s = "spec.suspend was true at " + FmtTime(t) + ": set by the update at " +
                  FmtSeq(set->seq) + " (resourceVersion " + set->resource_version + ")";
  s += cleared ? " and set back to false by " + FmtSeq(cleared->seq) + " (resourceVersion " +
                     cleared->resource_version + ")."
               : "; it was still set at the end of the ledger.";
  Say(s);
  why_.facts["suspend"] = {{"setSeq", set->seq},
                           {"setResourceVersion", set->resource_version},
                           {"clearedSeq", cleared ? model::Json(cleared->seq) : model::Json()}};
}

// The passes around t: this CronJob's, and the controller's as a whole (a gap in every
// CronJob's passes means the controller was not running).
void WhyWriter::Gap(Time t) {
  const TickAt* own_before = LastBefore(facts_.own_ticks, t);
  const TickAt* own_after = FirstAtOrAfter(facts_.own_ticks, t);
  const TickAt* any_before = LastBefore(facts_.all_ticks, t);
  const TickAt* any_after = FirstAtOrAfter(facts_.all_ticks, t);
  const bool late = own_after == nullptr || own_after->now.Sub(t) > kLate;
  const bool down = any_after == nullptr || any_after->now.Sub(t) > kLate;
  why_.facts["gap"] = {{"lastPassBefore", TickJson(own_before)},
                       {"firstPassAfter", TickJson(own_after)},
                       {"controllerLastPassBefore", TickJson(any_before)},
                       {"controllerFirstPassAfter", TickJson(any_after)},
                       {"controllerDown", down}};
  if (!late) return;
  std::string s = "No pass of " + why_.cron_job + " ran at the fire time: ";
  s += own_before ? "the last one before was at " + FmtTime(own_before->now) + " (tick #" +
                        std::to_string(own_before->seq) + ")"
                  : "there was none before it";
  s += own_after ? ", the next at " + FmtTime(own_after->now) + " (tick #" +
                       std::to_string(own_after->seq) + "), " +
                       FormatGoDuration(own_after->now.Sub(t)) + " late."
                 : ", and none after it.";
  Say(s);
  if (!down) return;
  Say(any_after == nullptr
          ? "The controller recorded no pass of any CronJob after " +
                (any_before ? FmtTime(any_before->now) : std::string("the start")) +
                ": it has not run since (as far as this ledger knows)."
          : "The controller recorded no pass of any CronJob between " +
                (any_before ? FmtTime(any_before->now) : std::string("the start")) + " and " +
                FmtTime(any_after->now) + ": it was down (or not leading) during that time.");
}

namespace {

std::string LocalTime(int64_t unix_seconds, int offset) {
  std::string s = FormatRfc3339(Time::FromUnix(unix_seconds + offset));
  s.pop_back();  // the 'Z'
  const int a = offset < 0 ? -offset : offset;
  char buf[16];
  std::snprintf(buf, sizeof buf, "%c%02d:%02d", offset < 0 ? '-' : '+', a / 3600, a / 60 % 60);
  return s + buf;
}

}  // namespace

void WhyWriter::WallClock(Time t, const model::CronJobSpec& spec) {
  std::shared_ptr<const model::TimeZone> zone;
  if (spec.time_zone) {
    auto z = tzdb_.Load(*spec.time_zone);
    if (!z.ok()) return;
    zone = *z;
  } else {
    zone = tzdb_.Local();
  }
  if (zone == nullptr) return;
  const int64_t u = t.unix_seconds();
  const int off = zone->OffsetAt(u);
  for (const int64_t probe : {u - 7200, u + 7200}) {
    const int delta = off - zone->OffsetAt(probe);  // the other instant is u + delta
    if (delta == 0 || zone->OffsetAt(u + delta) + (u + delta) != off + u) continue;
    const Time other = Time::FromUnix(u + delta);
    Say("In " + zone->name() + " the fire time is " + LocalTime(u, off) +
        ": the clocks fell back, so the same wall-clock time also occurred at " + FmtTime(other) +
        " (" + LocalTime(u + delta, zone->OffsetAt(u + delta)) +
        "), and the schedule matches both (the cron library searches wall-clock fields, "
        "docs/semantics.md §9).");
    why_.facts["wallClock"] = {
        {"zone", zone->name()}, {"local", LocalTime(u, off)}, {"repeatedAt", FmtTime(other)}};
    return;
  }
}

void WhyWriter::ScheduleChange(Time t, const CronJobVersion& v) {
  // The latest earlier version whose schedule (or zone) differs from v's, and the update that
  // changed it.
  const CronJobVersion* old = nullptr;
  const CronJobVersion* change = nullptr;
  for (const CronJobVersion& c : facts_.cron_job) {
    if (c.seq >= v.seq) break;
    if (c.deleted) continue;
    const bool differs = c.spec.schedule != v.spec.schedule || c.spec.time_zone != v.spec.time_zone;
    if (differs) {
      old = &c;
      change = nullptr;
    } else if (old != nullptr && change == nullptr) {
      change = &c;
    }
  }
  if (old == nullptr) return;
  if (change == nullptr) change = &v;
  const auto f = reconciler::FormatSchedule(old->spec.schedule, old->spec.time_zone);
  auto s = reconciler::ParseStandard(f.text, tzdb_);
  if (!s.ok() || (*s)->Next(t.Add(Duration(-1))) != t) return;
  Say(FmtTime(t) + " was a fire time of the earlier schedule \"" + old->spec.schedule + "\"" +
      (old->spec.time_zone ? " in " + *old->spec.time_zone : std::string()) + " (from " +
      FmtSeq(old->seq) + "); the update at " + FmtSeq(change->seq) + " (resourceVersion " +
      change->resource_version + ") changed it to \"" + change->spec.schedule + "\"" +
      (change->spec.time_zone ? " in " + *change->spec.time_zone : std::string()) +
      " before that time.");
  why_.facts["scheduleChange"] = {{"previousSchedule", old->spec.schedule},
                                  {"previousSeq", old->seq},
                                  {"changedSeq", change->seq},
                                  {"changedResourceVersion", change->resource_version},
                                  {"schedule", change->spec.schedule}};
}

void WhyWriter::ReasonFacts(Time t, const PassFacts& pass, const model::Decision& d) {
  namespace r = model::skip_reason;
  const std::string& reason = d.reason;
  WallClock(t, pass.spec);
  if (d.action == model::DecisionAction::kCreateJob) {
    Gap(t);
  } else if (reason == r::kConcurrencyForbid) {
    ActiveJobs(pass);
  } else if (reason == r::kSuspended) {
    Suspension(t);
  } else if (reason == r::kSuperseded) {
    for (const model::Decision& o : pass.decisions) {
      if (o.scheduled_time && *o.scheduled_time > t &&
          (o.action == model::DecisionAction::kScheduled ||
           o.action == model::DecisionAction::kCreateJob)) {
        Say("The same pass acted on the later fire time " + FmtTime(*o.scheduled_time) +
            ": upstream starts only the most recent missed fire time (docs/semantics.md §6.6), "
            "older ones are Superseded.");
        why_.facts["supersededBy"] = FmtTime(*o.scheduled_time);
        break;
      }
    }
    Gap(t);
  } else if (reason == r::kTooLate) {
    const Duration late = pass.summary.tick.now.Sub(t);
    const auto deadline = pass.spec.starting_deadline_seconds;
    Say("The pass ran " + FormatGoDuration(late) +
        " after the fire time; startingDeadlineSeconds " + "is " +
        (deadline ? std::to_string(*deadline) : std::string("unset")) +
        ", so the start was too late (now - scheduled > deadline, docs/semantics.md §6.7).");
    why_.facts["deadline"] = {
        {"lateBySeconds", std::chrono::duration_cast<std::chrono::seconds>(late).count()},
        {"startingDeadlineSeconds", deadline ? model::Json(*deadline) : model::Json()}};
    Gap(t);
  } else if (reason == r::kTooManyMissed) {
    Say("More than 100 fire times were missed; upstream reports too many missed start times, "
        "and one record covers " +
        FmtTime(*d.scheduled_time) + " through " +
        FmtTime(d.range_end.value_or(*d.scheduled_time)) + ".");
    Gap(t);
  }
}

void WhyWriter::Pending(Time t, const PassFacts& pass, const model::Decision& last) {
  why_.scheduled = t;
  why_.verdict = "pending";
  why_.reason = last.reason;
  Say("The " + FmtTime(t) + " run of " + why_.cron_job + " has no terminal record yet: the last " +
      "pass that looked at it (at " + FmtTime(pass.summary.tick.now) + ") left it pending" +
      (last.reason.empty() ? std::string(".") : " (" + last.reason + ")."));
  DescribeView(pass);
  ReasonFacts(t, pass, last);
}

void WhyWriter::NoRecord(Time t) {
  why_.scheduled = t;
  why_.verdict = "no record";
  const CronJobVersion* v = VersionAt(t);
  if (v == nullptr || v->deleted) {
    Say(why_.cron_job + " did not exist at " + FmtTime(t) + " (its first input is " +
        FmtSeq(facts_.cron_job.front().seq) + ").");
    return;
  }
  if (!v->error.empty()) {
    // The controller cannot evaluate a CronJob it cannot decode: its passes record InvalidObject.
    Say("The CronJob in force at " + FmtTime(t) + " (from " + FmtSeq(v->seq) +
        ") cannot be read: " + v->error + ". The controller does not act on it and records " +
        std::string(reconciler::kInvalidObject) + "; its fire times are accounted once a version " +
        "that decodes arrives.");
    for (const PassFacts& p : facts_.passes) {
      for (const model::Decision& d : p.decisions) {
        if (d.reason == reconciler::kInvalidObject && !d.scheduled_time) {
          Say("Pass at " + FmtTime(p.summary.tick.now) + " (tick " + FmtSeq(p.summary.tick_seq) +
              "): skipped, " + std::string(reconciler::kInvalidObject) + ": " +
              d.message.value_or("") + ".");
        }
      }
    }
    return;
  }
  const auto f = reconciler::FormatSchedule(v->spec.schedule, v->spec.time_zone);
  auto s = reconciler::ParseStandard(f.text, tzdb_);
  if (!s.ok()) {
    Say("The schedule in force at " + FmtTime(t) + " (\"" + v->spec.schedule +
        "\") cannot be evaluated: " + s.status().message() + ".");
    return;
  }
  const auto next = (*s)->Next(t);
  const auto prev = PreviousFire(**s, t.Add(Duration(-1)));
  why_.facts["neighbours"] = {{"previous", prev ? model::Json(FmtTime(*prev)) : model::Json()},
                              {"next", next ? model::Json(FmtTime(*next)) : model::Json()}};
  if ((*s)->Next(t.Add(Duration(-1))) != t) {
    why_.verdict = "not a fire time";
    Say(FmtTime(t) + " is not a fire time of " + Policy(v->spec) + " (from " + FmtSeq(v->seq) +
        "): the neighbouring fire times are " + (prev ? FmtTime(*prev) : std::string("none")) +
        " and " + (next ? FmtTime(*next) : std::string("none")) + ".");
    ScheduleChange(t, *v);
    return;
  }
  Say("No decision record covers the fire time " + FmtTime(t) + " of " + why_.cron_job + " (" +
      Policy(v->spec) + ").");
  Gap(t);
}

Why WhyWriter::Finish(const std::vector<model::Decision>& records, uint64_t divergences) {
  if (divergences > 0) {
    Say("Warning: replaying this CronJob's history diverged from the recorded decisions at " +
        std::to_string(divergences) + " place(s); run `cronledger replay --verify`.");
  }
  why_.facts["verdict"] = why_.verdict;
  why_.facts["scheduledTime"] =
      why_.scheduled ? model::Json(FmtTime(*why_.scheduled)) : model::Json();
  if (!why_.reason.empty()) why_.facts["reason"] = why_.reason;
  model::Json recs = model::Json::array();
  for (const model::Decision& d : records) recs.push_back(model::EncodeDecision(d));
  why_.facts["records"] = std::move(recs);
  why_.facts["sentences"] = why_.sentences;
  return std::move(why_);
}

}  // namespace cronledger::replay::internal
