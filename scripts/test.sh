#!/usr/bin/env bash
# Builds cronledger and runs every test. Installs its own dependencies first.
#   scripts/test.sh              normal build (build-test/) + ctest + the end-to-end tier
#   scripts/test.sh --sanitize   ASan+UBSan build (build-asan/) + ctest
#   scripts/test.sh --release    the image's Release build (scripts/build-release.sh, which
#                                deploy/Dockerfile runs too) and its --help smoke run
#   scripts/test.sh --e2e        the end-to-end tier alone (tests/e2e/run.sh) on build-test/
#   scripts/test.sh --fuzz       a short coverage-guided run: the libFuzzer targets built with
#                                clang-14 + ASan + UBSan (build-fuzz/, only the fuzz targets and
#                                what they link), each replaying its committed corpus and fuzzing
#                                for FUZZ_SMOKE_SECONDS / targets (default 160 s in total; fuzz/run.sh)
#   scripts/test.sh --all        all of them but --fuzz (what CI runs: a cold clang build of the
#                                fuzz targets does not fit CI's time budget; the sanitizer phase
#                                runs every fuzz target's corpus and fixed-seed mutations of it as
#                                the ctests FuzzSmoke.*, docs/fuzzing.md "The smoke run")
# The end-to-end tier runs cronledger against a real kube-apiserver, etcd, kube-controller-manager
# and Apache Kafka broker built from their upstream sources (docs/e2e.md); it runs once, in the
# normal phase. Under --all it runs in the background beside the Release and sanitizer builds:
# most of its time is real minutes of CronJob schedules, which leave the cores to the compilers.
# Each phase's time is printed.
set -euo pipefail
cd "$(dirname "$0")/.."

t0=$(date +%s)
phase_start=$t0
phase() {  # phase <name>: prints how long the phase that just ended took
  local now; now=$(date +%s)
  echo "test.sh: phase '$1' took $((now - phase_start)) s (total $((now - t0)) s)" >&2
  phase_start=$now
}

scripts/install-deps.sh --test
phase "install dependencies"

jobs="${CRONLEDGER_JOBS:-2}"
run() {  # run <build dir> [--retry-once] <extra cmake args...>
  local dir="$1"; shift
  local repeat=()
  if [[ "${1:-}" == --retry-once ]]; then repeat=(--repeat until-pass:2); shift; fi
  cmake -S . -B "$dir" -G Ninja "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
  phase "build $dir"
  (cd "$dir" && ctest -j "$jobs" --output-on-failure --timeout 600 "${repeat[@]}")
  phase "tests of $dir"
}

# Test builds are RelWithDebInfo's -O2 without the debug info, and skip the benchmarks
# (bench/run.sh builds those): the same code and warnings, compiled and linked faster.
normal=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -DNDEBUG"
        -DCRONLEDGER_BENCH=OFF)
# The sanitizer build is -O1 (the level the AddressSanitizer docs suggest): the same checks, and on
# g++ 12 about half the compile time of -O2 with ASan+UBSan (measured 32 s -> 15 s on the largest test).
asan=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -DNDEBUG"
      -DCRONLEDGER_BENCH=OFF -DCRONLEDGER_SANITIZE=ON)

# The end-to-end tier on the normal build's binary; its own copy of the binary, so that nothing
# rebuilt meanwhile changes it under the running processes.
e2e() {
  mkdir -p build-test/e2e
  cp build-test/app/cronledger build-test/e2e/cronledger
  E2E_DIR="$PWD/build-test/e2e/run" tests/e2e/run.sh build-test/e2e/cronledger
}

fuzz_smoke() {
  FUZZ_SMOKE=1 CRONLEDGER_JOBS="$jobs" fuzz/run.sh all "${FUZZ_SMOKE_SECONDS:-160}"
  phase "fuzz smoke run"
}

case "${1:-}" in
  "") run build-test "${normal[@]}"; e2e; phase "end-to-end tier" ;;
  --sanitize) run build-asan "${asan[@]}" ;;
  --release) CRONLEDGER_JOBS="$jobs" scripts/build-release.sh build-release; phase "release build" ;;
  --e2e) e2e; phase "end-to-end tier" ;;
  --fuzz) fuzz_smoke ;;
  --all)
    run build-test "${normal[@]}"
    log=build-test/e2e.log
    mkdir -p build-test
    echo "test.sh: the end-to-end tier runs in the background (its log: $log)" >&2
    e2e_start=$(date +%s)
    rm -f build-test/e2e.rc
    (e2e >"$log" 2>&1 && rc=0 || rc=$?
     echo $(( $(date +%s) - e2e_start )) >build-test/e2e.secs
     echo "$rc" >build-test/e2e.rc) &
    e2e_pid=$!
    trap 'kill $e2e_pid 2>/dev/null || true' EXIT
    CRONLEDGER_JOBS="$jobs" scripts/build-release.sh build-release
    phase "release build"
    # The sanitizer tests run beside the end-to-end tier (its API server, etcd, broker and
    # controllers load both cores and bind ports of their own): a test that fails there is run
    # once more, and its first failure stays in the log above. A failure that repeats fails CI.
    run build-asan --retry-once "${asan[@]}"
    wait "$e2e_pid" || true
    trap - EXIT
    phase "waiting for the end-to-end tier"
    cat "$log" >&2
    echo "test.sh: the end-to-end tier took $(cat build-test/e2e.secs 2>/dev/null || echo ?) s" >&2
    rc="$(cat build-test/e2e.rc 2>/dev/null || echo missing)"
    [[ "$rc" == 0 ]] || { echo "test.sh: the end-to-end tier failed (exit $rc)" >&2; exit 1; }
    ;;
  *) echo "usage: scripts/test.sh [--sanitize|--release|--e2e|--fuzz|--all]" >&2; exit 2 ;;
esac
echo "test.sh: all passed in $(( $(date +%s) - t0 )) s" >&2
