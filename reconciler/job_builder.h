#pragma once

// Job construction and job bookkeeping helpers of the upstream controller (docs/semantics.md §4,
// §5, §8).

#include <span>
#include <string>
#include <vector>

#include "model/annotations.h"
#include "model/json.h"
#include "model/objects.h"
#include "model/result.h"
#include "model/time.h"
#include "model/timezone.h"

namespace cronledger::reconciler {

using model::kScheduledTimestampAnnotation;

// "<cronjob name>-<scheduled Unix seconds / 60, truncating toward zero>" (docs/semantics.md §8).
std::string JobName(const std::string& cron_job_name, Time scheduled);

// The Job request for `scheduled` (docs/semantics.md §8): labels and annotations copied from the
// template plus the scheduled-timestamp annotation in spec.timeZone's location (UTC when absent),
// one controller owner reference, creationTimestamp = scheduled, spec copied verbatim. Fails only
// when spec.timeZone cannot be loaded (docs/semantics.md §6.11).
Result<model::Json> BuildJob(const model::CronJob& cj, Time scheduled,
                             const model::TimeZoneDb& tzdb);

// The Jobs whose controller owner reference names the CronJob, in the CronJob's namespace, in
// input order (docs/semantics.md §4: name only, no kind/UID/label check).
std::vector<const model::Job*> OwnedJobs(const model::CronJob& cj,
                                         const std::vector<model::Job>& jobs);
std::vector<const model::Job*> OwnedJobs(const model::CronJob& cj,
                                         std::span<const model::Job* const> jobs);

// upstream byJobStartTime: jobs with a start time first, oldest first; ties and missing start
// times ordered by name (docs/semantics.md §5).
bool JobStartedBefore(const model::Job& a, const model::Job& b);

// Go's %q for the strings that appear in event messages.
std::string GoQuote(const std::string& s);

}  // namespace cronledger::reconciler
