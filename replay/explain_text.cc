#include "replay/explain_text.h"

#include <algorithm>

#include "reconciler/schedule.h"

namespace cronledger::replay::internal {

std::string FmtTime(Time t) { return FormatRfc3339(t); }
std::string FmtSeq(uint64_t s) { return "input #" + std::to_string(s); }

std::string Policy(const model::CronJobSpec& s) {
  std::string out = "schedule \"" + s.schedule + "\"";
  if (s.time_zone) out += " in " + *s.time_zone;
  out += ", concurrencyPolicy " + (s.concurrency_policy.empty() ? "Allow" : s.concurrency_policy);
  if (s.starting_deadline_seconds) {
    out += ", startingDeadlineSeconds " + std::to_string(*s.starting_deadline_seconds);
  }
  out += std::string(", suspend ") + (s.suspend.value_or(false) ? "true" : "false");
  return out;
}

model::Json TickJson(const TickAt* t) {
  if (t == nullptr) return nullptr;
  return {{"now", FormatRfc3339Nano(t->now)}, {"tickSeq", t->seq}};
}

const TickAt* LastBefore(const std::vector<TickAt>& ticks, Time t) {
  const TickAt* best = nullptr;
  for (const TickAt& k : ticks) {
    if (k.now < t && (best == nullptr || k.now >= best->now)) best = &k;
  }
  return best;
}

const TickAt* FirstAtOrAfter(const std::vector<TickAt>& ticks, Time t) {
  const TickAt* best = nullptr;
  for (const TickAt& k : ticks) {
    if (k.now >= t && (best == nullptr || k.now < best->now)) best = &k;
  }
  return best;
}

std::optional<Time> PreviousFire(const reconciler::Schedule& s, Time t) {
  static constexpr int64_t kBack[] = {60, 3600, 86400, 32 * 86400, 366 * 86400, 5 * 366 * 86400};
  for (int64_t back : kBack) {
    auto x = s.Next(t.AddSeconds(-back));
    if (!x || *x > t) continue;
    for (int i = 0; i < 1000000; ++i) {
      auto n = s.Next(*x);
      if (!n || *n > t) break;
      x = n;
    }
    return x;
  }
  return std::nullopt;
}

WhyWriter::WhyWriter(const FactCollector& facts, const model::TimeZoneDb& tzdb,
                     std::string cron_job)
    : facts_(facts), tzdb_(tzdb) {
  why_.cron_job = std::move(cron_job);
  why_.facts["cronJob"] = why_.cron_job;
}

// The CronJob as the view held it when the controller looked at time t: the last version
// recorded before the first pass (of any CronJob) that ran after t.
const CronJobVersion* WhyWriter::VersionAt(Time t) const {
  uint64_t boundary = UINT64_MAX;
  for (const TickAt& k : facts_.all_ticks) {
    if (k.now > t) boundary = std::min(boundary, k.seq);
  }
  const CronJobVersion* v = nullptr;
  for (const CronJobVersion& c : facts_.cron_job) {
    if (c.seq < boundary) v = &c;
  }
  return v;
}

Why WhyWriter::UnknownCronJob() {
  why_.verdict = "unknown CronJob";
  Say("The ledger holds no watch event of CronJob " + why_.cron_job + ".");
  return Finish({}, 0);
}

Why WhyWriter::NoFireTimeBefore(Time at) {
  why_.verdict = "no record";
  Say("The schedule in force at " + FmtTime(at) + " has no fire time at or before it.");
  return Finish({}, 0);
}

std::optional<Time> WhyWriter::LatestFireAtOrBefore(Time at) const {
  const CronJobVersion* v = VersionAt(at);
  if (v == nullptr || v->deleted) return std::nullopt;
  const auto f = reconciler::FormatSchedule(v->spec.schedule, v->spec.time_zone);
  auto s = reconciler::ParseStandard(f.text, tzdb_);
  if (!s.ok()) return std::nullopt;
  return PreviousFire(**s, at);
}

void WhyWriter::DescribeView(const PassFacts& p) {
  const PassSummary& s = p.summary;
  Say("That pass (tick #" + std::to_string(s.tick_seq) + ", now " + FmtTime(s.tick.now) +
      ", trigger " + s.tick.trigger + ") read the view as of " + FmtSeq(s.view_seq) +
      ": the CronJob from " + FmtSeq(s.cron_job_seq) + " (resourceVersion " + p.resource_version +
      "; " + Policy(p.spec) + ") and " + std::to_string(s.job_seqs.size()) + " Job(s).");
  why_.facts["decidedBy"] = {
      {"tickSeq", s.tick_seq},        {"now", FormatRfc3339Nano(s.tick.now)},
      {"trigger", s.tick.trigger},    {"viewSeq", s.view_seq},
      {"cronJobSeq", s.cron_job_seq}, {"resourceVersion", p.resource_version},
      {"jobSeqs", s.job_seqs}};
}

void WhyWriter::Terminal(Time t, const PassFacts& pass, const model::Decision& d,
                         const PassFacts* first) {
  why_.scheduled = t;
  why_.decided_at = pass.summary.tick.now;
  const bool created = d.action == model::DecisionAction::kCreateJob;
  why_.verdict = created ? "created" : "skipped";
  why_.reason = created ? "" : d.reason;
  Say(created
          ? "The " + FmtTime(t) + " run of " + why_.cron_job + " happened: Job " +
                d.job_name.value_or("?") + " was created by the pass at " +
                FmtTime(pass.summary.tick.now) + "."
          : "The " + FmtTime(t) + " run of " + why_.cron_job + " did not happen: it was skipped (" +
                d.reason + ") by the pass at " + FmtTime(pass.summary.tick.now) + ".");
  if (first != nullptr && first != &pass) {
    Say("The first pass after the fire time ran at " + FmtTime(first->summary.tick.now) +
        " (tick #" + std::to_string(first->summary.tick_seq) + ", trigger " +
        first->summary.tick.trigger + "); the fire time stayed pending until the deciding pass.");
  }
  DescribeView(pass);
  ReasonFacts(t, first != nullptr ? *first : pass, d);
  if (d.message && !d.message->empty()) Say("The record's message: " + *d.message);
}

}  // namespace cronledger::replay::internal
