#pragma once

// Builds the normalized watch events the controller ingests from objects as the API serves them,
// with the same identity rules as the ingest decoder (model/watch_decoder.h): the controller owner
// is kept only when its kind is CronJob. For sources that hold objects rather than watch bytes: the
// simulated cluster and tests.

#include "model/inputs.h"
#include "model/json.h"
#include "model/result.h"

namespace cronledger::controller {

// InvalidArgument when the object is not a CronJob or Job with metadata.name.
Result<model::WatchEvent> MakeWatchEvent(model::WatchEventType type, const model::Json& object);

}  // namespace cronledger::controller
