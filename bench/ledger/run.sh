#!/usr/bin/env bash
# Prints the ledger benchmark figures and their ratios to the raw RocksDB peer (same run), then
# the large-object figures (chunked vs stored whole, same run; bench/ledger/run_large.sh).
#   BUILD_DIR=<Release build dir> bench/ledger/run.sh [EVENTS]
set -euo pipefail
: "${BUILD_DIR:?set BUILD_DIR to a Release build directory}"
"$BUILD_DIR/bench/ledger/ledger_bench" "${1:-60000}"
"$(dirname "$0")/run_large.sh"
