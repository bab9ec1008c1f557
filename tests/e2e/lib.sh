# Shared helpers of the end-to-end test scripts (sourced). The runner (tests/e2e/run.sh) exports:
#   CRONLEDGER   the cronledger binary under test
#   E2E_WORK     a scratch directory of this script's own
#   KUBECTL, KUBECONFIG, E2E_CONTROL_PLANE, E2E_CA, E2E_APISERVER   (tests/e2e/control-plane.sh env)
# shellcheck shell=bash

E2E_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="${REPO_ROOT:-$(cd "$E2E_ROOT/../.." && pwd)}"
e2e_name="$(basename "$0" .sh)"
e2e_failures=0

log() { echo "[$(date -u +%H:%M:%S) $e2e_name] $*" >&2; }
fail() { log "FAIL: $*"; e2e_failures=$((e2e_failures + 1)); }
die() { log "FATAL: $*"; exit 1; }
pass() { log "ok: $*"; }

# check <description> <command...>: runs the command; a non-zero exit is a recorded failure.
check() {
  local what="$1"; shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}

# expect_eq <description> <expected> <actual>
expect_eq() {
  if [[ "$2" == "$3" ]]; then pass "$1 ($3)"; else fail "$1: expected [$2], got [$3]"; fi
}

# finish: the script's exit status from the recorded failures.
finish() {
  if [[ $e2e_failures -gt 0 ]]; then log "$e2e_failures check(s) failed"; exit 1; fi
  log "all checks passed"
}

kc() { "$KUBECTL" "$@"; }

# free_port: a TCP port on 127.0.0.1 that nothing listens on now.
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_until <seconds> <command...>: polls every second until the command succeeds.
wait_until() {
  local secs="$1"; shift
  for _ in $(seq "$secs"); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  return 1
}

# sleep_until_second <s>: sleeps until the wall clock's second-of-minute is s (the next time).
sleep_until_second() {
  local now target
  now=$(date +%s)
  target=$(( (now / 60) * 60 + $1 ))
  [[ $target -gt $now ]] || target=$((target + 60))
  sleep $((target - now))
}

# sa_kubeconfig (shared with the Kafka scripts).
source "$(dirname "${BASH_SOURCE[0]}")/sa-kubeconfig.sh"

# Background processes this script started, stopped on exit.
e2e_pids=()
start_bg() {  # start_bg <log file> <command...>: starts it in the background; its pid is in $!
  local out="$1"; shift
  "$@" >"$out" 2>&1 &
  e2e_pids+=($!)
}
stop_all() {
  local p
  for p in "${e2e_pids[@]:-}"; do [[ -n "$p" ]] && kill "$p" 2>/dev/null || true; done
  for p in "${e2e_pids[@]:-}"; do [[ -n "$p" ]] && wait "$p" 2>/dev/null || true; done
  e2e_pids=()
}
trap stop_all EXIT

# finish_jobs <namespace> <min age s> [label selector]: writes a Complete status on every Job older
# than the age that has none, as the Job controller would after its Pod succeeded (no Pods run here).
finish_jobs() {
  local ns="$1" age="$2" sel="${3:-}" name
  while read -r name; do
    [[ -n "$name" ]] || continue
    complete_job "$ns" "$name" || log "could not complete job $ns/$name"
  done < <(kc get jobs -n "$ns" ${sel:+-l "$sel"} -o json 2>/dev/null | python3 -c '
import json, sys, time, calendar
age = int(sys.argv[1])
for j in json.load(sys.stdin)["items"]:
    st = j.get("status", {})
    if st.get("completionTime") or j["metadata"].get("deletionTimestamp"):
        continue
    created = calendar.timegm(time.strptime(j["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
    if time.time() - created >= age:
        print(j["metadata"]["name"])
' "$age")
}

# complete_job <namespace> <name>: the status a succeeded one-Pod Job ends with.
complete_job() {
  local t
  t="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  kc patch job "$2" -n "$1" --subresource=status --type=merge -p "{\"status\":{
    \"startTime\":\"$t\",\"completionTime\":\"$t\",\"succeeded\":1,\"ready\":0,
    \"conditions\":[
      {\"type\":\"SuccessCriteriaMet\",\"status\":\"True\",\"lastProbeTime\":\"$t\",\"lastTransitionTime\":\"$t\"},
      {\"type\":\"Complete\",\"status\":\"True\",\"lastProbeTime\":\"$t\",\"lastTransitionTime\":\"$t\"}]}}" >/dev/null
}
