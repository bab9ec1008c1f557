#!/usr/bin/env bash
# Controller scale benchmark: N CronJobs in real time against the simulated cluster (zero-latency
# actuation, full Job lifecycle), the whole controller over a real RocksDB ledger.
#
#   BUILD_DIR=build-bench bench/controller/run.sh     (bench/run.sh sets BUILD_DIR to a Release build)
#   bench/controller/run.sh                           (standalone: configures and builds build-bench)
#
# Env: BENCH_SIZES (default "10000 100000 1000000"), BENCH_MIXES (default "every-minute mixed"; the
# mixed variant runs at the sizes in BENCH_MIXED_SIZES, default "10000 100000"), BENCH_MEASURE
# (measurement window per run, Go duration, default 3m), BENCH_MAX_LOAD (give up when the CronJobs
# are not all through their first pass after this long, default 5m), BENCH_WORKERS (default 32:
# passes mostly wait on commits, and more of them in flight share group commits),
# BENCH_SYNC (ledger fsync mode, default batch: the controller's default durability),
# BENCH_GLIBC_TUNABLES (the GLIBC_TUNABLES the bench runs with, default
# "glibc.malloc.tcache_count=2048": the deployment setting docs/controller.md recommends, since a
# pass allocates and frees many small JSON nodes and glibc's default 7 cached chunks per size send
# most of them through the arena's bins; set it empty to run with glibc's defaults),
# BENCH_LEDGER_WRITE_BUFFER_MIB / BENCH_LEDGER_BLOCK_CACHE_MIB (store::LedgerOptions
# write_buffer_budget_bytes / block_cache_bytes in MiB; unset = the ledger's defaults: no shared
# write-buffer budget, RocksDB's 64 MiB per column family, and a 64 MiB block cache).
#
# The upstream figures are printed beside ours as a reference, not measured here: they come from
# other machines and other controllers (see docs/benchmarks.md).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
sizes="${BENCH_SIZES:-10000 100000 1000000}"
mixes="${BENCH_MIXES:-every-minute mixed}"
mixed_sizes="${BENCH_MIXED_SIZES:-10000 100000}"
measure="${BENCH_MEASURE:-3m}"
max_load="${BENCH_MAX_LOAD:-5m}"
workers="${BENCH_WORKERS:-32}"
sync="${BENCH_SYNC:-batch}"
tunables="${BENCH_GLIBC_TUNABLES-glibc.malloc.tcache_count=2048}"
ledger_mem=()
[[ -n "${BENCH_LEDGER_WRITE_BUFFER_MIB:-}" ]] && ledger_mem+=(--ledger-write-buffer-mib "$BENCH_LEDGER_WRITE_BUFFER_MIB")
[[ -n "${BENCH_LEDGER_BLOCK_CACHE_MIB:-}" ]] && ledger_mem+=(--ledger-block-cache-mib "$BENCH_LEDGER_BLOCK_CACHE_MIB")

if [[ -z "${BUILD_DIR:-}" ]]; then
  BUILD_DIR="$root/build-bench"
  cmake -S "$root" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCRONLEDGER_BENCH=ON >/dev/null
  cmake --build "$BUILD_DIR" -j "${CRONLEDGER_JOBS:-2}" --target controller_bench
