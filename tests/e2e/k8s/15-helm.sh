#!/usr/bin/env bash
# The Helm chart (deploy/helm/cronledger) and the monitoring objects (deploy/monitoring), checked
# with the real helm and promtool (tests/e2e/peers) against the real API server:
#   - `helm lint --strict` with each mode and the monitoring objects on;
#   - `helm template` of each mode accepted by the API server (server-side dry run), with the
#     ServiceMonitor and PrometheusRule against the prometheus-operator's own CRDs;
#   - each mode's objects equal in substance to the kustomize overlay of the same mode;
#   - the chart's CRD is the same file as deploy/kubernetes/crd's; the chart's rules the same
#     as deploy/monitoring's; the chart's ServiceMonitor the same as deploy/monitoring's;
#   - `promtool check rules` and `promtool test rules` on the alerts;
#   - `promtool check metrics` on the /metrics of a running cronledger (controller mode with
#     leader election and the audit API, shadow mode, and Kafka mode when a broker runs);
#   - every metric the alerts and the dashboard select is one cronledger serves, and every
#     dashboard query is valid PromQL.
set -euo pipefail
source "$(dirname "$0")/../lib.sh"

chart="$REPO_ROOT/deploy/helm/cronledger"
monitoring="$REPO_ROOT/deploy/monitoring"
overlays="$REPO_ROOT/deploy/kubernetes/overlays"
helper="$E2E_ROOT/k8s/helm_check.py"
work="$E2E_WORK"
ns=cronledger-system
modes=(controller controller-batch shadow kafka)

peers="$("$E2E_ROOT/peers/build.sh" helm promtool prometheus-operator-crds)"
HELM="$(sed -n 1p <<<"$peers")/bin/helm"
PROMTOOL="$(sed -n 2p <<<"$peers")/bin/promtool"
OPERATOR_CRDS="$(sed -n 3p <<<"$peers")"
export HELM_CACHE_HOME="$work/helm/cache" HELM_CONFIG_HOME="$work/helm/config" \
  HELM_DATA_HOME="$work/helm/data"
log "$("$HELM" version --short), promtool $("$PROMTOOL" --version 2>&1 | awk 'NR == 1 {print $3}')"

# --- One source of truth for the CRD and the rules --------------------------------------------
check "the chart's crds/ holds deploy/kubernetes/crd's CRD, byte for byte" \
  cmp "$REPO_ROOT/deploy/kubernetes/crd/cronjobs.cronledger.io.yaml" "$chart/crds/cronjobs.cronledger.io.yaml"
expect_eq "the chart's crds/ holds nothing else" "cronjobs.cronledger.io.yaml" "$(ls "$chart/crds")"
check "the chart's rule file is deploy/monitoring's, byte for byte" \
  cmp "$monitoring/cronledger.rules.yaml" "$chart/files/cronledger.rules.yaml"
check "deploy/monitoring/prometheusrule.yaml carries the rule file's groups" \
  python3 "$helper" rule-groups "$monitoring/cronledger.rules.yaml" "$monitoring/prometheusrule.yaml"

# --- helm lint --------------------------------------------------------------------------------
for mode in "${modes[@]}"; do
  check "helm lint --strict, mode $mode" "$HELM" lint --strict "$chart" --set mode="$mode"
  check "helm lint --strict, mode $mode with the ServiceMonitor and PrometheusRule" \
    "$HELM" lint --strict "$chart" --set mode="$mode" \
    --set serviceMonitor.enabled=true --set prometheusRule.enabled=true
done
check "helm lint --strict with every other value set" "$HELM" lint --strict "$chart" \
  --set mode=kafka --set replicas=5 --set fullnameOverride=cl --set image.tag=0.2.0 \
  --set kafka.topicPrefix=team-a --set kafka.checkpointInterval=1m \
  --set kafka.auditStore.storage=100Gi --set kafka.auditStore.storageClassName=fast \
  --set ledger.storageClassName=fast --set ledger.storage=50Gi --set 'extraArgs={--workers=8}' --set api.tokenSecret=audit-token --set rbac.create=false \
  --set serviceMonitor.enabled=true --set 'serviceMonitor.labels.release=prom' \
  --set prometheusRule.enabled=true --set nameOverride=ledger
out="$("$HELM" template cronledger "$chart" --set mode=kafka --set kafka.checkpointInterval=1m 2>&1)" || true
check "kafka.checkpointInterval reaches the replicas' arguments" \
  grep -q -- '- --kafka-checkpoint-interval=1m' <<<"$out"
out="$("$HELM" template cronledger "$chart" --set mode=kafka --set kafka.topicPrefix=team-a 2>&1)" || true
check "kafka.topicPrefix reaches the audit store's arguments" \
  python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(sys.stdin) if d and d["kind"] == "Deployment"
        and d["metadata"]["name"].endswith("-audit-store")]
sys.exit(0 if len(docs) == 1 and "--kafka-topic-prefix=team-a"
         in docs[0]["spec"]["template"]["spec"]["containers"][0]["args"] else 1)' <<<"$out"
