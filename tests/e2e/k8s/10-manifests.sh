#!/usr/bin/env bash
# Every kustomize overlay in deploy/kubernetes/ is accepted by the real API server, the CRD is
# structural and its printer columns work in `kubectl get`, and the sample CronJobs apply.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

deploy="$REPO_ROOT/deploy/kubernetes"

kc apply -k "$deploy/crd" >/dev/null
check "the CRD is established" \
  kc wait --for=condition=Established --timeout=60s crd/cronjobs.cronledger.io
# A non-structural schema is accepted but flagged with the NonStructuralSchema condition.
expect_eq "the CRD's schema is structural (no NonStructuralSchema condition)" "" \
  "$(kc get crd cronjobs.cronledger.io -o jsonpath='{.status.conditions[?(@.type=="NonStructuralSchema")].status}')"

# ensure_namespaces <jq filter>: creates (idempotently) the namespaces the filter picks from the
# object list on stdin. An overlay's own Namespace object is created first for real, as `kubectl
# apply` of the whole list would have done before the namespaced objects (a server-side dry run
# does not create it).
ensure_namespaces() {
  local ns
  for ns in $(jq -r "(.items // [.])[] | $1" | sort -u); do
    kc create namespace "$ns" --dry-run=client -o yaml | kc apply -f - >/dev/null
  done
}
for overlay in "$deploy"/overlays/*/; do
  name="$(basename "$overlay")"
  kc apply -k "$overlay" --dry-run=client -o json |
    ensure_namespaces 'select(.kind == "Namespace") | .metadata.name'
  if out="$(kc apply -k "$overlay" --dry-run=server 2>&1)"; then
    pass "overlay $name is accepted by the API server (server-side dry run, $(wc -l <<<"$out") objects)"
  else
    fail "overlay $name is rejected: $out"
  fi
done

# The sample CronJobs, into their namespaces.
samples="$REPO_ROOT/deploy/samples"
kc create -f "$samples" --dry-run=client -o json | ensure_namespaces '.metadata.namespace'
if applied="$(kc apply -f "$samples" -o name 2>&1)"; then
  pass "the sample CronJobs apply ($(wc -l <<<"$applied") objects)"
else
  fail "the sample CronJobs do not apply: $applied"
fi
expect_eq "every sample CronJob is stored" "$(wc -l <<<"$applied")" \
  "$(kc get cronjobs.cronledger.io -A --no-headers | wc -l)"

# Printer columns: kubectl prints the CRD's additionalPrinterColumns (and -o wide adds priority 1).
header="$(kc get cronjobs.cronledger.io -A -o wide | awk "NR == 1")"
for col in NAMESPACE NAME SCHEDULE TIMEZONE SUSPEND ACTIVE "LAST SCHEDULE" "LAST SUCCESSFUL" AGE; do
  check "kubectl get -o wide prints the $col column" grep -q "$col" <<<"$header"
done
row="$(kc get cronjobs.cronledger.io -n finance month-end-close --no-headers)"
check "the Schedule and Timezone columns show the object's values ($row)" \
  grep -q '30 23 28-31 \* \*.*America/New_York' <<<"$row"

kc delete -f "$samples" --wait=false >/dev/null
finish
