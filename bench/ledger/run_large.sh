#!/usr/bin/env bash
# Prints what a version of a large object costs, chunked vs whole (the peer, same run).
#   BUILD_DIR=<Release build dir> bench/ledger/run_large.sh [VERSIONS [OBJECT_BYTES]]
set -euo pipefail
: "${BUILD_DIR:?set BUILD_DIR to a Release build directory}"
exec "$BUILD_DIR/bench/ledger/large_object_bench" "${1:-60}" "${2:-1048576}"
