#!/usr/bin/env bash
# The outbox against a real Kafka broker: `cronledger simulate` fills a ledger over the sample
# CronJobs, `cronledger emit --stream all` produces its decision log to P.decisions and its input
# log to P.ledger, and kcat reads both back. Asserts: every decision of the ledger (oracle:
# `cronledger export`) is on P.decisions once, keyed by its CronJob, each key on one partition,
# in the log's order per key, with the documented headers and a value that agrees with them; the
# input log likewise on P.ledger; a second `emit` produces nothing and the topics are unchanged.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
require_env CRONLEDGER E2E_WORK KAFKA_BROKERS
trap 'report_time' EXIT

prefix="$(unique_prefix outbox)"
work="$E2E_WORK/outbox"
rm -rf "$work" && mkdir -p "$work"
say "broker $KAFKA_BROKERS, topic prefix $prefix"

"$CRONLEDGER" simulate "$E2E_REPO/deploy/samples" --duration 6h --data-dir "$work/data" \
  -o json >"$work/simulate.json"
"$CRONLEDGER" export --data-dir "$work/data" >"$work/bundle.jsonl"
decisions_of_bundle "$work/bundle.jsonl" "$work/oracle.tsv"
want_decisions="$(wc -l <"$work/oracle.tsv")"
check "the simulation decided something (${want_decisions} decisions)" test "$want_decisions" -gt 100
last_decision="$(tail -n 1 "$work/oracle.tsv" | cut -f2)"

"$CRONLEDGER" emit --data-dir "$work/data" --kafka-brokers "$KAFKA_BROKERS" \
  --kafka-topic-prefix "$prefix" --stream all --timeout 3m -o json >"$work/emit1.json"
check_eq "emit's decision position is the last decision's seq" "$last_decision" \
  "$(emit_field "$work/emit1.json" "$prefix.decisions" position)"
inputs_head="$(emit_field "$work/emit1.json" "$prefix.ledger" position)"
check "emit acknowledged an input log (position $inputs_head)" test "$inputs_head" -gt 0

# --- P.decisions -------------------------------------------------------------------------------
read_topic "$KAFKA_BROKERS" "$prefix.decisions" "$work/decisions.tsv"
check_eq "P.decisions holds one record per decision" "$want_decisions" "$(wc -l <"$work/decisions.tsv")"
check "P.decisions: every record has schema cronledger.decision/v1 and a seq" \
  all_headers "$work/decisions.tsv" cronledger.decision/v1
check "P.decisions: no seq twice" no_duplicate_seq "$work/decisions.tsv"
check "P.decisions: each CronJob key on one partition" one_partition_per_key "$work/decisions.tsv"
check "P.decisions: seqs increase per key" seq_increasing_per_key "$work/decisions.tsv"
check "P.decisions: per key, exactly the decision log's seqs in its order" \
  cmp -s <(seqs_by_key "$work/decisions.tsv") \
  <(awk -F'\t' -v OFS='\t' '{ print "-", "-", $1, $2 }' "$work/oracle.tsv" | seqs_by_key /dev/stdin)
check "P.decisions: each value's seq and cronJob are its header's seq and its key" \
  values_match_headers "$work/decisions.tsv" decisions
partitions_used="$(cut -f1 "$work/decisions.tsv" | sort -u | wc -l)"
check "P.decisions: the keys spread over more than one partition ($partitions_used)" \
  test "$partitions_used" -gt 1

# --- P.ledger ----------------------------------------------------------------------------------
read_topic "$KAFKA_BROKERS" "$prefix.ledger" "$work/ledger.tsv"
check_eq "P.ledger holds one record per input (seq 1..$inputs_head)" "$inputs_head" \
  "$(wc -l <"$work/ledger.tsv")"
check "P.ledger: the seqs are exactly 1..$inputs_head" \
  cmp -s <(cut -f4 "$work/ledger.tsv" | sort -n) <(seq 1 "$inputs_head")
check "P.ledger: every record has schema cronledger.ledger/v1 and a seq" \
  all_headers "$work/ledger.tsv" cronledger.ledger/v1
check "P.ledger: each key on one partition" one_partition_per_key "$work/ledger.tsv"
check "P.ledger: seqs increase per key" seq_increasing_per_key "$work/ledger.tsv"
check "P.ledger: each value's seq is its header's" values_match_headers "$work/ledger.tsv"

# --- a second emit: nothing new ----------------------------------------------------------------
"$CRONLEDGER" emit --data-dir "$work/data" --kafka-brokers "$KAFKA_BROKERS" \
  --kafka-topic-prefix "$prefix" --stream all --timeout 3m -o json >"$work/emit2.json"
check_eq "a second emit produces no decision" 0 "$(emit_field "$work/emit2.json" "$prefix.decisions" produced)"
check_eq "a second emit produces no input" 0 "$(emit_field "$work/emit2.json" "$prefix.ledger" produced)"
check_eq "P.decisions unchanged after the second emit" "$want_decisions" \
  "$(topic_count "$KAFKA_BROKERS" "$prefix.decisions")"
check_eq "P.ledger unchanged after the second emit" "$inputs_head" \
  "$(topic_count "$KAFKA_BROKERS" "$prefix.ledger")"
say "PASS"
