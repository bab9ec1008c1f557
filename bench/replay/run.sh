#!/usr/bin/env bash
# Prints the replay rate (records/s) and the raw ledger scan rate of the same records, measured in
# the same run, and their ratio; then the audit trail's first checkpoint and `verify-trail` on the
# same records against a raw scan + SHA-256 of the same bytes.
#   BUILD_DIR=<Release build dir> bench/replay/run.sh [CRONJOBS] [VIRTUAL_MINUTES]
set -euo pipefail
: "${BUILD_DIR:?set BUILD_DIR to a Release build directory}"
exec "$BUILD_DIR/bench/replay/replay_bench" "${1:-400}" "${2:-180}"
