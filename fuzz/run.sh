#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 + ASan + UBSan and runs them.
#
#   fuzz/run.sh [TARGETS] [SECONDS]
#     TARGETS  `all` (default) or a comma-separated list, e.g. fuzz_parse_standard,fuzz_schedule_next
#     SECONDS  total time budget, split evenly across TARGETS (default 600)
#
# Mutated inputs are at most FUZZ_MAX_LEN bytes (default 4096): without a bound libFuzzer takes the
# largest seed's length (the 40 KB deep-nesting seeds), and every mutation of every input costs
# ten times more. Longer seeds are loaded truncated to the bound; the unit tests and
# fuzz/regressions/ cover the depth limits at full size.
# Exits non-zero if any target crashes, hangs (-timeout, default 10 s per input; env FUZZ_TIMEOUT),
# runs out of memory, trips a sanitizer or an invariant, or if a saved reproducer under
# fuzz/regressions/<target>/ still fails. Crash inputs land in fuzz/corpus-run/artifacts/<target>/
# (git-ignored) and logs in build-fuzz/fuzz-logs/. The committed seeds in fuzz/corpus/<target>/ are
# read-only inputs; new corpus entries accumulate in fuzz/corpus-run/<target>/ across runs.
# Installs nothing beyond scripts/install-deps.sh --test (clang-14, libclang-rt-14-dev).
#
# FUZZ_SMOKE=1: the short run of scripts/test.sh --fuzz. Nothing is written to fuzz/corpus-run/: the
# working corpus is a fresh directory under the build directory, so every run starts from the
# committed corpus alone.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
targets_arg="${1:-all}"
budget="${2:-600}"
build="${FUZZ_BUILD_DIR:-$root/build-fuzz}"

scripts/install-deps.sh --test
CC=clang-14 CXX=clang++-14 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCRONLEDGER_FUZZ=ON -DCRONLEDGER_SANITIZE=ON -DCRONLEDGER_BENCH=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" >/dev/null
cmake --build "$build" -j "${CRONLEDGER_JOBS:-2}" --target cronledger_fuzzers

all=(fuzz_parse_standard fuzz_schedule_next fuzz_time_codecs fuzz_cronjob_json fuzz_watch_decoder
     fuzz_query_params fuzz_manifests fuzz_decide_input)
targets=()
if [[ "$targets_arg" == all ]]; then
  for t in "${all[@]}"; do
    if [[ -x "$build/fuzz/$t" ]]; then targets+=("$t"); else echo "fuzz: $t not built, skipped" >&2; fi
  done
else
  IFS=, read -r -a targets <<<"$targets_arg"
fi
[[ ${#targets[@]} -gt 0 ]] || { echo "fuzz: no targets" >&2; exit 2; }
per=$((budget / ${#targets[@]}))
[[ $per -ge 1 ]] || per=1

dict_for() {
  case "$1" in
    fuzz_parse_standard | fuzz_schedule_next) echo "-dict=$root/fuzz/cron.dict" ;;
    fuzz_cronjob_json | fuzz_watch_decoder | fuzz_manifests | fuzz_decide_input)
      echo "-dict=$root/fuzz/json.dict" ;;
  esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$build/fuzz-logs"
failed=()
for t in "${targets[@]}"; do
  bin="$build/fuzz/$t"
  [[ -x "$bin" ]] || { echo "fuzz: $bin not built" >&2; failed+=("$t(not built)"); continue; }
  regressions=("$root/fuzz/regressions/$t"/*)
  if [[ -e "${regressions[0]}" ]]; then
    echo "== $t: replaying ${#regressions[@]} saved reproducer(s) from fuzz/regressions/$t/"
    if ! "$bin" -timeout="${FUZZ_TIMEOUT:-10}" "${regressions[@]}" >"$build/fuzz-logs/$t.regressions.log" 2>&1; then
      echo "FAIL $t: a reproducer still fails (log: $build/fuzz-logs/$t.regressions.log)" >&2
      failed+=("$t(regression)")
    fi
  fi
  work="$root/fuzz/corpus-run/$t"
  artifacts="$root/fuzz/corpus-run/artifacts/$t"
  if [[ "${FUZZ_SMOKE:-0}" == 1 ]]; then
    work="$build/fuzz-smoke/$t"
    artifacts="$build/fuzz-smoke/artifacts/$t"
    rm -rf "$work"
  fi
  mkdir -p "$work" "$artifacts"
  echo "== $t: fuzzing for ${per}s"
  rc=0
  # shellcheck disable=SC2046
  "$bin" -max_total_time="$per" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
    -max_len="${FUZZ_MAX_LEN:-4096}" \
    -print_final_stats=1 -artifact_prefix="$artifacts/" $(dict_for "$t") \
    "$work" "$root/fuzz/corpus/$t" >"$build/fuzz-logs/$t.log" 2>&1 || rc=$?
  grep -E '^(#[0-9]+[[:space:]]+DONE|stat::number_of_executed_units|stat::peak_rss_mb)' \
    "$build/fuzz-logs/$t.log" | sed 's/^/   /' || true
  if [[ $rc -ne 0 ]]; then
    echo "FAIL $t (exit $rc): see $build/fuzz-logs/$t.log; inputs in $artifacts/" >&2
    grep -E 'ERROR|SUMMARY|invariant failed|Test unit written' "$build/fuzz-logs/$t.log" | head -5 >&2 || true
    failed+=("$t")
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: OK (${targets[*]}; ${per}s each)"
