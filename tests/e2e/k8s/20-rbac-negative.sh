#!/usr/bin/env bash
# RBAC for real, the negative side: a ServiceAccount bound to the controller overlay's ClusterRole
# with one rule taken away (list on cronjobs.cronledger.io) cannot run the controller, and cronledger
# says why in words an operator can act on (the API server's Forbidden message: user, verb,
# resource), never becomes ready, and creates nothing. The positive side — every mode doing its
# whole job with the overlays' own ServiceAccounts — is 30-controller-vs-upstream.sh.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

W="$E2E_WORK"
deploy="$REPO_ROOT/deploy/kubernetes"
kc apply -k "$deploy/overlays/controller" >/dev/null
kc wait --for=condition=Established --timeout=60s crd/cronjobs.cronledger.io >/dev/null

# The overlay's ClusterRole without "list" on cronjobs.cronledger.io, bound to a new ServiceAccount.
kc create serviceaccount rbac-negative -n cronledger-system >/dev/null
kc get clusterrole cronledger-controller -o json | jq '
  .metadata = {name: "cronledger-rbac-negative"}
  | .rules |= map(if .apiGroups == ["cronledger.io"] and .resources == ["cronjobs"]
                  then .verbs -= ["list"] else . end)' | kc apply -f - >/dev/null
expect_eq "the reduced role lacks exactly list on cronjobs.cronledger.io" "get watch" \
  "$(kc get clusterrole cronledger-rbac-negative -o json | jq -r '.rules[] | select(.resources == ["cronjobs"]) | .verbs | join(" ")')"
kc create clusterrolebinding cronledger-rbac-negative --clusterrole cronledger-rbac-negative \
  --serviceaccount cronledger-system:rbac-negative >/dev/null
sa_kubeconfig cronledger-system rbac-negative "$W/negative.kubeconfig"

kc create namespace e2e-rbac >/dev/null
kc apply -f - >/dev/null <<EOF
apiVersion: cronledger.io/v1
kind: CronJob
metadata: {name: every-minute, namespace: e2e-rbac}
spec:
  schedule: "* * * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: main, image: registry.example.com/e2e:1}]
EOF

port="$(free_port)"
start_bg "$W/cronledger.log" "$CRONLEDGER" run --kubeconfig "$W/negative.kubeconfig" \
  --resource cronjobs.v1.cronledger.io --data-dir "$W/ledger" \
  --health-probe-bind-address "127.0.0.1:$port"
run_pid=$!
msg='cannot list resource \\?"cronjobs\\?" in API group \\?"cronledger.io\\?"'
check "cronledger reports the Forbidden list with the user, verb and resource" \
  wait_until 60 grep -Eq "forbidden.*system:serviceaccount:cronledger-system:rbac-negative.*$msg" "$W/cronledger.log"
if kill -0 "$run_pid" 2>/dev/null; then
  code="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/readyz" || true)"
  check "it is not ready (readyz $code)" test "$code" != 200
else
  wait "$run_pid" && rc=0 || rc=$?
  check "it exited with an error (exit $rc)" test "$rc" -ne 0
fi
expect_eq "it created no Job" 0 "$(kc get jobs -n e2e-rbac --no-headers 2>/dev/null | wc -l)"
log "its words: $(grep -m1 -i forbidden "$W/cronledger.log" || true)"

stop_all
kc delete cronjobs.cronledger.io --all -n e2e-rbac >/dev/null
kc delete namespace e2e-rbac --wait=false >/dev/null
kc delete clusterrolebinding cronledger-rbac-negative >/dev/null
kc delete clusterrole cronledger-rbac-negative >/dev/null
finish
