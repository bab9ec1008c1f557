#pragma once

// Names of the Kubernetes annotations cronledger writes and reads.

namespace cronledger::model {

// The annotation a CronJob's controller puts on each Job it creates: the Job's fire time, RFC 3339
// in the CronJob's time zone (docs/semantics.md §8).
inline constexpr const char* kScheduledTimestampAnnotation =
    "batch.kubernetes.io/cronjob-scheduled-timestamp";

}  // namespace cronledger::model
