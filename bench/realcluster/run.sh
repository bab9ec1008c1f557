#!/usr/bin/env bash
# cronledger against the upstream CronJob controller on the same real kube-apiserver, in the same
# run: N every-minute CronJobs for each controller (batch/v1 ones for kube-controller-manager, CRD
# ones for cronledger in controller mode with its ledger on), for MINUTES real minutes. Prints, per
# controller and N: Jobs created, creation skew (creationTimestamp - scheduled time) p50/p99/max, and
# CPU seconds per created Job of the controller process; then cronledger/upstream ratios.
#
#   bench/realcluster/run.sh [N...]          default N: 200 1000; MINUTES (env) default 3
#   QPS=100 bench/realcluster/run.sh ...     both controllers' client-side API rate limit
#                                            (--kube-api-qps, burst 1.5x); default 20, burst 30,
#                                            both controllers' defaults
#   BUILD_DIR=build-bench                    where the cronledger binary is (bench/run.sh sets it)
#
# Nothing runs Pods (no scheduler or kubelet), so every Job stays active: the numbers are the
# controllers' own work — watch, decide, create, status — on a 2-core machine that also runs etcd and
# the API server. Skew has one-second resolution (creationTimestamp).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${BUILD_DIR:-$root/build-bench}"
cronledger="$build/app/cronledger"
[[ -x "$cronledger" ]] || { echo "realcluster: build $cronledger first (bench/run.sh does)" >&2; exit 2; }
sizes=("$@")
[[ ${#sizes[@]} -gt 0 ]] || sizes=(200 1000)
minutes="${MINUTES:-3}"
qps="${QPS:-20}"
burst=$(( qps * 3 / 2 ))
work="$(mktemp -d /tmp/cronledger-realcluster.XXXXXX)"
cp="$work/control-plane"
cleanup() { kill "${cl_pid:-}" 2>/dev/null || true; "$root/tests/e2e/control-plane.sh" stop "$cp" || true; }
trap cleanup EXIT

"$root/tests/e2e/control-plane.sh" start "$cp"
# shellcheck disable=SC1091
source "$cp/env"
kc() { "$KUBECTL" "$@"; }
kc apply -k "$root/deploy/kubernetes/crd" >/dev/null
kc wait --for=condition=Established --timeout=60s crd/cronjobs.cronledger.io >/dev/null

cpu_seconds() {  # cpu_seconds <pid>: user + system CPU of the process so far
  awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"
}

cronjobs() {  # cronjobs <apiVersion> <namespace> <n>: a List of n every-minute CronJobs
  python3 - "$@" <<'EOF'
import json, sys
api, ns, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": api, "kind": "CronJob", "metadata": {"name": "cj-%05d" % i, "namespace": ns},
   "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
     "restartPolicy": "Never", "containers": [{"name": "m", "image": "registry.example.com/b:1"}]}}}}}}
  for i in range(n)]}))
EOF
}

skews() {  # skews <namespace> <from> <until>: "count p50 p99 max" of Jobs with fire times in [from, until)
  kc get jobs -n "$1" -o json | python3 -c '
import calendar, json, sys, time
lo, hi = int(sys.argv[1]), int(sys.argv[2])
s = []
for j in json.load(sys.stdin)["items"]:
    t = int(j["metadata"]["name"].rsplit("-", 1)[1]) * 60
    if lo <= t < hi:
        c = calendar.timegm(time.strptime(j["metadata"]["creationTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
        s.append(c - t)
s.sort()
q = lambda p: s[min(len(s) - 1, int(p * len(s)))] if s else float("nan")
print(len(s), q(0.5), q(0.99), s[-1] if s else float("nan"))
' "$2" "$3"
}

echo "client-side API limit of both controllers: $qps requests/s, burst $burst" >"$work/table"
printf '%-8s %-12s %8s %6s %6s %6s %12s\n' N controller jobs p50_s p99_s max_s cpu_ms/job >>"$work/table"
for n in "${sizes[@]}"; do
  up="bench-up-$n" cl="bench-cl-$n"
  kc create namespace "$up" >/dev/null
  kc create namespace "$cl" >/dev/null
  cronjobs batch/v1 "$up" "$n" | kc apply -f - >/dev/null
  cronjobs cronledger.io/v1 "$cl" "$n" | kc apply -f - >/dev/null
  KCM_EXTRA_ARGS="--kube-api-qps $qps --kube-api-burst $burst" \
    "$root/tests/e2e/control-plane.sh" kcm-start "$cp"
  kcm_pid="$(cat "$cp/kcm.pid")"
  "$cronledger" run --kubeconfig "$KUBECONFIG" --resource cronjobs.v1.cronledger.io \
    --kube-api-qps "$qps" --kube-api-burst "$burst" \
    --data-dir "$work/ledger-$n" >"$work/cronledger-$n.log" 2>&1 &
  cl_pid=$!
  # Measure from the second boundary on (the first lets both controllers list and settle).
  now=$(date +%s); from=$(( (now / 60 + 2) * 60 )); until=$(( from + minutes * 60 ))
  sleep $(( from - now - 5 ))
  kcm_cpu0=$(cpu_seconds "$kcm_pid"); cl_cpu0=$(cpu_seconds "$cl_pid")
  sleep $(( until - $(date +%s) + 5 ))
  sleep 40  # the last fire time's Jobs, created late, still count
  kcm_cpu1=$(cpu_seconds "$kcm_pid"); cl_cpu1=$(cpu_seconds "$cl_pid")
  read -r ju p50u p99u maxu < <(skews "$up" "$from" "$until")
  read -r jc p50c p99c maxc < <(skews "$cl" "$from" "$until")
  kill "$cl_pid"; wait "$cl_pid" 2>/dev/null || true
  "$root/tests/e2e/control-plane.sh" kcm-stop "$cp"
  cpu_u=$(awk -v a="$kcm_cpu0" -v b="$kcm_cpu1" -v j="$ju" 'BEGIN {printf "%.2f", j ? (b - a) * 1000 / j : 0}')
  cpu_c=$(awk -v a="$cl_cpu0" -v b="$cl_cpu1" -v j="$jc" 'BEGIN {printf "%.2f", j ? (b - a) * 1000 / j : 0}')
  printf '%-8s %-12s %8s %6s %6s %6s %12s\n' "$n" upstream "$ju" "$p50u" "$p99u" "$maxu" "$cpu_u" >>"$work/table"
  printf '%-8s %-12s %8s %6s %6s %6s %12s\n' "$n" cronledger "$jc" "$p50c" "$p99c" "$maxc" "$cpu_c" >>"$work/table"
  awk -v n="$n" -v pu="$p99u" -v pc="$p99c" -v cu="$cpu_u" -v cc="$cpu_c" -v ju="$ju" -v jc="$jc" 'BEGIN {
    printf "N=%s: jobs %s/%s expected %s each; skew p99 cronledger/upstream = %s s / %s s; CPU per Job cronledger/upstream = %.2f\n",
      n, jc, ju, n * '"$minutes"', pc, pu, (cu > 0 ? cc / cu : 0) }' >>"$work/ratios"
  kc delete namespace "$up" "$cl" --wait=false >/dev/null
done
cat "$work/table"
cat "$work/ratios"
