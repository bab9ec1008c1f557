#!/bin/sh
# Regenerates tests/schedule/golden/robfig_golden.jsonl from the Go oracle, offline: Debian's
# golang-go and golang-github-robfig-cron-dev (robfig/cron v3.0.1 in /usr/share/gocode), GOPATH
# mode, no module downloads. TZ=UTC makes Go's Local zone UTC, which is cronledger's default.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../golden/robfig_golden.jsonl"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/oracle"
cp "$here/main.go" "$work/src/oracle/main.go"
GOPATH="$work:/usr/share/gocode" GO111MODULE=off GOFLAGS= GOCACHE="$work/cache" \
  go build -o "$work/oracle" oracle
TZ=UTC ZONEINFO= "$work/oracle" > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $(wc -l < "$out") cases to $out ($(wc -c < "$out") bytes)"
