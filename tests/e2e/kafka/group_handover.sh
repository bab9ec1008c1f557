#!/usr/bin/env bash
# Two `cronledger run --kafka-watch-topic` replicas in one consumer group whose coordinator is the
# real broker, without an API server: the watch topic is written here with kcat (CronJobs keyed
# namespace/name, in the relay's format) and the CronJobs fire once a year, so nothing is acted
# on; the kubeconfig names a port nothing listens on. Asserts, from each replica's /metrics:
# the group splits the partitions between both replicas and both catch up; after replica b is
# SIGKILLed, replica a is assigned every partition within the session timeout and catches up on
# b's, and a's ledger then holds every event of the topic exactly once (a read b's partitions from
# their beginning). The Job-creating hand-over with a real API server is watch_group.sh.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_env CRONLEDGER E2E_WORK KAFKA_BROKERS

work="$E2E_WORK/group_handover"
rm -rf "$work" && mkdir -p "$work"
prefix="$(unique_prefix gh)"
trap 'cleanup_pids; report_time' EXIT
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}
metric() {  # metric REPLICA NAME
  local v
  v="$(curl -fsS "http://127.0.0.1:${port[$1]}/metrics" 2>/dev/null | awk -v n="$2" '$1 == n { print $2 }')"
  echo "${v:-0}"
}

n=12
for i in $(seq 0 $((n - 1))); do
  echo "{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"cronledger.io/v1\",\"kind\":\"CronJob\",\"metadata\":{\"name\":\"cj$i\",\"namespace\":\"gh\",\"uid\":\"uid-$i\",\"resourceVersion\":\"$((100 + i))\",\"creationTimestamp\":\"2026-11-01T00:00:00Z\"},\"spec\":{\"schedule\":\"0 0 1 1 *\",\"jobTemplate\":{\"spec\":{\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"main\",\"image\":\"busybox\"}]}}}}}}}" |
    kcat -b "$KAFKA_BROKERS" -P -t "$prefix.watch" -k "gh/cj$i"
done
partitions="$(kcat -b "$KAFKA_BROKERS" -L -t "$prefix.watch" | grep -c '^    partition ')"
check_eq "the watch topic holds the $n CronJobs" "$n" "$(topic_count "$KAFKA_BROKERS" "$prefix.watch")"
check "the watch topic has several partitions ($partitions)" test "$partitions" -gt 1

printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: none\n  cluster:\n    server: http://127.0.0.1:%s\ncontexts:\n- name: none\n  context:\n    cluster: none\n    user: none\ncurrent-context: none\nusers:\n- name: none\n  user:\n    token: none\n' \
  "$(free_port)" >"$work/kubeconfig"
# A short session timeout: the killed replica leaves the group within seconds.
printf '%s\n' session.timeout.ms=6000 heartbeat.interval.ms=500 >"$work/consumer.properties"
declare -A port pid
for r in a b; do
  port[$r]="$(free_port)"
  "$CRONLEDGER" run --kubeconfig "$work/kubeconfig" --data-dir "$work/data-$r" --sync none \
    --kafka-brokers "$KAFKA_BROKERS" --kafka-topic-prefix "$prefix" \
    --kafka-watch-topic "$prefix.watch" --kafka-group-id "$prefix-group" --kafka-source-id "$r" \
    --kafka-config "$work/consumer.properties" --metrics-bind-address "127.0.0.1:${port[$r]}" \
    2>"$work/run-$r.err" &
  pid[$r]=$!
  E2E_PIDS+=("${pid[$r]}")
done

split_done() {
  local a b
  a="$(metric a cronledger_kafka_watch_assigned_partitions)"
  b="$(metric b cronledger_kafka_watch_assigned_partitions)"
  (( a > 0 && b > 0 && a + b == partitions )) &&
    [[ "$(metric a cronledger_kafka_watch_caught_up)$(metric b cronledger_kafka_watch_caught_up)" == 11 ]]
}
for _ in $(seq 1 120); do split_done && break; sleep 0.5; done
check "the group split the $partitions partitions between a ($(metric a cronledger_kafka_watch_assigned_partitions)) and b ($(metric b cronledger_kafka_watch_assigned_partitions)), both caught up" split_done

kill -KILL "${pid[b]}"
killed_at=$SECONDS
taken_over() {
  [[ "$(metric a cronledger_kafka_watch_assigned_partitions)" == "$partitions" &&
     "$(metric a cronledger_kafka_watch_caught_up)" == 1 ]]
}
for _ in $(seq 1 120); do taken_over && break; sleep 0.5; done
check "after b's SIGKILL, a owns all $partitions partitions and caught up ($((SECONDS - killed_at)) s)" taken_over
check_eq "a's ledger took every event of the topic once" "$n" "$(metric a cronledger_kafka_watch_events_total)"
check_eq "a quarantined nothing" 0 "$(metric a cronledger_kafka_watch_quarantined_total)"
kill -TERM "${pid[a]}"
wait "${pid[a]}" || fail "replica a did not exit 0 on SIGTERM (see $work/run-a.err)"
E2E_PIDS=()
say "PASS"
