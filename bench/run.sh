#!/usr/bin/env bash
# Runs every benchmark area (bench/<area>/run.sh) against its peer and prints the ratios.
#   bench/run.sh [area...]      e.g. bench/run.sh schedule
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --dev
cmake -S . -B build-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DCRONLEDGER_BENCH=ON >/dev/null
cmake --build build-bench -j "${CRONLEDGER_JOBS:-2}"
areas=("$@")
if [[ ${#areas[@]} -eq 0 ]]; then
  for d in bench/*/run.sh; do areas+=("$(basename "$(dirname "$d")")"); done
fi
for a in "${areas[@]}"; do
  echo "== bench: $a"
  BUILD_DIR="$PWD/build-bench" "bench/$a/run.sh"
done