expect_eq "kafka.auditStore.enabled=false leaves the audit store out" 0 \
  "$("$HELM" template cronledger "$chart" --set mode=kafka --set kafka.auditStore.enabled=false |
    grep -c 'audit-store' || true)"
# Values the chart refuses, with the reason.
if out="$("$HELM" template cronledger "$chart" --set mode=batch 2>&1)"; then
  fail "an unknown mode is accepted"
else
  check "an unknown mode is refused with the list of modes" grep -q 'mode must be one of controller, controller-batch, shadow, kafka' <<<"$out"
fi
if out="$("$HELM" template cronledger "$chart" --set mode=shadow --set replicas=2 2>&1)"; then
  fail "shadow mode with 2 replicas is accepted"
else
  check "shadow mode with 2 replicas is refused" grep -q 'shadow mode runs one replica' <<<"$out"
fi

# --- The prometheus-operator's CRDs, for the server-side dry runs ------------------------------
for crd in servicemonitors prometheusrules; do
  # Server-side apply: the CRDs are too big for the last-applied annotation of a client-side apply.
  kc apply --server-side -f "$OPERATOR_CRDS/monitoring.coreos.com_$crd.yaml" >/dev/null
  check "the prometheus-operator CRD $crd.monitoring.coreos.com is established" \
    kc wait --for=condition=Established --timeout=60s "crd/$crd.monitoring.coreos.com"
done
kc create namespace "$ns" --dry-run=client -o yaml | kc apply -f - >/dev/null

# --- Each mode: accepted by the API server, equal to its overlay -------------------------------
for mode in "${modes[@]}"; do
  out="$work/chart-$mode.yaml"
  "$HELM" template cronledger "$chart" -n "$ns" --include-crds --set mode="$mode" \
    --set serviceMonitor.enabled=true --set prometheusRule.enabled=true >"$out"
  kinds="$(grep '^kind: ' "$out" | sort | uniq -c | awk '{printf "%s%s×%s", sep, $3, $1; sep=" "}')"
  if res="$(kc apply --dry-run=server -f "$out" 2>&1)"; then
    pass "mode $mode: helm template is accepted by the API server ($(wc -l <<<"$res") objects: $kinds)"
  else
    fail "mode $mode: helm template is rejected: $res"
  fi
  "$HELM" template cronledger "$chart" -n "$ns" --set mode="$mode" >"$work/chart-$mode-plain.yaml"
  kc kustomize "$overlays/$mode" >"$work/overlay-$mode.yaml"
  if res="$(python3 "$helper" same-objects "$work/chart-$mode-plain.yaml" "$work/overlay-$mode.yaml")"; then
    pass "mode $mode: the chart's objects equal the overlay's ($(tail -1 <<<"$res"))"
  else
    fail "mode $mode: the chart differs from overlays/$mode: $res"
  fi
done
expect_eq "the CRD is in the chart's output once (crds/)" 1 \
  "$(grep -c '^kind: CustomResourceDefinition' "$work/chart-controller.yaml")"
expect_eq "the ServiceMonitor and PrometheusRule are off by default" 0 \
  "$(grep -c '^kind: \(ServiceMonitor\|PrometheusRule\)' "$work/chart-controller-plain.yaml" || true)"
check "the chart's ServiceMonitor is deploy/monitoring's" \
  python3 "$helper" same-spec "$work/chart-controller.yaml" "$monitoring/servicemonitor.yaml" ServiceMonitor
check "the chart's PrometheusRule carries the rule file's groups" \
  python3 "$helper" rule-groups "$monitoring/cronledger.rules.yaml" "$work/chart-controller.yaml"
"$HELM" template cl "$chart" -n "$ns" --set nameOverride=ledger --set prometheusRule.enabled=true \
  >"$work/chart-renamed.yaml"
check "with nameOverride the alerts select the job the ServiceMonitor's jobLabel gives" \
  python3 "$helper" rule-groups "$monitoring/cronledger.rules.yaml" "$work/chart-renamed.yaml" ledger
if res="$(kc apply --dry-run=server -f "$monitoring/servicemonitor.yaml" -f "$monitoring/prometheusrule.yaml" 2>&1)"; then
  pass "deploy/monitoring's ServiceMonitor and PrometheusRule are accepted by the API server"
else
  fail "deploy/monitoring is rejected: $res"
fi

# --- promtool on the rules --------------------------------------------------------------------
check "promtool check rules" "$PROMTOOL" check rules "$monitoring/cronledger.rules.yaml"
if res="$(cd "$monitoring" && "$PROMTOOL" test rules cronledger.rules.test.yaml 2>&1)"; then
  pass "promtool test rules: $(tr '\n' ' ' <<<"$res")"
else
  fail "promtool test rules: $res"
