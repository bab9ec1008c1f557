#!/usr/bin/env bash
# Schedule engine throughput: cronledger (C++) vs robfig/cron v3.0.1 (Go), same workload, same run.
#
#   BUILD_DIR=build-bench bench/schedule/run.sh        (bench/run.sh sets BUILD_DIR to a Release build)
#   bench/schedule/run.sh                              (standalone: configures and builds build-bench)
#
# Env: BENCH_MIN_TIME (seconds per sample, default 0.5), BENCH_SAMPLES (default 5; the median is
# reported), BENCH_PER_SCHEDULE=1 (also a per-schedule table of Next rates). Both programs run the workload in workload.txt; the script fails if their checksums
# (sum of the unix seconds of every Next result) or result counts differ, and on any build error.
# The Go peer is built offline in a temporary directory from Debian's golang-github-robfig-cron-dev.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
min_time="${BENCH_MIN_TIME:-0.5}"
samples="${BENCH_SAMPLES:-5}"
per_schedule=()
if [[ "${BENCH_PER_SCHEDULE:-0}" == 1 ]]; then per_schedule=(--per-schedule); fi

if [[ -z "${BUILD_DIR:-}" ]]; then
  BUILD_DIR="$root/build-bench"
  cmake -S "$root" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCRONLEDGER_BENCH=ON >/dev/null
  cmake --build "$BUILD_DIR" -j "${CRONLEDGER_JOBS:-2}" --target schedule_bench
fi
ours="$BUILD_DIR/bench/schedule/schedule_bench"
if [[ ! -x "$ours" ]]; then
  echo "schedule bench: $ours not built (has the schedule engine landed in reconciler/?)" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# GOPATH mode against the Debian-packaged sources: no module download, no network.
(cd "$here/peer" && GOPATH=/usr/share/gocode GO111MODULE=off GOPROXY=off GOFLAGS= \
  GOCACHE="${GOCACHE:-$tmp/gocache}" go build -o "$tmp/peer" .)

# Schedules without TZ= are evaluated in UTC on both sides (cronledger's default Local zone; the peer
# passes UTC instants, and TZ=UTC makes Go's Local agree too).
export TZ=UTC
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cpus; min-time ${min_time}s x ${samples} samples (median)"
"$ours" --workload "$here/workload.txt" --min-time "$min_time" --samples "$samples" \
  "${per_schedule[@]}" >"$tmp/ours.txt"
"$tmp/peer" -workload "$here/workload.txt" -min-time "${min_time}s" -samples "$samples" \
  ${per_schedule:+-per-schedule} >"$tmp/peer.txt"

get() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
status=0
for key in next_calls next_results next_checksum parse_ok; do
  a="$(get "$tmp/ours.txt" "$key")"
  b="$(get "$tmp/peer.txt" "$key")"
  if [[ -z "$a" || "$a" != "$b" ]]; then
    echo "MISMATCH $key: cronledger=$a robfig=$b" >&2
    status=1
  fi
done
if [[ $status -ne 0 ]]; then
  # Show the first differing Next results: "dump <schedule#> <start#> <step#> <unix seconds>".
  "$ours" --workload "$here/workload.txt" --dump >"$tmp/ours.dump"
  "$tmp/peer" -workload "$here/workload.txt" -dump >"$tmp/peer.dump"
  diff "$tmp/ours.dump" "$tmp/peer.dump" | head -20 >&2 || true
else
  echo "checksums match: $(get "$tmp/ours.txt" next_calls) Next calls per round," \
    "$(get "$tmp/ours.txt" next_results) results, sum of unix seconds $(get "$tmp/ours.txt" next_checksum)"
fi

row() {  # row LABEL KEY
  local a b
  a="$(get "$tmp/ours.txt" "$2")"
  b="$(get "$tmp/peer.txt" "$2")"
  awk -v l="$1" -v a="$a" -v b="$b" \
    'BEGIN { printf "%-28s %14.0f %14.0f %9.1fx\n", l, a, b, (b > 0 ? a / b : 0) }'
}
printf '%-28s %14s %14s %10s\n' "" "cronledger/s" "robfig/s" "ratio"
row "Next (chained, mix)" next_rate
row "ParseStandard (no TZ=)" parse_plain_rate
row "ParseStandard (TZ=)" parse_tz_rate
ratio="$(awk -v a="$(get "$tmp/ours.txt" next_rate)" -v b="$(get "$tmp/peer.txt" next_rate)" \
  'BEGIN { print (b > 0 && a / b >= 10) ? "met" : "NOT met" }')"
echo "goal Next >= 10x robfig: $ratio"
if [[ ${#per_schedule[@]} -gt 0 ]]; then
  printf '\n%-44s %14s %14s %10s\n' "Next per schedule" "cronledger/s" "robfig/s" "ratio"
  awk '$1 == "schedule" { sub(/^schedule /, ""); print }' "$here/workload.txt" >"$tmp/specs.txt"
  awk 'FNR == 1 { f++ } f == 1 { spec[FNR - 1] = $0 } f == 2 && $1 == "sched_rate" { a[$2] = $3 }
       f == 3 && $1 == "sched_rate" { b[$2] = $3 }
       END { for (i = 0; i in spec; i++)
               printf "%-44s %14.0f %14.0f %9.1fx\n", spec[i], a[i], b[i], (b[i] > 0 ? a[i] / b[i] : 0) }' \
    "$tmp/specs.txt" "$tmp/ours.txt" "$tmp/peer.txt"
fi
exit $status
