# Helpers of the Kafka end-to-end scripts (sourced). The runner (tests/e2e/run.sh) exports
# CRONLEDGER (the binary), E2E_WORK (this script's scratch directory) and KAFKA_BROKERS (a running
# real broker, shared by the Kafka scripts: each script uses its own topic prefix).
# Topics are read with kcat, the independent client; checks print what they assert.

E2E_KAFKA_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
E2E_REPO="${REPO_ROOT:-$(cd "$E2E_KAFKA_DIR/../../.." && pwd)}"
# sa_kubeconfig, for the scripts that also talk to the real API server.
source "$E2E_KAFKA_DIR/../sa-kubeconfig.sh"

# require_env VAR...: each must be set, or the script cannot run at all (exit 2: a wiring error,
# not a test failure).
require_env() {
  local v
  for v in "$@"; do
    [[ -n "${!v:-}" ]] || { echo "$(basename "$0"): $v is not set (see tests/e2e/kafka/lib.sh)" >&2; exit 2; }
  done
}

say() { echo "[$(basename "$0" .sh)] $*"; }
fail() { echo "[$(basename "$0" .sh)] FAIL: $*" >&2; exit 1; }
# check DESCRIPTION COMMAND...: runs the command; prints "ok" or fails the script with the
# description.
check() {
  local what="$1"; shift
  if "$@"; then say "ok: $what"; else fail "$what"; fi
}
# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
  if [[ "$2" == "$3" ]]; then say "ok: $1 ($3)"; else fail "$1: expected '$2', got '$3'"; fi
}

# A topic prefix no other script and no earlier run uses on the shared broker.
unique_prefix() { echo "e2e-$1-$(date +%s)-$RANDOM"; }

# read_topic BROKERS TOPIC OUT: every message of TOPIC, one line each, sorted by (partition,
# offset): partition TAB offset TAB key TAB cronledger-seq TAB cronledger-schema TAB
# cronledger-source ("-" when a header is absent). OUT.values gets the values, same order.
read_topic() {
  local brokers="$1" topic="$2" out="$3" raw="$3.raw"
  # %h prints the headers as name=value pairs separated by commas (no value here holds a comma).
  kcat -b "$brokers" -C -t "$topic" -o beginning -e -q \
    -f '%p\t%o\t%k\t%h\t%s\n' >"$raw"
  sort -t $'\t' -k1,1n -k2,2n "$raw" | awk -F'\t' -v OFS='\t' -v values="$out.values" '{
      seq = "-"; schema = "-"; source = "-"
      n = split($4, hs, ",")
      for (i = 1; i <= n; i++) {
        eq = index(hs[i], "=")
        name = substr(hs[i], 1, eq - 1); value = substr(hs[i], eq + 1)
        if (name == "cronledger-seq") seq = value
        else if (name == "cronledger-schema") schema = value
        else if (name == "cronledger-source") source = value
      }
      print $1, $2, $3, seq, schema, source
      # The value is everything after the fourth tab (a value holds no tab: it is JSON).
      v = $0; for (i = 1; i <= 4; i++) v = substr(v, index(v, "\t") + 1)
      print v > values
    }' >"$out"
  rm -f "$raw"
}

# topic_count BROKERS TOPIC: how many messages the topic holds.
topic_count() {
  kcat -b "$1" -C -t "$2" -o beginning -e -q -f 'x\n' 2>/dev/null | wc -l
}

# Checks over a read_topic file. Each prints nothing and returns 0 when the property holds, else
# prints the first offenders and returns 1.

# no_duplicate_seq FILE: no (source, cronledger-seq) appears twice.
no_duplicate_seq() {
  awk -F'\t' '{ k = $6 "|" $4; if (seen[k]++) { print "  duplicate seq " $4 " (source " $6 ") at partition " $1 " offset " $2; bad = 1 } }
    END { exit bad }' "$1" | head -n 5
  return "${PIPESTATUS[0]}"
}

# one_partition_per_key FILE: every key's records are on a single partition.
one_partition_per_key() {
  awk -F'\t' '{ if (($3 in p) && p[$3] != $1) { print "  key " $3 " on partitions " p[$3] " and " $1; bad = 1 } p[$3] = $1 }
    END { exit bad }' "$1" | head -n 5
  return "${PIPESTATUS[0]}"
}

# seq_increasing_per_key FILE: per (source, key), seqs strictly increase in offset order.
seq_increasing_per_key() {
  awk -F'\t' '{ k = $6 "|" $3; if ((k in last) && $4 + 0 <= last[k]) { print "  key " $3 ": seq " $4 " after " last[k] " (partition " $1 " offset " $2 ")"; bad = 1 } last[k] = $4 + 0 }
    END { exit bad }' "$1" | head -n 5
  return "${PIPESTATUS[0]}"
}

# all_headers FILE SCHEMA: every record names SCHEMA and carries a cronledger-seq.
all_headers() {
  awk -F'\t' -v want="$2" '$5 != want || $4 == "-" { print "  partition " $1 " offset " $2 ": schema " $5 ", seq " $4; bad = 1 }
    END { exit bad }' "$1" | head -n 5
  return "${PIPESTATUS[0]}"
}

# seqs_by_key FILE: "key TAB seq seq seq..." per key, in offset order, sorted by key (the form
# in which two streams of one log compare).
seqs_by_key() {
  awk -F'\t' '{ s[$3] = s[$3] " " $4 } END { for (k in s) print k "\t" substr(s[k], 2) }' "$1" | sort
}

# values_match_headers FILE: every value's JSON "seq" equals the record's cronledger-seq header.
# For the decision stream the value's cronJob (namespace/name) must also equal the key.
values_match_headers() {
  local file="$1" decisions="${2:-}"
  local filter='[(.seq|tostring), ""] | @tsv'
  [[ -n "$decisions" ]] && filter='[(.seq|tostring), (.cronJob.namespace + "/" + .cronJob.name)] | @tsv'
  paste <(cut -f3,4 "$file") <(jq -r "$filter" "$file.values") | awk -F'\t' -v dec="$decisions" '
    $2 != $3 || (dec != "" && $1 != $4) { print "  key " $1 " seq " $2 ": value says seq " $3 (dec != "" ? ", cronJob " $4 : ""); bad = 1 }
    END { exit bad }' | head -n 5
  return "${PIPESTATUS[1]}"
}

# decisions_of_bundle BUNDLE OUT: the decision log of a `cronledger export` bundle, as
# "key TAB seq" lines in log order (the oracle the decision topic is compared with).
decisions_of_bundle() {
  jq -r 'select(.decision != null) | [.cronJob, (.decision|tostring)] | @tsv' "$1" >"$2"
}

# json_field FILE TOPIC FIELD: a field of `cronledger emit -o json`'s item for TOPIC.
emit_field() {
  jq -r --arg t "$2" --arg f "$3" '.items[] | select(.topic == $t) | .[$f]' "$1"
}

# Background processes a script started (killed on exit by cleanup_pids).
E2E_PIDS=()
cleanup_pids() {
  local pid
  # SIGCONT first: a script may have stopped a process (SIGSTOP) to time a fault.
  for pid in "${E2E_PIDS[@]}"; do kill -CONT "$pid" 2>/dev/null || true; done
  for pid in "${E2E_PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${E2E_PIDS[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  done
}

# elapsed: seconds since the script started (bash's SECONDS).
report_time() { say "wall time ${SECONDS} s"; }
