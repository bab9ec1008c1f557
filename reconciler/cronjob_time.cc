#include "reconciler/cronjob_time.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace cronledger::reconciler {
namespace {

constexpr int64_t kNanosPerSecond = 1'000'000'000;

int64_t WrapMul(int64_t a, int64_t b) {
  // Two's-complement wrap, as Go's int64 multiplication does.
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

bool LessThanHalf(Duration x, Duration y) {
  return static_cast<uint64_t>(x.count()) + static_cast<uint64_t>(x.count()) <
         static_cast<uint64_t>(y.count());
}

Time EarliestTime(const model::CronJob& cj, const model::CronJobStatus& status) {
  if (status.last_schedule_time) return *status.last_schedule_time;
  // metav1.Time zero value when the API object has no creationTimestamp.
  return cj.metadata.creation_timestamp.value_or(Time::GoZero());
}

// Whether robfig parses `text` as a ConstantDelaySchedule ("@every", after an optional TZ= prefix).
bool IsConstantDelay(const std::string& text) {
  std::string_view v = text;
  if (v.rfind("TZ=", 0) == 0 || v.rfind("CRON_TZ=", 0) == 0) {
    const size_t space = v.find(' ');
    v = space == std::string_view::npos ? std::string_view() : v.substr(space + 1);
  }
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  return v.rfind("@every", 0) == 0;
}

// docs/semantics.md §7.1 step 7: walk next(start), next(next(start)), ... while <= now, keeping the
// last. Go really walks; when the estimate left a long way to go (no creationTimestamp means Go's
// zero time, and the elapsed time saturates at ~292 years) the same answer is computed without
// millions of steps: a constant-delay series in closed form, and for a set of fire times (cron
// specs and the other descriptors) the walk may start at any instant before the last fire time.
constexpr int64_t kLongWalkSteps = 1000;

std::optional<Time> LastFireTime(const Schedule& schedule, bool constant_delay, Time start,
                                 Time now, int64_t gap) {
  const int64_t span = GoWholeSeconds(now.Sub(start));
  if (span / gap > kLongWalkSteps) {
    if (constant_delay) {
      const Time base = start.TruncateToSecond();
      const std::optional<Time> first = schedule.Next(base);
      if (!first || *first > now) return std::nullopt;
      const int64_t delay = first->unix_seconds() - base.unix_seconds();
      const int64_t steps = (now.unix_seconds() - base.unix_seconds()) / delay;
      Time last = base.AddSeconds(steps * delay);
      if (last > now) last = last.AddSeconds(-delay);
      return last;
    }
    for (int64_t back = gap * 2; back < span; back *= 2) {
      const Time probe = now.AddSeconds(-back);
      const std::optional<Time> t = schedule.Next(probe);
      if (t && *t <= now) {
        start = probe;
        break;
      }
    }
  }
  std::optional<Time> last;
  for (std::optional<Time> t = schedule.Next(start); t && *t <= now; t = schedule.Next(*t)) {
    if (last && *t <= *last) break;  // defensive: a non-advancing schedule must not loop forever
    last = t;
  }
  return last;
}

}  // namespace

Duration GoSeconds(int64_t n) { return Duration(WrapMul(n, kNanosPerSecond)); }

Duration GoRound(Duration d, Duration m) {
  const int64_t dc = d.count();
  const int64_t mc = m.count();
  int64_t r = dc % mc;
  if (dc < 0) {
    r = -r;
    if (LessThanHalf(Duration(r), m)) return Duration(dc + r);
    const int64_t d1 = static_cast<int64_t>(static_cast<uint64_t>(dc) - static_cast<uint64_t>(mc) +
                                            static_cast<uint64_t>(r));
    return d1 < dc ? Duration(d1) : kMinDuration;
  }
  if (LessThanHalf(Duration(r), m)) return Duration(dc - r);
  const int64_t d1 = static_cast<int64_t>(static_cast<uint64_t>(dc) + static_cast<uint64_t>(mc) -
                                          static_cast<uint64_t>(r));
  return d1 > dc ? Duration(d1) : kMaxDuration;
}

int64_t GoWholeSeconds(Duration d) {
  // Go: float64(sec) + float64(nsec)/1e9, then a truncating float->int conversion.
  const int64_t sec = d.count() / kNanosPerSecond;
  const int64_t nsec = d.count() % kNanosPerSecond;
  const double seconds = static_cast<double>(sec) + static_cast<double>(nsec) / 1e9;
  return static_cast<int64_t>(seconds);
}

Time NextOrZero(const Schedule& schedule, Time t) {
  return schedule.Next(t).value_or(Time::GoZero());
}

Result<MostRecent> MostRecentScheduleTime(const model::CronJob& cj, Time now,
                                          const Schedule& schedule, bool include_deadline) {
  return MostRecentScheduleTime(cj, cj.status, now, schedule, include_deadline);
}

Result<MostRecent> MostRecentScheduleTime(const model::CronJob& cj,
                                          const model::CronJobStatus& status, Time now,
                                          const Schedule& schedule, bool include_deadline) {
  MostRecent out;
  out.earliest = EarliestTime(cj, status);
  if (include_deadline && cj.spec.starting_deadline_seconds) {
    const Time deadline = now.Add(-GoSeconds(*cj.spec.starting_deadline_seconds));
    if (deadline > out.earliest) out.earliest = deadline;
  }
  const Time t1 = NextOrZero(schedule, out.earliest);
  const Time t2 = NextOrZero(schedule, t1);
  if (now < t1) return out;
  if (now < t2) {
    out.most_recent = t1;
    return out;
  }
  // docs/semantics.md §7.1 steps 5-6: an estimate of the missed count so that decades of skew cost
  // no CPU.
  const int64_t gap = GoWholeSeconds(GoRound(t2.Sub(t1), std::chrono::seconds(1)));
  if (gap < 1) {
    return Status::InvalidArgument("time difference between two schedules is less than 1 second");
  }
  const int64_t elapsed = GoWholeSeconds(now.Sub(t1));
  const int64_t missed = elapsed / gap + 1;
  const Time start = t1.Add(GoSeconds(WrapMul(missed - 2, gap)));
  out.missed = missed > kTooManyMissedThreshold ? Missed::kMany : Missed::kFew;
  out.most_recent = LastFireTime(schedule, IsConstantDelay(cj.spec.schedule), start, now, gap);
  return out;
}

Result<NextSchedule> NextScheduleTime(const model::CronJob& cj, Time now,
                                      const Schedule& schedule) {
  return NextScheduleTime(cj, cj.status, now, schedule);
}

Result<NextSchedule> NextScheduleTime(const model::CronJob& cj, const model::CronJobStatus& status,
                                      Time now, const Schedule& schedule) {
  CL_ASSIGN_OR_RETURN(MostRecent mr, MostRecentScheduleTime(cj, status, now, schedule, true));
  NextSchedule out;
  if (!mr.most_recent || *mr.most_recent > now) return out;
  out.scheduled = mr.most_recent;
  out.too_many_missed = mr.missed == Missed::kMany;
  return out;
}

Duration NextScheduleTimeDuration(const model::CronJob& cj, Time now, const Schedule& schedule) {
  return NextScheduleTimeDuration(cj, cj.status, now, schedule);
}

Duration NextScheduleTimeDuration(const model::CronJob& cj, const model::CronJobStatus& status,
                                  Time now, const Schedule& schedule) {
  Time base = now;
  auto mr = MostRecentScheduleTime(cj, status, now, schedule, false);
  if (mr.ok()) {
    if (mr->most_recent) {
      base = *mr->most_recent;
    } else if (mr->missed == Missed::kNone) {
      base = mr->earliest;
    }
    // else: missed but none found -> now (upstream's fix of the negative requeue delay,
    // docs/semantics.md §7.3).
  }
  return NextOrZero(schedule, base).Add(kNextScheduleDelta).Sub(now);
}

}  // namespace cronledger::reconciler