fi
bin="$BUILD_DIR/bench/controller/controller_bench"
[[ -x "$bin" ]] || { echo "controller bench: $bin not built" >&2; exit 1; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cpus; workers $workers; sync $sync; window $measure (+30 s drain); give up loading after $max_load; GLIBC_TUNABLES=$tunables; ledger memory: ${ledger_mem[*]:-defaults}"

get() { awk -v k="$2" '$1 == k { print $2 }' "$1"; }
fmt_s() { awk -v v="$1" 'BEGIN { if (v == "" ) print "-"; else if (v < 0) print "> run"; else printf "%.3f s", v }'; }
rows=()
floor_rows=()
for mix in $mixes; do
  run_sizes="$sizes"
  [[ "$mix" == mixed ]] && run_sizes="$mixed_sizes"
  for n in $run_sizes; do
    out="$tmp/$mix-$n.txt"
    echo "== $n CronJobs, $mix" >&2
    GLIBC_TUNABLES="$tunables" "$bin" --cronjobs "$n" --mix "$mix" --measure "$measure" --max-load "$max_load" \
      --workers "$workers" --sync "$sync" "${ledger_mem[@]}" --data-dir "$tmp/ledger-$mix-$n" | tee "$out" >&2 || {
      rows+=("| $n | $mix | run failed (exit $?) | | | | | | | | | | |")
      continue
    }
    rm -rf "$tmp/ledger-$mix-$n"
    if [[ "$(get "$out" result)" != ok ]]; then
      rows+=("| $n | $mix | not loaded: $(get "$out" load_passes) of $n first passes in $max_load | | | | | | | $(awk -v v="$(get "$out" rss_per_cronjob_bytes)" 'BEGIN{printf "%.0f B", v}') | | | $(get "$out" load_loadavg) |")
      continue
    fi
    num() { awk -v v="$(get "$out" "$1")" -v m="${2:-1}" -v f="${3:-%.0f}" 'BEGIN{ if (v == "") print "-"; else printf f, v * m }'; }
    rows+=("| $n | $mix | $(fmt_s "$(get "$out" skew_p50)") | $(fmt_s "$(get "$out" skew_p99)") | $(fmt_s "$(get "$out" skew_max)") | $(get "$out" created)/$(get "$out" expected_creates) | $(num decisions_per_second) | $(num records_per_create 1 %.1f) | $(num cpu_seconds_per_create 1000 %.2f) ms | $(num rss_per_cronjob_bytes) B | $(num rss_minus_sim_per_cronjob_bytes) B | $(num cpu_cores 1 %.2f) | $(get "$out" loadavg_start)–$(get "$out" loadavg_end) |")
    floor_rows+=("| $n | $mix | $(num ours_burst_creates_per_second) | $(num ours_1m_creates_seconds_extrapolated 1 %.1f) s | $(num raw_peer_creates_per_second) | $(num raw_peer_1m_creates_seconds_extrapolated 1 %.1f) s | $(num raw_peer_over_ours_creates_per_second 1 %.1f) × | $(num floor_decide_ns_per_create_pass 0.001 %.1f) µs | $(num cpu_seconds_per_create 1000000 %.0f) µs | $(get "$out" raw_peer_loadavg) |")
  done
done

echo
echo "cronledger controller, this machine ($(nproc) cpus), real time, simulated cluster:"
echo "| CronJobs | schedules | skew p50 | skew p99 | skew max | created/expected | decisions/s | ledger records/create | CPU/create | RSS/CronJob | RSS − sim cluster | CPU cores | load avg |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${rows[@]}"
echo "| **goal** | 1,000,000 every minute, 2 cores | | **≤ 2 s** | | | | | | **≤ 1,024 B** | | ≤ 2 | |"
echo
echo "The same runs against their floors, measured in the same process after the window: the raw peer"
echo "writes the bytes our ledger wrote for the window's creates (Tick + create intent, createJob"
echo "decision; the audit index is written behind the commit) as raw RocksDB WriteBatches, 2 threads, one fsync per batch;"
echo "Decide is reconciler::Decide alone over create passes of the same CronJobs. 1M figures are"
echo "extrapolated from the measured rates (1,000,000 / creates per second)."
echo "| CronJobs | schedules | ours: burst creates/s | ours: 1M creates (extrap.) | raw peer: creates/s | raw peer: 1M creates (extrap.) | raw peer ÷ ours | Decide per create pass | ours CPU per create | load avg (peer) |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
printf '%s\n' "${floor_rows[@]}"
echo
echo "Goals on 2 cores: 1,000,000 every-minute CronJobs with p99 skew <= 2 s; RSS <= 1 KiB per CronJob."
echo
echo "Reference (upstream, other machines; not measured here):"
echo "| controller | CronJobs | result |"
echo "| --- | --- | --- |"
echo "| Kubernetes CronJob v2 (informers + delaying queue) | 6,120 on 64 vCPU | no delay |"
echo "| Kubernetes CronJob v1 (10 s list-all poll), k8s issue #90801 | 1,000 | last schedule 5m53s late |"
