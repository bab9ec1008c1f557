#!/usr/bin/env bash
# scripts/demo.sh as a new user runs it, on a binary already built: it keeps its data directory,
# and every command it prints at the end runs on it and succeeds (serve answers /readyz with the
# token, on a free port instead of the printed 8082).
# Usage: tests/cli/demo_test.sh CRONLEDGER_BINARY
set -euo pipefail
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
root="$(cd "$(dirname "$0")/../.." && pwd)"
work="$(mktemp -d /tmp/cronledger-demo-test.XXXXXX)"
serve_pid=""
cleanup() {
  [[ -n "$serve_pid" ]] && kill "$serve_pid" 2>/dev/null && wait "$serve_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
passed=0 failed=0
fail() { echo "not ok - $*"; failed=$((failed + 1)); }
pass() { echo "ok - $*"; passed=$((passed + 1)); }

data="$work/ledger"
if ! CRONLEDGER_BIN="$bin" CRONLEDGER_DEMO_DIR="$data" "$root/scripts/demo.sh" >"$work/out" 2>"$work/err"; then
  cat "$work/err"
  echo "not ok - scripts/demo.sh exited non-zero"
  exit 1
fi
pass "scripts/demo.sh ran"
if [[ -n "$(ls -A "$data" 2>/dev/null)" ]]; then pass "the data directory $data is kept"; else fail "no data directory at $data"; fi
grep -q "The ledger of this day is in $data" "$work/out" && pass "it names the data directory" ||
  fail "the output does not name the data directory"

# The printed commands: the indented lines after "Try, from DIR:", up to the blank line.
mapfile -t cmds < <(awk '/^The ledger of this day is in/ {f = 1; next} f && /^  [^ ]/ {sub(/^  /, ""); print}' "$work/out")
[[ ${#cmds[@]} -ge 5 ]] && pass "${#cmds[@]} commands are printed" || fail "only ${#cmds[@]} commands are printed"
grep -q "docs/user-guide.md" "$work/out" && pass "it points to the user guide" || fail "no pointer to the docs"
cd "$root"
for c in "${cmds[@]}"; do
  if [[ "$c" == *" serve "* ]]; then
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    c="${c/127.0.0.1:8082/127.0.0.1:$port}"
    # exec: the background job is serve itself, so the kill below (and cleanup) stops it.
    eval "exec $c" >"$work/serve.log" 2>&1 &
    serve_pid=$!
    token="$(cat "$data.token")"
    # Up to 60 s while it runs: a sanitizer build on a loaded machine opens the store slowly.
    ok=0
    for _ in $(seq 600); do
      if curl -sf -H "Authorization: Bearer $token" "http://127.0.0.1:$port/readyz" >/dev/null 2>&1; then ok=1; break; fi
      kill -0 "$serve_pid" 2>/dev/null || break
      sleep 0.1
    done
    if [[ $ok == 1 ]] && curl -sf -H "Authorization: Bearer $token" \
      "http://127.0.0.1:$port/v1/reports/adherence" | grep -q '"items"'; then
      pass "$c: the API answers"
    else
      fail "$c: the API does not answer: $(tail -3 "$work/serve.log")"
    fi
    kill "$serve_pid" && wait "$serve_pid" 2>/dev/null || true
    serve_pid=""
    continue
  fi
  if out="$(eval "$c" 2>&1)"; then
    pass "$c ($(wc -l <<<"$out") lines)"
  else
    fail "$c: $(tail -3 <<<"$out")"
  fi
done
echo "$passed passed, $failed failed"
[[ $failed == 0 ]]
