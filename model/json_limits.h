#pragma once

// The limits every door applies to JSON before anything parses it (docs/ledger.md "Input
// limits"). They are the Kubernetes API server's own, so nothing the API server accepts is
// refused here, and anything beyond them is quarantined with its reason rather than parsed (deep
// nesting would otherwise reach recursive code: serialization, copies, CBOR, simdjson's DOM).

#include <cstddef>
#include <string_view>

#include "model/status.h"

namespace cronledger::model {

// The deepest nesting of arrays and objects an object may have. The API server decodes JSON with
// sigs.k8s.io/json (Go's encoding/json scanner), which fails "exceeded max depth" beyond 10000.
// Depth counts open containers: `{}` is 1, `{"a":[1]}` is 2.
inline constexpr size_t kMaxJsonDepth = 10000;

// The largest object, in bytes of JSON. The API server refuses request bodies over 3 MiB
// (MaxRequestBodyBytes: twice etcd's default 1.5 MiB request limit, because JSON is larger than
// the protobuf etcd stores), so no object it serves is larger.
inline constexpr size_t kMaxObjectBytes = size_t{3} << 20;

// ParseJson's depth limit: an object at kMaxJsonDepth inside the envelopes that carry it (a watch
// event, a List, a decide input, an export line) still parses.
inline constexpr size_t kMaxDocumentDepth = kMaxJsonDepth + 8;

// The stack every thread of the process gets, main thread included. Copying, comparing and
// serializing a JSON tree recurse once per level; at kMaxDocumentDepth an optimized build uses
// about 2 MiB for that and an AddressSanitizer build about 24 MiB, against the usual 8 MiB default.
// The reservation is address space: pages are only committed when a deep object touches them.
inline constexpr size_t kThreadStackBytes = size_t{64} << 20;

// Raises the main thread's stack limit (RLIMIT_STACK, up to the hard limit) and the default stack
// size of threads created afterwards to kThreadStackBytes. Call it first thing in main(), before
// any thread starts. An error says what could not be raised and the process carries on with less.
Status ReserveThreadStacks();

// Every reason a limit gives starts with this, so quarantined inputs over a limit can be counted
// apart from malformed ones.
inline constexpr std::string_view kOverLimitReason = "over limit";

// The nesting depth of `text`: the most `[` and `{` open at once outside strings. Stops counting
// once it exceeds `stop_above` and returns stop_above + 1. Never recurses and never fails:
// malformed text gets a depth too (the parser rejects it afterwards). O(size), no allocation.
size_t JsonDepth(std::string_view text, size_t stop_above);

// OK, or InvalidArgument "over limit: JSON nesting deeper than <max_depth> levels".
Status CheckJsonDepth(std::string_view text, size_t max_depth);

// One Kubernetes object's bytes against kMaxObjectBytes and kMaxJsonDepth: OK, or
// InvalidArgument whose message starts with kOverLimitReason.
Status CheckObjectLimits(std::string_view object);

}  // namespace cronledger::model
