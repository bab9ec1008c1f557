#pragma once

// Schedule arithmetic of the upstream controller (docs/semantics.md §7), with Go's integer/float
// conversions reproduced exactly: wrapping Duration multiplication, Duration.Round,
// int64(d.Seconds()).

#include <optional>

#include "model/objects.h"
#include "model/result.h"
#include "model/time.h"
#include "reconciler/schedule.h"

namespace cronledger::reconciler {

// The requeue padding (`nextScheduleDelta`, docs/semantics.md §1).
inline constexpr Duration kNextScheduleDelta = std::chrono::milliseconds(100);
// More missed starts than this (by the estimate) is "many" (docs/semantics.md §7.1 step 8).
inline constexpr int64_t kTooManyMissedThreshold = 100;

enum class Missed { kNone, kFew, kMany };

struct MostRecent {
  Time earliest;
  std::optional<Time> most_recent;
  Missed missed = Missed::kNone;
};

// Go's `time.Duration(n) * time.Second`, wrapping on overflow exactly like Go's int64 arithmetic.
Duration GoSeconds(int64_t n);
// Go's Duration.Round(m) for m > 0 (halves away from zero, saturating).
Duration GoRound(Duration d, Duration m);
// Go's int64(d.Seconds()).
int64_t GoWholeSeconds(Duration d);

// docs/semantics.md §7.1. earliest = lastScheduleTime, else creationTimestamp (Go's zero time when
// absent), moved up to now - startingDeadlineSeconds when `include_deadline`. The only error is
// "time difference between two schedules is less than 1 second".
Result<MostRecent> MostRecentScheduleTime(const model::CronJob& cj, Time now,
                                          const Schedule& schedule, bool include_deadline);
// The same for `cj` with its status replaced by `status` (a pass works on a status copy).
Result<MostRecent> MostRecentScheduleTime(const model::CronJob& cj,
                                          const model::CronJobStatus& status, Time now,
                                          const Schedule& schedule, bool include_deadline);

struct NextSchedule {
  std::optional<Time> scheduled;  // the slot to act on, if any
  bool too_many_missed = false;   // emit TooManyMissedTimes (only when `scheduled` is set)
};
// docs/semantics.md §7.2 (the event is left to the caller).
Result<NextSchedule> NextScheduleTime(const model::CronJob& cj, Time now, const Schedule& schedule);
Result<NextSchedule> NextScheduleTime(const model::CronJob& cj, const model::CronJobStatus& status,
                                      Time now, const Schedule& schedule);

// docs/semantics.md §7.3: next(base) + 100 ms - now, computed WITHOUT the deadline; saturates
// instead of overflowing (the year-1 case).
Duration NextScheduleTimeDuration(const model::CronJob& cj, Time now, const Schedule& schedule);
Duration NextScheduleTimeDuration(const model::CronJob& cj, const model::CronJobStatus& status,
                                  Time now, const Schedule& schedule);

// Go's schedule.Next with robfig's "zero time" for "nothing within five years".
Time NextOrZero(const Schedule& schedule, Time t);

}  // namespace cronledger::reconciler
