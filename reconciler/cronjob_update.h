#pragma once

// The CronJob update event handler of the upstream controller (docs/semantics.md §2): how soon the
// key is enqueued after an update. Pure, so the driver can record and replay it.

#include <optional>

#include "model/objects.h"
#include "model/time.h"
#include "model/timezone.h"
#include "reconciler/decide.h"

namespace cronledger::reconciler {

struct UpdateReaction {
  bool enqueue = true;
  Duration delay{0};  // when enqueue: 0 = immediately
  std::optional<Event>
      event;  // UnParseableCronJobSchedule (note the capital P, docs/semantics.md §2)
};

// A changed schedule or time zone (pointer-aware) is parsed (without the UnsupportedSchedule
// event) and the key is enqueued after nextScheduleTimeDuration(updated, now); a parse failure
// records UnParseableCronJobSchedule and does not enqueue. Any other update enqueues immediately.
UpdateReaction OnCronJobUpdate(const model::CronJob& old_cj, const model::CronJob& updated,
                               Time now, const model::TimeZoneDb& tzdb);

}  // namespace cronledger::reconciler
