#!/usr/bin/env bash
# The main job on the embedded default (RocksDB, no Kafka, no cluster): installs dependencies, builds
# cronledger, simulates a day of the sample CronJobs of deploy/samples/ (docs/simulate.md), keeps
# the ledger it wrote, and prints the commands to explore it.
#
# Usage: scripts/demo.sh [simulate flags...]
#   CRONLEDGER_DEMO_DIR=DIR  where the ledger goes (default: a new /tmp/cronledger-demo.XXXXXX);
#                            it must be absent or empty
#   CRONLEDGER_BIN=PATH      a cronledger binary already built: no install, no build (the test
#                            tests/cli/demo_test.sh runs the demo so, and every command it prints)
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -n "${CRONLEDGER_BIN:-}" ]]; then
  bin="$CRONLEDGER_BIN"
else
  scripts/install-deps.sh
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCRONLEDGER_BENCH=OFF >/dev/null
  cmake --build build -j "${CRONLEDGER_JOBS:-2}" --target cronledger
  bin=build/app/cronledger
fi
data_dir="${CRONLEDGER_DEMO_DIR:-$(mktemp -d /tmp/cronledger-demo.XXXXXX)}"
"$bin" simulate deploy/samples --duration 24h --data-dir "$data_dir" "$@"

# The samples are created at 2026-11-01T00:00:00Z, where the simulated day starts (a Sunday).
cat <<NEXT

The ledger of this day is in $data_dir. Try, from $(pwd):

  $bin audit --data-dir $data_dir --cronjob platform/cache-warmer --limit 10
  $bin why platform/cache-warmer --scheduled 2026-11-01T10:05:00Z --data-dir $data_dir
  $bin report adherence --data-dir $data_dir
  $bin replay --verify --data-dir $data_dir
  echo demo-token > $data_dir.token
  $bin serve --listen 127.0.0.1:8082 --token-file $data_dir.token --data-dir $data_dir
      (then open http://127.0.0.1:8082/#token=demo-token)

What each command does: docs/user-guide.md.
NEXT
