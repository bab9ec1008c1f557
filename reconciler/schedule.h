#pragma once

// The cron schedule engine: a faithful port of robfig/cron v3.0.1 `ParseStandard` and
// `Schedule.Next` (docs/semantics.md §9), plus the Kubernetes `spec.timeZone` handling of
// docs/semantics.md §6.5. Implementation: reconciler/cron_parser.cc (parsing),
// reconciler/cron_spec.cc (Next).

#include <memory>
#include <string>
#include <string_view>

#include "model/result.h"
#include "model/time.h"
#include "model/timezone.h"

namespace cronledger::reconciler {

class Schedule {
 public:
  virtual ~Schedule() = default;
  // robfig Schedule.Next: the first activation strictly after `t`, or std::nullopt when robfig
  // would return the zero time (nothing within five years). Where robfig returns an instant that
  // goes backwards, repeats or does not match the spec (rare DST transitions), this returns the
  // correct next matching instant instead (docs/schedule.md, "Deviations from robfig").
  // Allocation-free and thread-safe (schedules are immutable).
  virtual std::optional<Time> Next(Time t) const = 0;
  // The zone the schedule is evaluated in (from a TZ= prefix, or the database's Local zone).
  virtual const model::TimeZone& zone() const = 0;
};

// robfig/cron v3.0.1 ParseStandard. Errors carry robfig's messages ("empty spec string",
// "expected exactly 5 fields, found 6: [...]", "provided bad location ...", ...). Inputs on which
// the Go parser panics (e.g. "TZ=UTC" with no space) return "invalid schedule format: ..." like the
// newest Kubernetes wrapper. Without a TZ= prefix the schedule runs in `tzdb.Local()`.
Result<std::unique_ptr<Schedule>> ParseStandard(std::string_view spec,
                                                const model::TimeZoneDb& tzdb);

// How Kubernetes turns (schedule, timeZone) into the text it parses (docs/semantics.md §6.5).
struct FormattedSchedule {
  std::string text;          // what is handed to ParseStandard
  bool contains_tz = false;  // schedule contains "TZ": UnsupportedSchedule, timeZone ignored
};
FormattedSchedule FormatSchedule(std::string_view schedule, const std::optional<std::string>& tz);

// docs/semantics.md §6.3: a set timeZone must load, even when the schedule carries its own TZ= and
// the zone is otherwise ignored (upstream checks the zone before it looks at the schedule). Ok when
// unset or loadable; otherwise InvalidArgument with the message of the controller's UnknownTimeZone
// event: `invalid timeZone: "Mars/Olympus": <why the zone did not load>`.
Status CheckTimeZone(const std::optional<std::string>& tz, const model::TimeZoneDb& tzdb);

}  // namespace cronledger::reconciler