fi
# Every alert of the rule file is exercised by the unit tests.
# Every alert of the rule file has a test in which it fires and one in which it does not.
expect_eq "every alert is tested firing and not firing" "" \
  "$(python3 "$helper" untested-alerts "$monitoring/cronledger.rules.yaml" "$monitoring/cronledger.rules.test.yaml")"

# --- The dashboard's queries parse ----------------------------------------------------------
python3 "$helper" dashboard-rules "$monitoring/grafana-dashboard.json" "$work/dashboard.rules.yaml" >/dev/null
check "every dashboard query is valid PromQL (promtool check rules on them as recording rules)" \
  "$PROMTOOL" check rules "$work/dashboard.rules.yaml"

# --- The metrics a running cronledger serves ------------------------------------------------------
printf 'e2e-metrics-token\n' >"$work/token"
kc apply -k "$REPO_ROOT/deploy/kubernetes/crd" >/dev/null
declare -A mport aport
# start_run <name> <args...>: cronledger run with its metrics and audit API on free ports.
start_run() {
  local name="$1"; shift
  mport[$name]="$(free_port)"; aport[$name]="$(free_port)"
  start_bg "$work/run-$name.log" "$CRONLEDGER" run --kubeconfig "$KUBECONFIG" \
    --data-dir "$work/data-$name" --sync none \
    --metrics-bind-address "127.0.0.1:${mport[$name]}" --health-probe-bind-address 0 \
    --listen "127.0.0.1:${aport[$name]}" --token-file "$work/token" "$@"
}
start_run controller --resource cronjobs.v1.cronledger.io --leader-elect \
  --leader-elect-namespace "$ns" --leader-elect-id "e2e-helm-$$"
start_run shadow --shadow --resource cronjobs.v1.batch
names=(controller shadow)
if [[ -n "${KAFKA_BROKERS:-}" ]]; then
  prefix="e2e-helm-$(date +%s)-$RANDOM"
  start_run kafka --resource cronjobs.v1.cronledger.io --kafka-brokers "$KAFKA_BROKERS" \
    --kafka-topic-prefix "$prefix" --kafka-watch-topic "$prefix.watch" --kafka-source-id kafka-0
  names+=(kafka)
else
  fail "KAFKA_BROKERS is not set: the Kafka-mode metrics cannot be read (tests/e2e/run.sh starts a broker)"
fi
# A CronJob that never fires in the run, so that the controller's ledger holds a decision (the
# audit API serves cronledger_ledger_horizon_timestamp_seconds from the first one on).
kc create namespace e2e-helm --dry-run=client -o yaml | kc apply -f - >/dev/null
kc apply -f - >/dev/null <<'YAML'
apiVersion: cronledger.io/v1
kind: CronJob
metadata: {name: yearly, namespace: e2e-helm}
spec:
  schedule: "0 0 1 1 *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
YAML
scrape() { curl -sf "http://127.0.0.1:${mport[$1]}/metrics"; }
api_scrape() { curl -sf -H "Authorization: Bearer e2e-metrics-token" "http://127.0.0.1:${aport[$1]}/metrics"; }
check "the controller's ledger holds a decision for the CronJob (its audit API serves the horizon)" \
  wait_until 60 sh -c "curl -sf -H 'Authorization: Bearer e2e-metrics-token' http://127.0.0.1:${aport[controller]}/metrics | grep -q '^cronledger_ledger_horizon_timestamp_seconds '"
: >"$work/metrics-all.txt"
for name in "${names[@]}"; do
  if ! wait_until 60 sh -c "curl -sf http://127.0.0.1:${mport[$name]}/metrics | grep -q '^cronledger_acting 1'"; then
    fail "cronledger run ($name) does not act within 60 s: $(tail -5 "$work/run-$name.log")"
    continue
  fi
  scrape "$name" >"$work/metrics-$name.txt"
  api_scrape "$name" >"$work/api-metrics-$name.txt"
  for f in metrics api-metrics; do
    if res="$("$PROMTOOL" check metrics <"$work/$f-$name.txt" 2>&1)"; then
      pass "promtool check metrics: the $f of cronledger run ($name), $(grep -c '^# TYPE' "$work/$f-$name.txt") families"
    else
      fail "promtool check metrics on the $f of cronledger run ($name): $res"
    fi
    cat "$work/$f-$name.txt" >>"$work/metrics-all.txt"
  done
done
stop_all
files=("$monitoring/cronledger.rules.yaml" "$monitoring/grafana-dashboard.json")
if res="$(python3 "$helper" served-names "$work/metrics-all.txt" "${files[@]}")"; then
  pass "the alerts and the dashboard select only served metrics: $(tr '\n' ' ' <<<"$res")"
else
  fail "the alerts or the dashboard select metrics cronledger does not serve: $res"
fi

kc delete cronjobs.cronledger.io yearly -n e2e-helm >/dev/null
kc delete namespace e2e-helm --wait=false >/dev/null
for crd in servicemonitors prometheusrules; do
  kc delete crd "$crd.monitoring.coreos.com" --wait=false >/dev/null
done
finish
