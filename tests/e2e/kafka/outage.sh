#!/usr/bin/env bash
# A broker outage in the middle of the outbox, against a real Kafka node of this script's own
# (tests/e2e/kafka-broker.sh; the shared broker of the other scripts is not touched): one
# `cronledger emit --stream all` session is producing a simulated ledger's decision and input
# logs when the node is stopped for E2E_KAFKA_OUTAGE_SECONDS (default 60) and then restarted on
# its kept data. Asserts: the session survives the outage (no failed session, exit 0, positions at
# the logs' heads: the outbox caught up), and both topics then hold every record of the ledger
# exactly once (the idempotent producer wrote nothing twice across the outage), each key on one
# partition, in the log's order per key.
#
# To make the outage land mid-stream on a small ledger whatever the machine's load, the producer
# sends one record per request with one request in flight (--kafka-config batch.num.messages=1,
# max.in.flight.requests.per.connection=1: slower, otherwise the same session), the script watches
# the broker's log files of the ledger topic grow (every 50 ms; reading the topic would take
# seconds on a loaded machine) and holds emit (SIGSTOP) as soon as 200 KB are there, stops the
# broker, and lets emit go on (SIGCONT) against no broker.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_env CRONLEDGER E2E_WORK
outage="${E2E_KAFKA_OUTAGE_SECONDS:-60}"
broker_ctl="$E2E_REPO/tests/e2e/kafka-broker.sh"

work="$E2E_WORK/outage"
rm -rf "$work" && mkdir -p "$work"
cleanup() {
  local rc=$?
  (( rc == 0 )) || on_fail >&2
  cleanup_pids
  "$broker_ctl" stop "$work/broker" || true
  report_time
}
trap cleanup EXIT
# On a failure: the tails of the logs that explain it.
on_fail() {
  local f
  for f in "$work/emit.err" "$work/emit.json" "$work/broker/broker.log"; do
    [[ -f "$f" ]] || continue
    echo "---- last lines of $f"
    tail -n 40 "$f"
  done
}

"$broker_ctl" start "$work/broker"
brokers="$(sed -n 's/^KAFKA_BROKERS=//p' "$work/broker/env")"
say "own broker at $brokers (started in $(sed -n 's/^KAFKA_START_MS=//p' "$work/broker/env") ms)"
prefix="$(unique_prefix outage)"

"$CRONLEDGER" simulate "$E2E_REPO/deploy/samples" --duration 4h --data-dir "$work/data" \
  -o json >"$work/simulate.json"
"$CRONLEDGER" export --data-dir "$work/data" >"$work/bundle.jsonl"
decisions_of_bundle "$work/bundle.jsonl" "$work/oracle.tsv"
want_decisions="$(wc -l <"$work/oracle.tsv")"
last_decision="$(tail -n 1 "$work/oracle.tsv" | cut -f2)"

printf '%s\n' '# one record per produce request, one request in flight: slow enough to stop the' \
  '# broker in the middle of the stream' 'batch.num.messages=1' \
  'max.in.flight.requests.per.connection=1' >"$work/slow.properties"
"$CRONLEDGER" emit --data-dir "$work/data" --kafka-brokers "$brokers" --kafka-topic-prefix "$prefix" \
  --kafka-config "$work/slow.properties" --stream all --timeout 10m -o json \
  >"$work/emit.json" 2>"$work/emit.err" &
emit_pid=$!
E2E_PIDS+=("$emit_pid")

# Wait until the stream is under way (the ledger topic's log files on the broker hold 200 KB),
# hold emit there, take the broker away, and let emit go on without it.
ledger_bytes() {
  stat -c %s "$work/broker/data/$prefix.ledger-"*/*.log 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}
for _ in $(seq 1 2400); do
  kill -0 "$emit_pid" 2>/dev/null || break
  (( $(ledger_bytes) >= 200000 )) && break
  sleep 0.05
done
kill -STOP "$emit_pid" 2>/dev/null || true
check "emit is still producing when the outage starts" kill -0 "$emit_pid"
before_decisions="$(topic_count "$brokers" "$prefix.decisions")"
before_inputs="$(topic_count "$brokers" "$prefix.ledger")"
"$broker_ctl" stop "$work/broker"
kill -CONT "$emit_pid"
say "broker stopped with $before_decisions decisions and $before_inputs inputs on the topics; down for $outage s"
sleep "$outage"
check "emit is still running after $outage s without a broker" kill -0 "$emit_pid"
"$broker_ctl" restart "$work/broker"
say "broker back (restart in $(sed -n 's/^KAFKA_START_MS=//p' "$work/broker/env") ms)"

set +e
wait "$emit_pid"
emit_rc=$?
set -e
E2E_PIDS=()
check_eq "emit exits 0 once the broker is back (stderr: $work/emit.err)" 0 "$emit_rc"
# A failed session is reported as "cronledger emit: TOPIC: ERROR (retrying)" (a new session could
# write records again); librdkafka's own retries are logged as "rdkafka ...".
check "no emitter session failed during the outage (emit's stderr has no session error)" \
  bash -c "! grep -q '^cronledger emit: .*(retrying)\$' '$work/emit.err'"
check_eq "the decision outbox caught up to the last decision" "$last_decision" \
  "$(emit_field "$work/emit.json" "$prefix.decisions" position)"
inputs_head="$(emit_field "$work/emit.json" "$prefix.ledger" position)"
check "the outage hit mid-stream ($before_inputs of $inputs_head inputs on the topic before it)" \
  test "$before_inputs" -lt "$inputs_head"

read_topic "$brokers" "$prefix.decisions" "$work/decisions.tsv"
check_eq "P.decisions holds every decision once" "$want_decisions" "$(wc -l <"$work/decisions.tsv")"
check "P.decisions: no seq twice (idempotent producer across the outage)" \
  no_duplicate_seq "$work/decisions.tsv"
check "P.decisions: each key on one partition" one_partition_per_key "$work/decisions.tsv"
check "P.decisions: seqs increase per key" seq_increasing_per_key "$work/decisions.tsv"
check "P.decisions: per key, exactly the decision log's seqs in its order" \
  cmp -s <(seqs_by_key "$work/decisions.tsv") \
  <(awk -F'\t' -v OFS='\t' '{ print "-", "-", $1, $2 }' "$work/oracle.tsv" | seqs_by_key /dev/stdin)

read_topic "$brokers" "$prefix.ledger" "$work/ledger.tsv"
check_eq "P.ledger holds every input once" "$inputs_head" "$(wc -l <"$work/ledger.tsv")"
check "P.ledger: no seq twice (idempotent producer across the outage)" \
  no_duplicate_seq "$work/ledger.tsv"
check "P.ledger: the seqs are exactly 1..$inputs_head" \
  cmp -s <(cut -f4 "$work/ledger.tsv" | sort -n) <(seq 1 "$inputs_head")
check "P.ledger: each key on one partition" one_partition_per_key "$work/ledger.tsv"
check "P.ledger: seqs increase per key" seq_increasing_per_key "$work/ledger.tsv"
say "PASS"
