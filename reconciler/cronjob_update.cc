#include "reconciler/cronjob_update.h"

#include "reconciler/cronjob_time.h"
#include "reconciler/schedule.h"

namespace cronledger::reconciler {

UpdateReaction OnCronJobUpdate(const model::CronJob& old_cj, const model::CronJob& updated,
                               Time now, const model::TimeZoneDb& tzdb) {
  UpdateReaction reaction;
  if (old_cj.spec.schedule == updated.spec.schedule &&
      old_cj.spec.time_zone == updated.spec.time_zone) {
    return reaction;
  }
  auto schedule =
      ParseStandard(FormatSchedule(updated.spec.schedule, updated.spec.time_zone).text, tzdb);
  if (!schedule.ok()) {
    reaction.enqueue = false;
    reaction.event = Event{"Warning", "UnParseableCronJobSchedule",
                           "unparseable schedule for cronjob: " + updated.spec.schedule};
    return reaction;
  }
  reaction.delay = NextScheduleTimeDuration(updated, now, **schedule);
  return reaction;
}

}  // namespace cronledger::reconciler
