#!/usr/bin/env bash
# Builds the cronledger binary the way the image ships it: a Release build (-O3, so the optimizer's
# warnings, which -Werror turns into errors, are the image's) of the `cronledger` target only,
# without the benchmarks, then a `cronledger --help` smoke run. deploy/Dockerfile runs this script
# and `scripts/test.sh --release` (part of `--all`, what CI runs) runs it too, so CI builds exactly
# what the image builds.
#   scripts/build-release.sh [BUILD_DIR]     default build-release/ in the repository
# CRONLEDGER_JOBS caps the parallel compile jobs (default: ninja's own).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-build-release}"
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCRONLEDGER_BENCH=OFF >/dev/null
cmake --build "$dir" --target cronledger ${CRONLEDGER_JOBS:+-j "$CRONLEDGER_JOBS"}
"$dir/app/cronledger" --help >/dev/null
