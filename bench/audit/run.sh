#!/usr/bin/env bash
# Prints audit query and report latencies next to raw RocksDB reads of the same index ranges
# (same run, same store; docs/audit.md "Benchmark").
#   BUILD_DIR=<Release build dir> bench/audit/run.sh [CRONJOBS] [DAYS] [MINUTELY] [QUERIES] [STORE_DIR]
# Defaults: 10000 CronJobs (20 every minute, the rest hourly) x 30 days = 10.06 M decisions.
# STORE_DIR keeps the built store for later runs (the build is skipped when it holds a ledger).
# AUDIT_BENCH_NO_FULL_SCAN=1 skips the unindexed peer (one scan of the whole decision log).
# AUDIT_BENCH_SOURCES=N (N >= 2): the same decisions over N ledgers laid out as an audit store
# (STORE_DIR/sources/s0 ...), and only the one-CronJob query, merged over the sources.
set -euo pipefail
: "${BUILD_DIR:?set BUILD_DIR to a Release build directory}"
exec "$BUILD_DIR/bench/audit/audit_bench" "${1:-10000}" "${2:-30}" "${3:-20}" "${4:-2000}" ${5:+"$5"}
