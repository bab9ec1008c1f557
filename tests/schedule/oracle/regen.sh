#!/bin/sh
# Regenerates tests/schedule/golden/robfig_golden.jsonl from the Go oracle, offline: Debian's
# golang-go and golang-github-robfig-cron-dev (robfig/cron v3.0.1 in /usr/share/gocode), GOPATH
# mode, no module downloads. TZ=UTC makes Go's Local zone UTC, which is cronledger's default.
# ZONEINFO points Go at the tz database shipped with the tests (tests/schedule/tzdata-*/), the one
# the conformance test reads: the corpus must not depend on the host's tzdata. Go falls back to
# the host's database for a zone missing there, so a zone added to main.go must be added to that
# directory too (its README); the conformance test fails on a zone it cannot load.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../golden/robfig_golden.jsonl"
zoneinfo=$(cd "$here/../tzdata-2025b" && pwd)
head -n 1 "$zoneinfo/tzdata.zi" | grep -q '^# version ' || {
  echo "$zoneinfo/tzdata.zi has no version line" >&2
  exit 1
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/oracle"
cp "$here/main.go" "$work/src/oracle/main.go"
GOPATH="$work:/usr/share/gocode" GO111MODULE=off GOFLAGS= GOCACHE="$work/cache" \
  go build -o "$work/oracle" oracle
TZ=UTC ZONEINFO="$zoneinfo" "$work/oracle" > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $(wc -l < "$out") cases to $out ($(wc -c < "$out") bytes), $(head -n 1 "$zoneinfo/tzdata.zi" | cut -c3-)"
