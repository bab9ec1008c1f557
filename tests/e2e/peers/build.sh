#!/usr/bin/env bash
# Builds the real end-to-end test peers from the upstream projects' published modules (never prebuilt
# binaries) into a cache keyed by version, and prints where they are:
#   kube-apiserver, kube-controller-manager, kubectl   from k8s.io/kubernetes (Go module proxy)
#   etcd                                               from go.etcd.io/etcd/server/v3
#   Apache Kafka (KRaft) jars                          from Maven Central (org.apache.kafka:kafka_2.13)
#   helm                                               from helm.sh/helm/v3 (cmd/helm)
#   promtool                                           from github.com/prometheus/prometheus (cmd/promtool)
#   the ServiceMonitor and PrometheusRule CRDs         from the github.com/prometheus-operator/prometheus-operator
#                                                      module (example/prometheus-operator-crd/, nothing built)
#
# Usage: tests/e2e/peers/build.sh [kubernetes|etcd|kafka|helm|promtool|prometheus-operator-crds]...   (default: all)
# Cache: $CRONLEDGER_PEERS_CACHE (default ~/.cache/cronledger/peers)/<peer>-<version>/; a peer whose
# directory holds a complete build is reused. Prints each peer's build time.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.sh
source "$here/versions.sh"
cache="${CRONLEDGER_PEERS_CACHE:-$HOME/.cache/cronledger/peers}"
mkdir -p "$cache"

log() { echo "peers: $*" >&2; }

# The pinned modules need Go 1.26 or newer (their go.mod files; promtool's says 1.26.7, which an
# older 1.26 fetches as its toolchain from the module proxy). Debian 12's golang-go is 1.19.
need_go() {
  local v
  v="$(go env GOVERSION 2>/dev/null || true)"
  if [[ ! "$v" =~ ^go1\.([0-9]+) ]] || (( BASH_REMATCH[1] < 26 )); then
    echo "peers: Go >= 1.26 is needed to build the peers; found '${v:-no go}'" >&2
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

# The flags of helm's own Makefile: its version, and the Kubernetes version its capabilities and
# lint rules assume, taken from the client-go it is built with (v0.M.N is Kubernetes 1.M).
peer_helm() {
  local dir="$cache/helm-v$HELM_VERSION"
  [[ -x "$dir/bin/helm" ]] && { echo "$dir"; return; }
  need_go
  log "building helm v$HELM_VERSION"
  local minor flags="-s -w" p
  minor="$(cd "$here/helm" && go list -m -f '{{.Version}}' k8s.io/client-go | cut -d. -f2)"
  flags+=" -X helm.sh/helm/v3/internal/version.version=v$HELM_VERSION"
  flags+=" -X helm.sh/helm/v3/internal/version.gitTreeState=clean"
  for p in helm.sh/helm/v3/pkg/lint/rules helm.sh/helm/v3/pkg/chartutil; do
    flags+=" -X $p.k8sVersionMajor=1 -X $p.k8sVersionMinor=$minor"
  done
  build_go "$dir" "$here/helm" "$flags" helm.sh/helm/v3/cmd/helm
  echo "$dir"
}

# The flags of Prometheus' .promu.yml (version) and its build tags (netgo, builtinassets), plus
# remove_all_sd: promtool without the service-discovery plugins (AWS, Azure, GCE, Kubernetes ...),
# which only `promtool check config` of a scrape configuration would use; the rules, rule tests
# and metrics checks do not.
peer_promtool() {
  local dir="$cache/promtool-v$PROMETHEUS_VERSION"
  [[ -x "$dir/bin/promtool" ]] && { echo "$dir"; return; }
  need_go
  log "building promtool v$PROMETHEUS_VERSION"
  local v="github.com/prometheus/common/version"
  local tmp="$dir.tmp.$$"
  rm -rf "$tmp" && mkdir -p "$tmp/bin"
  (cd "$here/promtool" && CGO_ENABLED=0 GOFLAGS=-mod=readonly \
     go build -trimpath -tags netgo,builtinassets,remove_all_sd \
       -ldflags "-s -w -X $v.Version=$PROMETHEUS_VERSION -X $v.Branch=HEAD -X $v.BuildDate=19700101-00:00:00" \
       -o "$tmp/bin/promtool" github.com/prometheus/prometheus/cmd/promtool)
  rm -rf "$dir" && mv "$tmp" "$dir"
  echo "$dir"
}

# The CRDs as the module zip carries them; `go mod download` checks the zip against go.sum's
# checksum database.
peer_prometheus_operator_crds() {
  local dir="$cache/prometheus-operator-crds-v$PROMETHEUS_OPERATOR_VERSION"
  [[ -f "$dir/.complete" ]] && { echo "$dir"; return; }
  need_go
  log "downloading github.com/prometheus-operator/prometheus-operator v$PROMETHEUS_OPERATOR_VERSION"
  local tmp="$dir.tmp.$$" src kind
  src="$(cd "$cache" && GOFLAGS=-mod=mod go mod download -json \
    "github.com/prometheus-operator/prometheus-operator@v$PROMETHEUS_OPERATOR_VERSION" | jq -r .Dir)"
  rm -rf "$tmp" && mkdir -p "$tmp"
  for kind in servicemonitors prometheusrules; do
    cp "$src/example/prometheus-operator-crd/monitoring.coreos.com_$kind.yaml" "$tmp/"
  done
  touch "$tmp/.complete"
  rm -rf "$dir" && mv "$tmp" "$dir"
  echo "$dir"
}

peers=("$@")
[[ ${#peers[@]} -gt 0 ]] || peers=(kubernetes etcd kafka helm promtool prometheus-operator-crds)
for p in "${peers[@]}"; do
  start=$(date +%s)
  case "$p" in
    kubernetes) peer_kubernetes ;;
    etcd) peer_etcd ;;
    kafka) peer_kafka ;;
    helm) peer_helm ;;
    promtool) peer_promtool ;;
    prometheus-operator-crds) peer_prometheus_operator_crds ;;
    *) echo "build.sh: unknown peer '$p' (kubernetes, etcd, kafka, helm, promtool, prometheus-operator-crds)" >&2
       exit 2 ;;
  esac
  log "$p ready in $(( $(date +%s) - start )) s"
done
