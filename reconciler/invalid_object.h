#pragma once

// A CronJob whose stored bytes do not decode, or one of whose Jobs' do not (docs/controller.md
// "Objects that cannot be read"): the controller cannot act on it, and records why. Its pass makes
// no API call, records no Kubernetes Event and sets no timer (the next watch event of the CronJob
// brings new bytes); it writes one `skipped` record with reason InvalidObject and no scheduledTime
// per stored version of the object that does not decode (the CronJob, else the first such Job by
// name), and the fire times due meanwhile are accounted InvalidObject once it decodes again (the
// blocked condition of model::AccountingState, as for InvalidSchedule). The controller and the
// replay engine (replay/engine.h) derive the pass from here, so replay reproduces it byte for
// byte.

#include <cstdint>
#include <string>
#include <string_view>

#include "model/decision.h"
#include "model/objects.h"
#include "model/result.h"
#include "model/time.h"
#include "reconciler/decide.h"

namespace cronledger::reconciler {

// The skip reason of the record (beside model::skip_reason's): the stored CronJob or one of its
// Jobs could not be decoded, so no fire time of it could be evaluated.
inline constexpr std::string_view kInvalidObject = "InvalidObject";

struct InvalidCronJob {
  model::CronJobRef ref;    // namespace, name and uid as the view's entry holds them
  uint64_t source_seq = 0;  // the input whose bytes do not decode (the CronJob's or a Job's)
  std::string message;      // StoredCronJobError's or StoredJobError's text
};

// The message of a stored CronJob that failed to decode with `error` (ParseJson's or
// DecodeCronJob's), the error every reader reports for its bytes: "stored CronJob: ...".
std::string StoredCronJobError(const Status& error);

// The message of stored Job `name` that failed to decode with `error`: "stored Job NAME: ...".
std::string StoredJobError(std::string_view name, const Status& error);

// The pass of a CronJob that cannot be decoded (or one of whose Jobs cannot), at `now`, from the
// accounting state `before`.
SyncResult DecideInvalidCronJob(const InvalidCronJob& cron_job, Time now,
                                const model::AccountingState& before);

}  // namespace cronledger::reconciler
