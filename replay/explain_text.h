#pragma once

// Writes the sentences and facts of `why` (replay/explain.h); internal to replay/.

#include <optional>
#include <string>
#include <vector>

#include "model/timezone.h"
#include "reconciler/schedule.h"
#include "replay/explain.h"
#include "replay/explain_facts.h"

namespace cronledger::replay::internal {

// A pass this long after a fire time means the controller's timer did not fire in time.
inline constexpr Duration kLate = std::chrono::seconds(10);

std::string FmtTime(Time t);
std::string FmtSeq(uint64_t seq);  // "input #N"
std::string Policy(const model::CronJobSpec& s);
model::Json TickJson(const TickAt* t);
const TickAt* LastBefore(const std::vector<TickAt>& ticks, Time t);
const TickAt* FirstAtOrAfter(const std::vector<TickAt>& ticks, Time t);
std::optional<Time> PreviousFire(const reconciler::Schedule& s, Time t);  // the last fire <= t

class WhyWriter {
 public:
  // The collaborators must outlive the writer.
  WhyWriter(const FactCollector& facts, const model::TimeZoneDb& tzdb, std::string cron_job);

  Why UnknownCronJob();
  Why NoFireTimeBefore(Time at);
  std::optional<Time> LatestFireAtOrBefore(Time at) const;

  void Terminal(Time t, const PassFacts& pass, const model::Decision& d, const PassFacts* first);
  void Pending(Time t, const PassFacts& pass, const model::Decision& last);
  void NoRecord(Time t);
  Why Finish(const std::vector<model::Decision>& records, uint64_t divergences);

 private:
  const CronJobVersion* VersionAt(Time t) const;
  void DescribeView(const PassFacts& pass);
  void ReasonFacts(Time t, const PassFacts& pass, const model::Decision& d);
  void ActiveJobs(const PassFacts& pass);
  void Suspension(Time t);
  void Gap(Time t);
  // The fire time's wall clock in the schedule's zone, when the clocks fell back and the same
  // wall-clock time occurred twice (the schedule matches both, docs/semantics.md §9).
  void WallClock(Time t, const model::CronJobSpec& spec);
  // `t` is not a fire time of `v`'s schedule: was it one of an earlier schedule, changed since?
  void ScheduleChange(Time t, const CronJobVersion& v);
  void Say(std::string s) { why_.sentences.push_back(std::move(s)); }

  const FactCollector& facts_;
  const model::TimeZoneDb& tzdb_;
  Why why_;
};

}  // namespace cronledger::replay::internal
