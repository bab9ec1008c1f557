#!/usr/bin/env bash
# Builds cronledger and runs every test. Installs its own dependencies first.
#   scripts/test.sh              normal build (build/) + ctest
#   scripts/test.sh --sanitize   ASan+UBSan build (build-asan/) + ctest
#   scripts/test.sh --all        both (what CI runs)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh --test

jobs="${CRONLEDGER_JOBS:-2}"
run() {  # run <build dir> <extra cmake args...>
  local dir="$1"; shift
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  (cd "$dir" && ctest -j "$jobs" --output-on-failure --timeout 600)
}

case "${1:-}" in
  "") run build ;;
  --sanitize) run build-asan -DCRONLEDGER_SANITIZE=ON -DCRONLEDGER_BENCH=OFF ;;
  --all) run build; run build-asan -DCRONLEDGER_SANITIZE=ON -DCRONLEDGER_BENCH=OFF ;;
  *) echo "usage: scripts/test.sh [--sanitize|--all]" >&2; exit 2 ;;
esac
