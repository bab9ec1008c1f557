#!/usr/bin/env bash
# The watch relay and three `run --kafka-watch-topic` replicas in one consumer group, against the
# real broker (KAFKA_BROKERS) and a real kube-apiserver (E2E_KUBECONFIG, an admin kubeconfig; the
# script installs the CRD; kubectl from E2E_KUBECTL or PATH). Skipped (exit 77) without
# E2E_KUBECONFIG. The relay and the replicas authenticate as ServiceAccounts bound to the Kafka
# overlay's ClusterRoles (deploy/kubernetes/overlays/kafka/rbac.yaml), with tokens the API server
# issues: RBAC for real, least privilege shown by doing the whole job with it.
#
#   kube-apiserver --relay--> P.watch --(group G, coordinator: the broker)--> run a, run b
#                                                     a, b, c --createJob--> kube-apiserver
#                                                     a, b, c --outbox--> P.decisions, P.ledger,
#                                                                         P.checkpoints
#                                          P.ledger, P.decisions --> audit-store (one store)
#
# Eight CronJobs ("* * * * *", Allow) in a fresh namespace. Replicas a and b run over a minute
# boundary; c joins 5 s after it (the first rebalance); 15 s after the next boundary b is
# SIGKILLed (the second); a and c run two more boundaries. Asserts, reading P.watch and
# P.decisions with kcat and the Jobs with kubectl:
#  relay (P.watch): every CronJob and every Job of the namespace is on the topic, keyed by its
#    CronJob, each key on one partition, each object's resourceVersions increasing;
#  group: a and b owned partitions, together all of them; after the join a, b and c; after the
#    kill a and c;
#  none lost: every CronJob has a Job and a createJob decision for every minute from the first
#    full minute after both replicas were ready to the last minute before they were stopped;
#  none twice: per replica, no fire time has two createJob decisions; across replicas, a fire
#    time decided by two is only a hand-over's (scheduled no later than the kill: the old owner's
#    create and the new owner's adoption of the Job through AlreadyExists, docs/kafka.md), and
#    between the hand-overs each CronJob is decided by one replica only;
#  ledger stream (P.ledger): records of both replicas, no seq twice per replica, seqs increasing
#    per key and replica, every value's seq its header's; replica a (stopped with SIGTERM, so its
#    outbox drained) has every input of its store on the topic, 1..its last seq, and so every
#    decision on P.decisions;
#  checkpoints (P.checkpoints): a checkpoint of each replica, keyed by it; a's last covers its whole
#    store and each replica's store verifies against its last checkpoint (`verify-trail`);
#  the audit store (`audit-store --until-caught-up` over P.ledger and P.decisions): holds the three
#    sources; `report adherence` of the merged store accounts every fire time of every CronJob
#    exactly once (created, by one source, the other's record of a hand-over fire time kept in
#    alsoDecidedBy); `why` answers a hand-over fire time naming both sources; `replay --verify`
#    matches per source.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
if [[ -z "${E2E_KUBECONFIG:-}" ]]; then
  echo "[watch_group] SKIP: E2E_KUBECONFIG is not set (needs a real kube-apiserver with the cronledger CRD)"
  exit 77
fi
require_env CRONLEDGER E2E_WORK KAFKA_BROKERS
kubectl_bin="${E2E_KUBECTL:-kubectl}"
kc() { "$kubectl_bin" --kubeconfig "$E2E_KUBECONFIG" "$@"; }

work="$E2E_WORK/watch_group"
rm -rf "$work" && mkdir -p "$work"
prefix="$(unique_prefix wg)"
ns="e2e-wg-$(date +%s)-$RANDOM"
group="$prefix-group"
cronjobs=(cj0 cj1 cj2 cj3 cj4 cj5 cj6 cj7)

