#!/usr/bin/env bash
# cronledger beside the real upstream CronJob controller (kube-controller-manager), on a real
# kube-apiserver, for nine real minutes:
#   - controller mode: two cronledger replicas with leader election (a real coordination.k8s.io
#     Lease) manage CRD CronJobs in namespace e2e-cl, authenticated as the controller overlay's
#     ServiceAccount (RBAC for real); the leader is killed with SIGKILL mid-run;
#   - the upstream controller manages identical batch/v1 CronJobs in namespace e2e-up;
#   - shadow mode: a cronledger auditor (the shadow overlay's ServiceAccount) watches e2e-up;
#     kube-controller-manager is stopped for three minutes and started again.
# Then, fire time by fire time: Jobs created or not, their names, labels, annotations and owners,
# the CronJobs' status and Event reasons are compared (differential); the auditor's divergences
# must be exactly the fire times the upstream controller missed; history limits, Forbid, Replace,
# suspend and garbage collection are checked on cronledger's side.
# Deliberate differences are listed in docs/e2e.md and allowed here by name.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

W="$E2E_WORK"
deploy="$REPO_ROOT/deploy/kubernetes"
grace=20s  # --shadow-grace: the upstream controller acts within a second or two when it runs

# --- set-up: the controller overlay for real, the shadow overlay into its own namespace ----------
kc apply -k "$deploy/overlays/controller" >/dev/null
kc wait --for=condition=Established --timeout=60s crd/cronjobs.cronledger.io >/dev/null
mkdir -p "$W/shadow-overlay"
cat >"$W/shadow-overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: cronledger-shadow
resources:
  - $(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$deploy/overlays/shadow" "$W/shadow-overlay")
EOF
kc apply -k "$W/shadow-overlay" >/dev/null
sa_kubeconfig cronledger-system cronledger "$W/controller.kubeconfig"
sa_kubeconfig cronledger-shadow cronledger "$W/shadow.kubeconfig"
for ns in e2e-up e2e-cl; do kc create namespace "$ns" >/dev/null; done

"$E2E_ROOT/control-plane.sh" kcm-start "$E2E_CONTROL_PLANE"

declare -A probe pid
start_replica() {  # start_replica <a|b>
  probe[$1]="$(free_port)"
  start_bg "$W/cronledger-$1.log" "$CRONLEDGER" run --kubeconfig "$W/controller.kubeconfig" \
    --resource cronjobs.v1.cronledger.io --leader-elect --leader-elect-namespace cronledger-system \
    --data-dir "$W/ledger-$1" --health-probe-bind-address "127.0.0.1:${probe[$1]}"
  pid[$1]=$!
}
start_replica a
start_replica b
start_bg "$W/shadow.log" "$CRONLEDGER" run --kubeconfig "$W/shadow.kubeconfig" --shadow \
  --resource cronjobs.v1.batch --shadow-grace "$grace" --data-dir "$W/ledger-shadow"
shadow_pid=$!

# Every Job the API server announces, in both namespaces, with what it looked like when created.
for ns in e2e-up e2e-cl; do
  start_bg "$W/jobs-$ns.json" kc get jobs -n "$ns" --watch --output-watch-events -o json
done

check "a cronledger replica becomes leader" wait_until 60 bash -c \
  "curl -sf http://127.0.0.1:${probe[a]}/readyz || curl -sf http://127.0.0.1:${probe[b]}/readyz"

# --- the CronJobs, identical in both namespaces ----------------------------------------------
cronjob() {  # cronjob <apiVersion> <namespace> <name> <schedule> <finish yes|no> <spec extra json>
  cat <<EOF
{"apiVersion": "$1", "kind": "CronJob", "metadata": {"name": "$3", "namespace": "$2"},
 "spec": $(jq -n --arg s "$4" --arg f "$5" --argjson extra "$6" '{
   schedule: $s,
   jobTemplate: {
     metadata: {labels: {app: "e2e", finish: $f}, annotations: {"e2e.cronledger.io/note": "from the template"}},
     spec: {backoffLimit: 0, template: {spec: {restartPolicy: "Never",
       containers: [{name: "main", image: "registry.example.com/e2e:1", command: ["true"]}]}}}}
   } + $extra')}
EOF
}
create_all() {  # create_all <apiVersion> <namespace>
  {
    cronjob "$1" "$2" allow "* * * * *" yes '{}'
    cronjob "$1" "$2" forbid "* * * * *" no '{"concurrencyPolicy": "Forbid"}'
    cronjob "$1" "$2" replace "* * * * *" no '{"concurrencyPolicy": "Replace"}'
    cronjob "$1" "$2" suspended "* * * * *" yes '{"suspend": true}'
    cronjob "$1" "$2" tz "*/2 * * * *" yes '{"timeZone": "Asia/Kathmandu"}'
    cronjob "$1" "$2" deadline "* * * * *" yes '{"startingDeadlineSeconds": 10}'
    cronjob "$1" "$2" history "* * * * *" yes '{"successfulJobsHistoryLimit": 1, "failedJobsHistoryLimit": 1}'
    cronjob "$1" "$2" gc "* * * * *" yes '{}'
  } | kc apply -f - >/dev/null
}
# Created a quarter of a minute before a boundary B1, so that both controllers see them first.
sleep_until_second 40
b1=$(( ($(date +%s) / 60 + 1) * 60 ))
create_all batch/v1 e2e-up
create_all cronledger.io/v1 e2e-cl
log "CronJobs created; first fire time $(date -u -d @$b1 +%H:%M:%S)"

at() { local t=$(( b1 + $1 )); local now; now=$(date +%s); [[ $t -le $now ]] || sleep $((t - now)); }
finisher() {  # completes Jobs labelled finish=yes 15 s after their creation, as a Job controller would
  while true; do
    for ns in e2e-up e2e-cl; do finish_jobs "$ns" 15 finish=yes; done
    sleep 3
  done
}
finisher >"$W/finisher.log" 2>&1 &
finisher_pid=$!
e2e_pids+=("$finisher_pid")

# B2+30 s: kill the leader; the other replica takes the Lease over.
at $((60 + 30))
leader="$(kc get lease cronledger-controller -n cronledger-system -o jsonpath='{.spec.holderIdentity}')"
victim=""
for r in a b; do [[ "$leader" == *"_${pid[$r]}" ]] && victim=$r; done  # identity: <host>_<pid>
[[ -n "$victim" ]] || die "the Lease holder '$leader' is neither replica (${pid[a]}, ${pid[b]})"
survivor=a; [[ $victim == a ]] && survivor=b
log "killing the leader (replica $victim, Lease holder $leader)"
kill -9 "${pid[$victim]}"
check "the surviving replica takes the Lease over" wait_until 45 \
  grep -q 'became the leader' "$W/cronledger-$survivor.log"
check "the Lease names the survivor" wait_until 10 bash -c \
  "[[ \"\$($KUBECTL get lease cronledger-controller -n cronledger-system -o jsonpath='{.spec.holderIdentity}')\" == *_${pid[$survivor]} ]]"

# B3+20 s: delete the gc CronJobs; the garbage collector deletes their Jobs.
at $((120 + 20))
kc delete cronjob.batch gc -n e2e-up --cascade=background >/dev/null
kc delete cronjobs.cronledger.io gc -n e2e-cl --cascade=background >/dev/null

# B4+20 s: the status and Events of both sides, with the upstream controller still running.
at $((180 + 20))
kc get cronjobs.batch -n e2e-up -o json >"$W/status-up.json"
kc get cronjobs.cronledger.io -n e2e-cl -o json >"$W/status-cl.json"
kc get events -n e2e-up -o json >"$W/events-up.json"
kc get events -n e2e-cl -o json >"$W/events-cl.json"
kc events -n e2e-cl >"$W/kubectl-events-cl.txt" 2>&1 || true
diff_end=$(date +%s)

# B4+25 s: the upstream controller stops until B7+40 s (fire times B5, B6, B7 missed; B7 is
# missed for longer than the grace, so its late run is a LateRun).
at $((180 + 25))
"$E2E_ROOT/control-plane.sh" kcm-stop "$E2E_CONTROL_PLANE"
kcm_stopped=$(date +%s)
log "kube-controller-manager stopped"
at $((360 + 40))
"$E2E_ROOT/control-plane.sh" kcm-start "$E2E_CONTROL_PLANE"
kcm_started=$(date +%s)
log "kube-controller-manager started again"
# B8+30 s: the end.
at $((420 + 30))
kc get jobs -n e2e-cl -o json >"$W/jobs-end-cl.json"
kc get jobs -n e2e-up -o json >"$W/jobs-end-up.json"
kill "$finisher_pid" 2>/dev/null || true
kill "$shadow_pid"
wait "$shadow_pid" 2>/dev/null || true
check "the shadow auditor's divergences are readable" \
  "$CRONLEDGER" divergences --data-dir "$W/ledger-shadow" -o json >"$W/divergences.json"
check "kubectl events shows cronledger's Events" grep -q SuccessfulCreate "$W/kubectl-events-cl.txt"
stop_all

# --- the comparison ------------------------------------------------------------------------------
python3 "$E2E_ROOT/k8s/compare.py" --work "$W" --b1 "$b1" --diff-end "$diff_end" \
  --kcm-stopped "$kcm_stopped" --kcm-started "$kcm_started" --grace "${grace%s}" \
  || fail "the comparison found differences (above)"

for r in a b; do
  if grep -qi 'forbidden' "$W/cronledger-$r.log"; then fail "replica $r logged a Forbidden answer"; fi
done
finish
