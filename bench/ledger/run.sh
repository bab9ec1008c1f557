#!/usr/bin/env bash
# Prints the ledger benchmark figures and their ratios to the raw RocksDB peer (same run).
#   BUILD_DIR=<Release build dir> bench/ledger/run.sh [EVENTS]
set -euo pipefail
: "${BUILD_DIR:?set BUILD_DIR to a Release build directory}"
exec "$BUILD_DIR/bench/ledger/ledger_bench" "${1:-60000}"
