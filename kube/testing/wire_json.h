#pragma once

// How the fixture API server writes JSON: in the field order of kube-apiserver's wire format.

#include <string>

#include "model/json.h"

namespace cronledger::kube::testing {

// Compact JSON (no spaces), byte for byte what nlohmann's dump() writes except for the order of
// object keys, which mirrors Go's encoding/json of the API types: struct fields in declaration
// order, map keys (labels, annotations, unknown fields) sorted. Built-in objects (CronJob, Job,
// Lease, Event, lists, Status, watch events) get their Go field order; custom resources are
// unstructured maps on the server and come out sorted throughout. Keys a shape does not list
// follow the listed ones, sorted. Throws like dump() on invalid UTF-8.
std::string WireJson(const model::Json& j);

}  // namespace cronledger::kube::testing