controller_sa="e2e-wg-controller-$RANDOM"
cleanup() {
  cleanup_pids
  kc delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  kc delete clusterrolebinding "$controller_sa" >/dev/null 2>&1 || true
  kc delete serviceaccount "$controller_sa" -n cronledger-system >/dev/null 2>&1 || true
  report_time
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
now_minute() { echo $(( $(date +%s) / 60 )); }
# wait_for_boundary: sleeps until SECONDS_PAST seconds after the next minute boundary.
wait_past_boundary() {
  local past="$1" now
  now=$(date +%s)
  sleep $(( 60 - now % 60 + past ))
}
metric() {  # metric PORT NAME: a gauge/counter value from a replica's /metrics
  curl -fsS "http://127.0.0.1:$1/metrics" 2>/dev/null | awk -v n="$2" '$1 == n { print $2 }'
}

kc create namespace "$ns" >/dev/null
kc apply -k "$E2E_REPO/deploy/kubernetes/crd" >/dev/null
kc wait --for=condition=Established --timeout=60s crd/cronjobs.cronledger.io >/dev/null
# The overlay's RBAC. Its controller role is bound to the ServiceAccount `cronledger`, which the
# controller-mode scripts bind to their own role too; a ServiceAccount of this script's, bound to
# the same ClusterRole, shows that the Kafka role alone is enough.
kc apply -f "$E2E_REPO/deploy/kubernetes/base/namespace.yaml" \
  -f "$E2E_REPO/deploy/kubernetes/overlays/kafka/rbac.yaml" >/dev/null
kc create serviceaccount "$controller_sa" -n cronledger-system >/dev/null
kc create clusterrolebinding "$controller_sa" --clusterrole cronledger-kafka-controller \
  --serviceaccount "cronledger-system:$controller_sa" >/dev/null
sa_kubeconfig cronledger-system cronledger-relay "$work/relay.kubeconfig"
sa_kubeconfig cronledger-system "$controller_sa" "$work/controller.kubeconfig"
for cj in "${cronjobs[@]}"; do
  cat <<EOF
---
apiVersion: cronledger.io/v1
kind: CronJob
metadata:
  name: $cj
  namespace: $ns
spec:
  schedule: "* * * * *"
  concurrencyPolicy: Allow
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: main
              image: busybox
              command: ["true"]
EOF
done >"$work/cronjobs.yaml"
kc apply -f "$work/cronjobs.yaml" >/dev/null
say "namespace $ns with ${#cronjobs[@]} CronJobs; broker $KAFKA_BROKERS, topic prefix $prefix"

"$CRONLEDGER" relay --kafka-brokers "$KAFKA_BROKERS" --kubeconfig "$work/relay.kubeconfig" \
  --namespace "$ns" --kafka-topic-prefix "$prefix" 2>"$work/relay.err" &
E2E_PIDS+=($!)
relay_pid=$!
for _ in $(seq 1 120); do
  (( $(topic_count "$KAFKA_BROKERS" "$prefix.watch") >= ${#cronjobs[@]} )) && break
  sleep 0.5
done
check "the relay published the CronJobs to $prefix.watch" \
  test "$(topic_count "$KAFKA_BROKERS" "$prefix.watch")" -ge "${#cronjobs[@]}"
partitions="$(kcat -b "$KAFKA_BROKERS" -L -t "$prefix.watch" | grep -c '^    partition ')"
check "$prefix.watch has several partitions ($partitions)" test "$partitions" -gt 1

# A short session timeout: the killed replica leaves the group within seconds.
printf '%s\n' session.timeout.ms=6000 heartbeat.interval.ms=500 >"$work/consumer.properties"
declare -A port pid
start_replica() {
  local r="$1"
  port[$r]="$(free_port)"
  "$CRONLEDGER" run --kubeconfig "$work/controller.kubeconfig" --data-dir "$work/data-$r" --sync none \
    --kafka-brokers "$KAFKA_BROKERS" --kafka-topic-prefix "$prefix" \
    --kafka-watch-topic "$prefix.watch" --kafka-group-id "$group" --kafka-source-id "$r" \
    --kafka-config "$work/consumer.properties" --metrics-bind-address "127.0.0.1:${port[$r]}" \
    --kafka-checkpoint-interval 20s \
    2>"$work/run-$r.err" &
  pid[$r]=$!
  E2E_PIDS+=("${pid[$r]}")
}
start_replica a
start_replica b

assigned() { local v; v="$(metric "${port[$1]}" cronledger_kafka_watch_assigned_partitions)"; echo "${v:-0}"; }
caught_up() { local v; v="$(metric "${port[$1]}" cronledger_kafka_watch_caught_up)"; echo "${v:-0}"; }
for _ in $(seq 1 180); do
  if (( $(assigned a) > 0 && $(assigned b) > 0 && $(assigned a) + $(assigned b) == partitions )) &&
     [[ "$(caught_up a)" == 1 && "$(caught_up b)" == 1 ]]; then
    break
  fi
  sleep 0.5
done
check "both replicas own partitions of the group, together all $partitions (a: $(assigned a), b: $(assigned b)), and caught up" \
  test "$(assigned a)" -gt 0 -a "$(assigned b)" -gt 0 -a $(( $(assigned a) + $(assigned b) )) -eq "$partitions" \
  -a "$(caught_up a)" == 1 -a "$(caught_up b)" == 1
# The group's forming is a hand-over too: a replica that joined first may own every partition for
# a while, and on a loaded machine decide a fire time before the other one takes its share.
formed_time=$(date +%s)
first_minute=$(( $(now_minute) + 1 ))

# A boundary with a and b; c joins 5 s after it (first rebalance); b crashes 15 s after the next
# boundary (second rebalance).
wait_past_boundary 5
join_time=$(date +%s)
start_replica c
say "replica c started at $(date -u -d "@$join_time" +%H:%M:%S)"
for _ in $(seq 1 120); do
  if (( $(assigned a) > 0 && $(assigned b) > 0 && $(assigned c) > 0 &&
        $(assigned a) + $(assigned b) + $(assigned c) == partitions )) &&
     [[ "$(caught_up a)" == 1 && "$(caught_up b)" == 1 && "$(caught_up c)" == 1 ]]; then
    break
  fi
  sleep 0.5
done
joined_time=$(date +%s)
check "after c joined a, b and c own partitions, together all $partitions (a: $(assigned a), b: $(assigned b), c: $(assigned c)), and caught up" \
  test "$(assigned a)" -gt 0 -a "$(assigned b)" -gt 0 -a "$(assigned c)" -gt 0 \
  -a $(( $(assigned a) + $(assigned b) + $(assigned c) )) -eq "$partitions" \
  -a "$(caught_up a)" == 1 -a "$(caught_up b)" == 1 -a "$(caught_up c)" == 1
wait_past_boundary 15
kill -KILL "${pid[b]}"
kill_time=$(date +%s)
say "replica b SIGKILLed at $(date -u -d "@$kill_time" +%H:%M:%S)"
for _ in $(seq 1 120); do
  (( $(assigned a) + $(assigned c) == partitions )) && [[ "$(caught_up a)" == 1 && "$(caught_up c)" == 1 ]] && break
  sleep 0.5
done
check "a and c took over all $partitions partitions (a: $(assigned a), c: $(assigned c)) and caught up" \
  test $(( $(assigned a) + $(assigned c) )) -eq "$partitions" -a "$(caught_up a)" == 1 -a "$(caught_up c)" == 1
# Two more boundaries with a and c; 20 s after the last for their Jobs to be created.
wait_past_boundary 5
wait_past_boundary 20
last_minute=$(( $(now_minute) ))
for r in a c; do
  kill -TERM "${pid[$r]}"
  wait "${pid[$r]}" || fail "replica $r did not exit 0 on SIGTERM (see $work/run-$r.err)"
done
kill -TERM "$relay_pid"
wait "$relay_pid" || fail "the relay did not exit 0 on SIGTERM (see $work/relay.err)"
E2E_PIDS=()

# --- the relay's topic -------------------------------------------------------------------------
read_topic "$KAFKA_BROKERS" "$prefix.watch" "$work/watch.tsv"
check "P.watch: each key on one partition" one_partition_per_key "$work/watch.tsv"
# kind TAB name TAB resourceVersion TAB key, in offset order (bookmarks have no name).
paste <(cut -f3 "$work/watch.tsv") \
  <(jq -r '[.object.kind, .object.metadata.name // "", .object.metadata.resourceVersion] | @tsv' \
     "$work/watch.tsv.values") | awk -F'\t' -v OFS='\t' '$3 != "" { print $2, $3, $4, $1 }' >"$work/watch-objects.tsv"
check "P.watch: each object's resourceVersions never go back (offset order)" awk -F'\t' '
  { k = $1 "/" $2; if ((k in rv) && $3 + 0 < rv[k]) { print "  " k ": " $3 " after " rv[k]; bad = 1 } rv[k] = $3 + 0 }
  END { exit bad }' "$work/watch-objects.tsv"
kc get jobs -n "$ns" -o json | jq -r '.items[] | [.metadata.name,
  ((.metadata.ownerReferences // [])[] | select(.controller) | .name)] | @tsv' >"$work/jobs.tsv"
check "the API server holds Jobs" test -s "$work/jobs.tsv"
for cj in "${cronjobs[@]}"; do
  grep -q "^CronJob	$cj	.*	$ns/$cj\$" "$work/watch-objects.tsv" ||
    fail "P.watch has no event of CronJob $cj keyed $ns/$cj"
done
while IFS=$'\t' read -r job owner; do
  grep -q "^Job	$job	.*	$ns/$owner\$" "$work/watch-objects.tsv" ||
    fail "P.watch has no event of Job $job keyed by its CronJob $ns/$owner"
done <"$work/jobs.tsv"
say "ok: P.watch has every CronJob and every Job ($(wc -l <"$work/jobs.tsv")), keyed by CronJob"

# --- decisions ---------------------------------------------------------------------------------
read_topic "$KAFKA_BROKERS" "$prefix.decisions" "$work/decisions.tsv"
check "P.decisions: records of every replica (cronledger-source a, b and c)" \
  test "$(cut -f6 "$work/decisions.tsv" | sort -u | tr '\n' ' ')" == "a b c "
check "P.decisions: no seq twice per replica" no_duplicate_seq "$work/decisions.tsv"
check "P.decisions: seqs increase per key and replica" seq_increasing_per_key "$work/decisions.tsv"
# source TAB cronjob TAB scheduled unix minute TAB decided at (unix s), for each createJob.
paste <(cut -f6 "$work/decisions.tsv") <(jq -r '[.action, .cronJob.name, (.scheduledTime // ""), .time] | @tsv' \
  "$work/decisions.tsv.values") | awk -F'\t' -v OFS='\t' '$2 == "createJob" { print $1, $3, $4, $5 }' |
  while IFS=$'\t' read -r src cj at decided; do
    echo "$src	$cj	$(( $(date -d "$at" +%s) / 60 ))	$(date -d "$decided" +%s)"
  done >"$work/creates.tsv"
check "per replica, no fire time has two createJob decisions" awk -F'\t' '
  { k = $1 "|" $2 "|" $3; if (seen[k]++) { print "  " $1 ": " $2 " @" $3 " twice"; bad = 1 } } END { exit bad }' \
  "$work/creates.tsv"
kill_minute=$(( kill_time / 60 ))
check "a fire time decided by two replicas is only a hand-over's (at or before minute $kill_minute)" \
  awk -F'\t' -v km="$kill_minute" '
  { k = $2 "|" $3; if (index(srcs[k], $1) == 0) srcs[k] = srcs[k] $1 } END {
    for (k in srcs) if (length(srcs[k]) > 1) { split(k, p, "|"); n++; if (p[2] + 0 > km) { print "  " k " decided by " srcs[k]; bad = 1 } }
    if (n) print "  (" n " hand-over fire time(s) decided by two)"
    exit bad }' "$work/creates.tsv"
# For the audit store below. Each fire time's first decider (the replica that created the Job;
# when two decided it, the new owner's record is its later adoption of that Job):
#   first.tsv:   cronjob TAB minute TAB first decider TAB every decider
#   moved:       the first fire time of a CronJob decided by another replica than the one before
#                (a hand-over): cronjob TAB minute TAB new decider TAB previous decider
awk -F'\t' -v OFS='\t' '{ k = $2 "\t" $3; if (index(srcs[k], $1) == 0) srcs[k] = srcs[k] $1
    if (!(k in at) || $4 < at[k]) { at[k] = $4; first[k] = $1 } }
  END { for (k in first) print k, first[k], srcs[k] }' "$work/creates.tsv" | sort >"$work/first.tsv"
moved="$(awk -F'\t' -v OFS='\t' '$1 == c && $3 != prev { print $1, $2, $3, prev; exit }
  { c = $1; prev = $3 }' <(sort -k1,1 -k2,2n "$work/first.tsv"))"
# Decided after the group formed and before c joined, or after the group settled again and before
# the kill: the new owner's records of a hand-over's fire times (its adoption of the Jobs the old
# owner created) come after the hand-over.
check "between the hand-overs each CronJob is decided by one replica only" awk -F'\t' \
  -v ft="$formed_time" -v jt="$join_time" -v st="$joined_time" -v kt="$kill_time" '
  $4 > ft && $4 < jt { if (($2 in s) && s[$2] != $1) { print "  " $2 " by " s[$2] " and " $1 " before the join"; bad = 1 } s[$2] = $1 }
  $4 > st && $4 < kt { if (($2 in t) && t[$2] != $1) { print "  " $2 " by " t[$2] " and " $1 " after the join"; bad = 1 } t[$2] = $1 }
  END { exit bad }' "$work/creates.tsv"
missing=0
for cj in "${cronjobs[@]}"; do
  for (( m = first_minute; m <= last_minute; m++ )); do
    grep -q "^$cj-$m	" "$work/jobs.tsv" || { say "  missing Job $cj-$m"; missing=$((missing + 1)); }
    awk -F'\t' -v c="$cj" -v m="$m" '$2 == c && $3 == m { f = 1 } END { exit !f }' "$work/creates.tsv" ||
      { say "  no createJob decision for $cj @$m"; missing=$((missing + 1)); }
  done
done
check_eq "every CronJob has a Job and a createJob decision for each minute $first_minute..$last_minute" 0 "$missing"

# --- the ledger stream and the checkpoints ------------------------------------------------------
read_topic "$KAFKA_BROKERS" "$prefix.ledger" "$work/ledger.tsv"
check "P.ledger: records of every replica (cronledger-source a, b and c)" \
  test "$(cut -f6 "$work/ledger.tsv" | sort -u | tr '\n' ' ')" == "a b c "
check "P.ledger: every record is cronledger.ledger/v1 with a seq" all_headers "$work/ledger.tsv" cronledger.ledger/v1
check "P.ledger: no seq twice per replica" no_duplicate_seq "$work/ledger.tsv"
check "P.ledger: seqs increase per key and replica" seq_increasing_per_key "$work/ledger.tsv"
check "P.ledger: every value's seq is its header's" values_match_headers "$work/ledger.tsv"
read_topic "$KAFKA_BROKERS" "$prefix.checkpoints" "$work/checkpoints.tsv"
check "P.checkpoints: checkpoints of every replica, keyed by the replica" \
  test "$(cut -f3,6 "$work/checkpoints.tsv" | awk -F'\t' '$1 == $2 { print $1 }' | sort -u | tr '\n' ' ')" == "a b c "
check "P.checkpoints: every record is cronledger.checkpoint/v1" \
  awk -F'\t' '$5 != "cronledger.checkpoint/v1" { bad = 1 } END { exit bad }' "$work/checkpoints.tsv"
for r in a b c; do
  # The replica's last checkpoint, as an auditor saves it from the topic.
  paste <(cut -f6 "$work/checkpoints.tsv") "$work/checkpoints.tsv.values" |
    awk -F'\t' -v r="$r" '$1 == r { last = $2 } END { print last }' >"$work/checkpoint-$r.json"
  check "replica $r's store verifies against its last checkpoint on P.checkpoints" \
    "$CRONLEDGER" verify-trail --data-dir "$work/data-$r" --checkpoint "$work/checkpoint-$r.json"
done
# a and c stopped gracefully: the last checkpoint of each (taken after its controller stopped)
# covers its whole store, and its drained outbox put every record of both logs on the topics.
for r in a c; do
  last_input="$(jq -r '.items[] | select(.log == "inputs") | .lastSeq' "$work/checkpoint-$r.json")"
  last_decision="$(jq -r '.items[] | select(.log == "decisions") | .lastSeq' "$work/checkpoint-$r.json")"
  check "replica $r's last checkpoint covers its store (verify-trail counts nothing not covered)" \
    bash -c '! "$1" verify-trail --data-dir "$2" --checkpoint "$3" | grep -q "not covered"' _ \
    "$CRONLEDGER" "$work/data-$r" "$work/checkpoint-$r.json"
  check_eq "P.ledger holds replica $r's inputs 1..$last_input" "$last_input $last_input" \
    "$(awk -F'\t' -v r="$r" '$6 == r { n++; if ($4 + 0 > m) m = $4 + 0 } END { print n + 0, m + 0 }' "$work/ledger.tsv")"
  check_eq "P.decisions holds replica $r's decisions 1..$last_decision" "$last_decision $last_decision" \
    "$(awk -F'\t' -v r="$r" '$6 == r { n++; if ($4 + 0 > m) m = $4 + 0 } END { print n + 0, m + 0 }' "$work/decisions.tsv")"
done

# --- the audit store of the deployment ---------------------------------------------------------
"$CRONLEDGER" audit-store --kafka-brokers "$KAFKA_BROKERS" --kafka-topic-prefix "$prefix" \
  --data-dir "$work/store" --until-caught-up -o json >"$work/store-sources.json" 2>"$work/store.err" ||
  fail "audit-store --until-caught-up failed (see $work/store.err)"
check_eq "the audit store holds the three sources" "a b c" \
  "$(jq -r '[.items[].source] | sort | join(" ")' "$work/store-sources.json")"
for r in a c; do
  check_eq "the audit store's copy of $r ends at $r's last input and decision" \
    "$(jq -r '[(.items[] | select(.log == "inputs") | .lastSeq), (.items[] | select(.log == "decisions") | .lastSeq)] | join(" ")' "$work/checkpoint-$r.json")" \
    "$(jq -r --arg r "$r" '.items[] | select(.source == $r) | "\(.lastInputSeq) \(.lastDecisionSeq)"' "$work/store-sources.json")"
done
since="$(date -u -d "@$(( first_minute * 60 ))" +%Y-%m-%dT%H:%M:%SZ)"
# --until is exclusive: one second past the last fire time.
until="$(date -u -d "@$(( last_minute * 60 + 1 ))" +%Y-%m-%dT%H:%M:%SZ)"
"$CRONLEDGER" report adherence --data-dir "$work/store" -n "$ns" --since "$since" --until "$until" \
  --slots -o json >"$work/adherence.json" 2>"$work/adherence.err" ||
  fail "report adherence on the audit store failed (see $work/adherence.err)"
# cronjob TAB minute TAB status TAB source TAB sources of alsoDecidedBy, per slot of the window.
jq -r '.items[] | .name as $n | .slots[] | [$n, (.scheduledTime | fromdateiso8601 / 60 | floor),
  .status, (.source // ""), ([.alsoDecidedBy[]?.source] | join(","))] | @tsv' \
  "$work/adherence.json" >"$work/slots.tsv"
bad=0
for cj in "${cronjobs[@]}"; do
  for (( m = first_minute; m <= last_minute; m++ )); do
    got="$(awk -F'\t' -v c="$cj" -v m="$m" '$1 == c && $2 == m { n++; s = $3 } END { print n + 0, s }' "$work/slots.tsv")"
    [[ "$got" == "1 created" ]] || { say "  $cj @$m: $got"; bad=$((bad + 1)); }
  done
done
check_eq "report adherence on the audit store: each fire time of each CronJob, $first_minute..$last_minute, once and created" 0 "$bad"
check_eq "report adherence on the audit store: nothing unaccounted or unexpected" "0 0" \
  "$(jq -r '[([.items[].unaccounted] | add), ([.items[].unexpected] | add)] | join(" ")' "$work/adherence.json")"
# Each slot counts its fire time's first decider; a second decider's record is in alsoDecidedBy.
check "report adherence on the audit store: each slot counts the first decider's create, a second decider's record in alsoDecidedBy" \
  awk -F'\t' 'NR == FNR { k = $1 "\t" $2; first[k] = $3; all[k] = $4; next }
    { k = $1 "\t" $2; n = $5 == "" ? 0 : split($5, also, ",") }
    (k in first) && ($4 != first[k] || length(all[k]) != 1 + n ||
      ($5 != "" && index(all[k], $5) == 0)) { print "  " k ": slot " $4 " also " $5 ", decided by " all[k]; bad = 1 }
    END { exit bad }' "$work/first.tsv" "$work/slots.tsv"
say "  $(awk -F'\t' 'length($4) > 1 { n++ } END { print n + 0 }' "$work/first.tsv") fire time(s) decided by two replicas"
[[ -n "$moved" ]] || fail "no CronJob changed replicas (no hand-over to ask why about)"
IFS=$'\t' read -r h_cj h_minute h_first h_prev <<<"$moved"
h_time="$(date -u -d "@$(( h_minute * 60 ))" +%Y-%m-%dT%H:%M:%SZ)"
"$CRONLEDGER" why "$ns/$h_cj" --scheduled "$h_time" --data-dir "$work/store" -o json >"$work/why.json" \
  2>"$work/why.err" || fail "why $ns/$h_cj --scheduled $h_time on the audit store failed (see $work/why.err)"
check "why $ns/$h_cj --scheduled $h_time (its first fire time after moving from $h_prev to $h_first) on the audit store: created, from $h_first's ledger, $h_prev's answer named" \
  jq -e --arg f "$h_first" --arg p "$h_prev" '.items[0] | .verdict == "created" and .source == $f
    and ([.otherSources[] | select(.source == $p)] | length == 1)' "$work/why.json"
say "  $(jq -r '.items[0].sentences | first + " ... " + last' "$work/why.json")"
"$CRONLEDGER" replay --verify --data-dir "$work/store" -o json >"$work/replay.json" 2>"$work/replay.err" ||
  fail "replay --verify on the audit store failed (see $work/replay.err)"
check_eq "replay --verify on the audit store: every source matches" "a:true b:true c:true" \
  "$(jq -r '[.items[] | "\(.source):\(.match)"] | sort | join(" ")' "$work/replay.json")"
# The deployment's trail: the audit store's checkpoint covers every copy, the copies of a and c
# chain to the heads a and c published last, and the store, its bundle sets and one decision's
# inclusion proof verify against it.
"$CRONLEDGER" checkpoint --data-dir "$work/store" -o json >"$work/store-checkpoint.json" \
  2>"$work/store-checkpoint.err" ||
  fail "checkpoint on the audit store failed (see $work/store-checkpoint.err)"
check_eq "checkpoint on the audit store: both chains of a, b and c" "a a b b c c" \
  "$(jq -r '[.items[].copyOf] | sort | join(" ")' "$work/store-checkpoint.json")"
for r in a c; do
  check_eq "the audit store's chains of $r end at the heads $r published last (chain and tree)" \
    "$(jq -r '[.items[] | "\(.log) \(.records) \(.head) \(.treeHead)"] | sort | join(",")' "$work/checkpoint-$r.json")" \
    "$(jq -r --arg r "$r" '[.items[] | select(.copyOf == $r) | "\(.log) \(.records) \(.head) \(.treeHead)"] | sort | join(",")' "$work/store-checkpoint.json")"
done
check "verify-trail on the audit store against its checkpoint" \
  "$CRONLEDGER" verify-trail --data-dir "$work/store" --checkpoint "$work/store-checkpoint.json"
"$CRONLEDGER" export --trail --data-dir "$work/store" >"$work/trail.bundles" 2>"$work/export.err" ||
  fail "export --trail on the audit store failed (see $work/export.err)"
check "verify-trail on the audit store's trail bundle set against its checkpoint" \
  "$CRONLEDGER" verify-trail --bundle "$work/trail.bundles" --checkpoint "$work/store-checkpoint.json"
"$CRONLEDGER" export --data-dir "$work/store" >"$work/store.bundles" 2>>"$work/export.err" ||
  fail "export on the audit store failed (see $work/export.err)"
"$CRONLEDGER" replay --verify --bundle "$work/store.bundles" -o json >"$work/replay-bundles.json" \
  2>"$work/replay-bundles.err" || fail "replay --verify of the bundle set failed (see $work/replay-bundles.err)"
check_eq "replay --verify of the audit store's bundle set: every source matches" "a:true b:true c:true" \
  "$(jq -r '[.items[] | "\(.source):\(.match)"] | sort | join(" ")' "$work/replay-bundles.json")"
h_seq="$("$CRONLEDGER" audit --data-dir "$work/store/sources/$h_first" --cronjob "$ns/$h_cj" \
  --action createJob -o json | jq -r --arg t "$h_time" '[.items[] | select(.scheduledTime == $t)][0].seq')"
"$CRONLEDGER" prove --decision "$h_seq" --source "$h_first" --data-dir "$work/store" \
  --checkpoint "$work/store-checkpoint.json" >"$work/proof.json" 2>"$work/proof.err" ||
  fail "prove --decision $h_seq --source $h_first failed (see $work/proof.err)"
check "verify-proof: $h_first's createJob of $ns/$h_cj at $h_time (decision $h_seq) is in the audit store's trail" \
  "$CRONLEDGER" verify-proof --proof "$work/proof.json" --checkpoint "$work/store-checkpoint.json"
check "no request of the relay or the replicas (ServiceAccount tokens) was refused by RBAC" \
  bash -c '! grep -l -e Forbidden -e " 403" "$@"' _ "$work/relay.err" "$work"/run-*.err
say "PASS"
