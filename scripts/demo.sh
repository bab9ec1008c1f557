#!/usr/bin/env bash
# The main job on the embedded default (RocksDB, no Kafka, no cluster): installs dependencies, builds
# cronledger, and simulates a day of the sample CronJobs of deploy/samples/ (docs/simulate.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCRONLEDGER_BENCH=OFF >/dev/null
cmake --build build -j "${CRONLEDGER_JOBS:-2}" --target cronledger
exec build/app/cronledger simulate deploy/samples --duration 24h --data-dir "$(mktemp -d)" "$@"
