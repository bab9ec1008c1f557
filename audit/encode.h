#pragma once

// JSON shapes shared by the CLI (app/cmd_audit.cc, app/cmd_report.cc) and the HTTP API
// (docs/audit.md "API reference").

#include <string>
#include <vector>

#include "audit/adherence.h"
#include "model/decision.h"
#include "model/json.h"

namespace cronledger::audit {

// A decision flattened for table/csv: seq, time, namespace, name, action, scheduledTime, reason,
// job.
model::Json DecisionRow(const model::Decision& d);
std::vector<std::string> DecisionRowColumns();
// One record of an audit store's merged listing (`audit -o json`, /v1/decisions on the store): the
// decision's JSON (model::EncodeDecision) with the `source` that holds it.
model::Json EncodeSourcedDecision(const model::Decision& d, const std::string& source);

// An adherence row: namespace, name, uid, expected, created, skipped, pending, unaccounted,
// unexpected, skippedByReason, succeeded, failed, running, outcomeUnknown, maxSkewSeconds,
// meanSkewSeconds, adherencePercent, executedPercent, scheduleErrors, divergencesByKind, and slots
// and divergences (the records, DivergenceJson) when present.
std::vector<std::string> AdherenceColumns();
model::Json EncodeReport(const AdherenceReport& r);  // {"since","until","horizon","totals","items"}

// Seconds as a JSON number with millisecond precision.
model::Json Seconds(Duration d);

}  // namespace cronledger::audit
