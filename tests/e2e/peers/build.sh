#!/usr/bin/env bash
# Builds the real end-to-end test peers from the upstream projects' published modules (never prebuilt
# binaries) into a cache keyed by version, and prints where they are:
#   kube-apiserver, kube-controller-manager, kubectl   from k8s.io/kubernetes (Go module proxy)
#   etcd                                               from go.etcd.io/etcd/server/v3
#   Apache Kafka (KRaft) jars                          from Maven Central (org.apache.kafka:kafka_2.13)
#
# Usage: tests/e2e/peers/build.sh [kubernetes|etcd|kafka]...   (default: all)
# Cache: $CRONLEDGER_PEERS_CACHE (default ~/.cache/cronledger/peers)/<peer>-<version>/; a peer whose
# directory holds a complete build is reused. Prints each peer's build time.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.sh
source "$here/versions.sh"
cache="${CRONLEDGER_PEERS_CACHE:-$HOME/.cache/cronledger/peers}"
mkdir -p "$cache"

log() { echo "peers: $*" >&2; }

# The Kubernetes 1.34 and etcd 3.6 modules need Go 1.24 or newer (Debian 12's golang-go is 1.19).
need_go() {
  local v
  v="$(go env GOVERSION 2>/dev/null || true)"
  if [[ ! "$v" =~ ^go1\.([0-9]+) ]] || (( BASH_REMATCH[1] < 24 )); then
    echo "peers: Go >= 1.24 is needed to build kube-apiserver and etcd; found '${v:-no go}'" >&2
    exit 1
  fi
}

# build_go <dir> <module dir> <ldflags> <package>...: builds the packages into <dir>/bin atomically.
build_go() {
  local dir="$1" mod="$2" ldflags="$3"; shift 3
  local tmp="$dir.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp/bin"
  (cd "$mod" && CGO_ENABLED=0 GOFLAGS=-mod=readonly \
     go build -trimpath -ldflags "$ldflags" -o "$tmp/bin/" "$@")
  rm -rf "$dir" && mv "$tmp" "$dir"
}

peer_kubernetes() {
  local dir="$cache/kubernetes-v$K8S_VERSION"
  [[ -x "$dir/bin/kube-apiserver" && -x "$dir/bin/kube-controller-manager" && -x "$dir/bin/kubectl" ]] \
    && { echo "$dir"; return; }
  need_go
  log "building kube-apiserver, kube-controller-manager, kubectl v$K8S_VERSION (cold: several minutes)"
  local v="k8s.io/component-base/version" cv="k8s.io/client-go/pkg/version"
  local flags="-s -w" minor p
  minor="$(cut -d. -f2 <<<"$K8S_VERSION")"
  for p in "$v" "$cv"; do  # what `kubectl version` and the server's /version report
    flags+=" -X $p.gitVersion=v$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
    flags+=" -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
  done
  build_go "$dir" "$here/kubernetes" "$flags" \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
    k8s.io/kubernetes/cmd/kubectl
  echo "$dir"
}

peer_etcd() {
  local dir="$cache/etcd-v$ETCD_VERSION"
  [[ -x "$dir/bin/etcd" ]] && { echo "$dir"; return; }
  need_go
  log "building etcd v$ETCD_VERSION"
  local tmp="$dir.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp/bin"
  (cd "$here/etcd" && CGO_ENABLED=0 GOFLAGS=-mod=readonly \
     go build -trimpath -ldflags "-s -w" -o "$tmp/bin/etcd" go.etcd.io/etcd/server/v3)
  rm -rf "$dir" && mv "$tmp" "$dir"
  echo "$dir"
}

peer_kafka() {
  local dir="$cache/kafka-$KAFKA_VERSION"
  [[ -f "$dir/.complete" ]] && { echo "$dir"; return; }
  log "resolving Apache Kafka $KAFKA_VERSION and its dependencies from Maven Central"
  local tmp="$dir.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp/libs"
  mvn -q -B -f "$here/kafka/pom.xml" -Dkafka.version="$KAFKA_VERSION" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$tmp/libs" >&2
  touch "$tmp/.complete"
  rm -rf "$dir" && mv "$tmp" "$dir"
  echo "$dir"
}

peers=("$@")
[[ ${#peers[@]} -gt 0 ]] || peers=(kubernetes etcd kafka)
for p in "${peers[@]}"; do
  start=$(date +%s)
  case "$p" in
    kubernetes) peer_kubernetes ;;
    etcd) peer_etcd ;;
    kafka) peer_kafka ;;
    *) echo "build.sh: unknown peer '$p' (kubernetes, etcd, kafka)" >&2; exit 2 ;;
  esac
  log "$p ready in $(( $(date +%s) - start )) s"
done
