#pragma once

// The JSON shape of a pass result (docs/design.md §4 `cronledger decide` output): actions, events,
// status, statusChanged, requeueAfterSeconds, error, decisions. Canonical (key-sorted) bytes.

#include "model/json.h"
#include "reconciler/decide.h"

namespace cronledger::reconciler {

model::Json EncodeSyncResult(const SyncResult& result);

}  // namespace cronledger::reconciler
