#!/usr/bin/env bash
# The end-to-end tier: cronledger against real peers built from their upstream sources — etcd,
# kube-apiserver and kube-controller-manager (tests/e2e/control-plane.sh) and an Apache Kafka
# broker (tests/e2e/kafka-broker.sh). Builds or reuses the cached peers, starts them, runs every
# test script under tests/e2e/k8s/ and tests/e2e/kafka/, stops everything, and prints each phase's
# time and each test's result.
#
# Usage: tests/e2e/run.sh CRONLEDGER_BINARY [NAME_PATTERN]
#   NAME_PATTERN: a bash glob of the scripts to run (default: all), e.g. '*manifests*'
# Scratch space and logs: $E2E_DIR (default /tmp/cronledger-e2e.<pid>), kept on failure, and on
# success too with E2E_KEEP=1 (to read what a test left: stores, topics read back, outputs).
#
# Kafka scripts that use the API server (they mention E2E_KUBECONFIG) run after the k8s scripts,
# because every cronledger controller acts on the CRD CronJobs of all namespaces; the others run
# beside the k8s scripts.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
[[ $# -ge 1 ]] || { echo "usage: $0 CRONLEDGER_BINARY [NAME_PATTERN]" >&2; exit 2; }
CRONLEDGER="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
[[ -x "$CRONLEDGER" ]] || { echo "run.sh: $1 is not an executable" >&2; exit 2; }
pattern="${2:-*}"
export CRONLEDGER
E2E_DIR="${E2E_DIR:-/tmp/cronledger-e2e.$$}"
mkdir -p "$E2E_DIR"

phase_start=$(date +%s)
phase() {  # phase <name>: prints the time of the phase that ended
  local now; now=$(date +%s)
  echo "e2e: phase '$1' took $((now - phase_start)) s" >&2
  phase_start=$now
}

cleanup() {
  "$here/control-plane.sh" stop "$E2E_DIR/control-plane" || true
  if [[ -x "$here/kafka-broker.sh" && -d "$E2E_DIR/kafka" ]]; then
    "$here/kafka-broker.sh" stop "$E2E_DIR/kafka" || true
  fi
}
trap cleanup EXIT

"$here/peers/build.sh"
phase "build or reuse the real peers"

"$here/control-plane.sh" start "$E2E_DIR/control-plane"
# shellcheck disable=SC1091
source "$E2E_DIR/control-plane/env"
if [[ -x "$here/kafka-broker.sh" ]]; then
  "$here/kafka-broker.sh" start "$E2E_DIR/kafka"
  # shellcheck disable=SC1091
  source "$E2E_DIR/kafka/env"
  export KAFKA_BROKERS
fi
phase "start the control plane and the broker"

results="$E2E_DIR/results"
: >"$results"
# run_one <script>: runs it with its own scratch dir, its output in a log; records the result.
run_one() {
  local script="$1" name start rc
  name="$(basename "$(dirname "$script")")/$(basename "$script" .sh)"
  mkdir -p "$E2E_DIR/work/$name"
  start=$(date +%s)
  E2E_WORK="$E2E_DIR/work/$name" "$script" >"$E2E_DIR/work/$name.log" 2>&1 && rc=0 || rc=$?
  echo "$name $rc $(( $(date +%s) - start ))" >>"$results"
  echo "e2e: ---- $name (exit $rc, $(( $(date +%s) - start )) s) ----" >&2
  cat "$E2E_DIR/work/$name.log" >&2
}

selected() { [[ "$(basename "$1")" == $pattern ]]; }
beside=() after=()
for s in "$here"/kafka/*.sh; do
  [[ -x "$s" ]] && selected "$s" || continue
  if grep -q E2E_KUBECONFIG "$s"; then after+=("$s"); else beside+=("$s"); fi
done
(for s in "${beside[@]}"; do run_one "$s"; done) &
beside_pid=$!
for s in "$here"/k8s/*.sh; do
  [[ -x "$s" ]] && selected "$s" || continue
  run_one "$s"
done
wait "$beside_pid" || true
for s in "${after[@]}"; do run_one "$s"; done
phase "the tests"

echo "e2e: results (name, exit, seconds):" >&2
column -t "$results" >&2 || cat "$results" >&2
if [[ ! -s "$results" ]]; then echo "e2e: no test matched '$pattern'" >&2; exit 1; fi
if awk '$2 != 0 {bad=1} END {exit !bad}' "$results"; then
  # The failed tests' logs again, last, so that a log cut to its tail still shows them.
  while read -r name rc _; do
    [[ "$rc" == 0 ]] && continue
    echo "e2e: ==== log of the failed test $name (exit $rc) ====" >&2
    cat "$E2E_DIR/work/$name.log" >&2
  done <"$results"
  echo "e2e: FAILED; logs and data in $E2E_DIR" >&2
  exit 1
fi
cleanup  # before the directory that holds the peers' pid files goes
trap - EXIT
if [[ "${E2E_KEEP:-0}" == 1 ]]; then
  echo "e2e: all passed; logs and data kept in $E2E_DIR" >&2
else
  rm -rf "$E2E_DIR"
  echo "e2e: all passed" >&2
fi
