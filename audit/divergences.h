#pragma once

// Shadow-mode divergences (docs/run.md "Shadow mode"): where the cluster's own CronJob controller
// did not do what the expected decisions call for. The shadow auditor writes them
// (app/support_run_shadow.cc, with DivergenceRecord); the `divergences` command, the HTTP API's
// /v1/divergences, the adherence report and the timeline page read them (ListDivergences) and print
// them (DivergenceJson). This header is the one definition of how a divergence is stored.
//
// Storage: an input record of the ledger's log whose input is a model::ActionOutcome with
// verb "divergence", kind CronJob, namespace_/name = the CronJob, result = the divergence kind,
// decision_seq 0 (it answers no intent, so replay ignores it), time = when it was recorded, and
// payload = the JSON detail (always `job`; `scheduledTime` when known; `expectedSince` for
// MissedRun; `observedAt` and `skewSeconds` for LateRun; `createdAt` and `observedAt` for
// UnexpectedJob).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/inputs.h"
#include "model/json.h"
#include "model/result.h"
#include "model/time.h"
#include "store/ledger.h"

namespace cronledger::audit {

inline constexpr const char* kDivergenceVerb = "divergence";
// The kinds (docs/reference/records.md "Shadow-mode divergences").
inline constexpr const char* kMissedRun = "MissedRun";
inline constexpr const char* kLateRun = "LateRun";
inline constexpr const char* kUnexpectedJob = "UnexpectedJob";

// Every kind, in the order reports list them: MissedRun, LateRun, UnexpectedJob.
const std::vector<std::string>& DivergenceKinds();

// Ok for a kind of DivergenceKinds(); InvalidArgument naming the kinds otherwise.
Status CheckDivergenceKind(std::string_view kind);

struct Divergence {
  uint64_t seq = 0;  // input seq of the record
  Time time;         // when it was recorded
  std::string kind;  // one of DivergenceKinds()
  std::string namespace_;
  std::string cron_job;  // the CronJob's name
  std::string job;       // the Job's name
  model::Json detail;    // job, scheduledTime, expectedSince, observedAt, skewSeconds, ...
  // The stored detail is not a JSON object: why (detail is then an empty object). Such a record
  // is still listed and counted, never dropped.
  std::string error;
};

// The input the shadow auditor commits for one divergence (the storage format above); `detail`
// gets `job` set.
model::ActionOutcome DivergenceRecord(Time time, const std::string& kind, const std::string& ns,
                                      const std::string& cron_job, const std::string& job,
                                      model::Json detail);

// A filtered read of the divergence records: every set field must match.
struct DivergenceQuery {
  std::string namespace_;
  std::string cron_job;       // the CronJob's name (with namespace_ for one CronJob)
  std::string kind;           // one of DivergenceKinds(); empty = every kind
  uint64_t after_seq = 0;     // records with a larger input seq (paging)
  std::optional<Time> since;  // recorded at or after
  std::optional<Time> until;  // recorded before
  size_t limit = 0;           // 0 = all
};

// The divergence records matching q, in input log order (oldest first). There is no index of
// divergences: it reads the input log without raw bytes, from after_seq, or from the inputs the
// ledger stamped (LogRecord::recorded_at) an hour before `since` when that is later, to the end or
// until `limit` records matched. The window applies to the divergence's own time, which is never
// later than the ledger's stamp by more than that hour (see divergences.cc).
// InvalidArgument for an unknown kind or since >= until; the ledger's errors otherwise.
Result<std::vector<Divergence>> ListDivergences(store::Ledger& ledger, const DivergenceQuery& q);

// The stable JSON of one divergence, the item of `cronledger divergences -o json` and of
// /v1/divergences: {seq, time, kind, namespace, cronJob, job, detail}, and `error` for a record
// whose detail does not decode.
model::Json DivergenceJson(const Divergence& d);

}  // namespace cronledger::audit
