#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1 for the end-to-end tests and for trying cronledger by
# hand: etcd and kube-apiserver built from their upstream Go modules (tests/e2e/peers/build.sh), with
# TLS, RBAC (--authorization-mode=Node,RBAC) and service-account token issuing, and optionally the
# upstream kube-controller-manager as the reference CronJob controller.
#
#   tests/e2e/control-plane.sh start DIR     certificates, etcd, kube-apiserver; writes DIR/admin.kubeconfig
#                                            and DIR/env (KUBECONFIG, KUBECTL, E2E_* variables)
#   tests/e2e/control-plane.sh kcm-start DIR the upstream kube-controller-manager (cronjob, garbagecollector)
#   tests/e2e/control-plane.sh kcm-stop DIR
#   tests/e2e/control-plane.sh stop DIR      stops everything it started (SIGTERM, then SIGKILL)
#
# Nothing runs Pods: there is no scheduler, kubelet or Job controller, so a Job's Pods never exist and
# tests finish Jobs by writing their status as the Job controller would (tests/e2e/lib.sh).
# kube-controller-manager runs the upstream `cronjob`, `garbagecollector` and `namespace` controllers,
# each with its own ServiceAccount credentials (as in a cluster), and nothing else.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

usage() { echo "usage: $0 start|stop|kcm-start|kcm-stop DIR" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
cmd="$1"
mkdir -p "$2"
dir="$(cd "$2" && pwd)"

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# stop_pid <file>: SIGTERM the process named in <file>, SIGKILL after 20 s; removes the file.
stop_pid() {
  local f="$1" pid
  [[ -f "$f" ]] || return 0
  pid="$(cat "$f")"
  if kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$f"
}

# certs: a CA, the API server's serving certificate, client certificates for the admin and for
# kube-controller-manager, and the service-account signing key pair.
make_certs() {
  local pki="$dir/pki"
  mkdir -p "$pki"
  cd "$pki"
  openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=cronledger-e2e-ca" \
    -keyout ca.key -out ca.crt 2>/dev/null
  client_cert() {  # <name> <subject>
    openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$1.key" -out "$1.csr" 2>/dev/null
    openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
      -extfile <(printf 'extendedKeyUsage=clientAuth\n') -out "$1.crt" 2>/dev/null
  }
  openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout apiserver.key \
    -out apiserver.csr 2>/dev/null
  openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
    -extfile <(printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,IP:10.0.0.1\nextendedKeyUsage=serverAuth\n') \
    -out apiserver.crt 2>/dev/null
  client_cert admin "/O=system:masters/CN=e2e-admin"
  client_cert kcm "/CN=system:kube-controller-manager"
  openssl genrsa -out sa.key 2048 2>/dev/null
  openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
  cd - >/dev/null
}

# kubeconfig <file> <user cert name>: a kubeconfig for the client certificate <name>.
kubeconfig() {
  local pki="$dir/pki"
  cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:$APISERVER_PORT
    certificate-authority: $pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $pki/$2.crt
    client-key: $pki/$2.key
contexts:
- name: e2e
  context: {cluster: e2e, user: $2}
current-context: e2e
EOF
}

wait_ready() {  # wait_ready <what> <seconds> <command...>
  local what="$1" secs="$2"; shift 2
  for _ in $(seq $((secs * 5))); do
    if "$@" >/dev/null 2>&1; then return 0; fi
    sleep 0.2
  done
  echo "control-plane: $what not ready after ${secs}s; its log:" >&2
  return 1
}

start() {
  local k8s etcd_dir t0
  t0=$(date +%s)
  k8s="$("$here/peers/build.sh" kubernetes | tail -n 1)"
  etcd_dir="$("$here/peers/build.sh" etcd | tail -n 1)"
  if [[ -f "$dir/apiserver.pid" ]] && kill -0 "$(cat "$dir/apiserver.pid")" 2>/dev/null; then
    echo "control-plane: already running in $dir (stop it first)" >&2
    exit 1
  fi
  make_certs
  ETCD_PORT="$(free_port)"; ETCD_PEER_PORT="$(free_port)"; APISERVER_PORT="$(free_port)"
  rm -rf "$dir/etcd-data"
  "$etcd_dir/bin/etcd" --data-dir "$dir/etcd-data" --name e2e \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "e2e=http://127.0.0.1:$ETCD_PEER_PORT" \
    --quota-backend-bytes 2147483648 --unsafe-no-fsync --log-level warn \
    >"$dir/etcd.log" 2>&1 &
  echo $! >"$dir/etcd.pid"
  wait_ready etcd 30 curl -sf "http://127.0.0.1:$ETCD_PORT/health" || { tail -20 "$dir/etcd.log" >&2; exit 1; }

  local pki="$dir/pki"
  "$k8s/bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$APISERVER_PORT" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" \
    --authorization-mode Node,RBAC \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --api-audiences https://kubernetes.default.svc.cluster.local \
    --service-cluster-ip-range 10.0.0.0/24 \
    --enable-priority-and-fairness=false \
    --v 1 >"$dir/apiserver.log" 2>&1 &
  echo $! >"$dir/apiserver.pid"
  kubeconfig "$dir/admin.kubeconfig" admin
  kubeconfig "$dir/kcm.kubeconfig" kcm
  wait_ready kube-apiserver 90 "$k8s/bin/kubectl" --kubeconfig "$dir/admin.kubeconfig" get --raw /readyz \
    || { tail -30 "$dir/apiserver.log" >&2; exit 1; }
  # RBAC's bootstrap roles (system:kube-controller-manager and friends) are written by a post-start
  # hook; /readyz waits for it, and the default namespace is created by the controller shortly after.
  wait_ready "default namespace" 30 "$k8s/bin/kubectl" --kubeconfig "$dir/admin.kubeconfig" get ns default \
    || exit 1
  cat >"$dir/env" <<EOF
export KUBECONFIG=$dir/admin.kubeconfig
export E2E_KUBECONFIG=$dir/admin.kubeconfig
export E2E_CONTROL_PLANE=$dir
export E2E_K8S_BIN=$k8s/bin
export KUBECTL=$k8s/bin/kubectl
export E2E_KUBECTL=$k8s/bin/kubectl
export E2E_APISERVER=https://127.0.0.1:$APISERVER_PORT
export E2E_CA=$pki/ca.crt
EOF
  echo "control-plane: kube-apiserver https://127.0.0.1:$APISERVER_PORT ready in $(( $(date +%s) - t0 )) s;" \
    "source $dir/env" >&2
}

kcm_start() {
  # shellcheck disable=SC1091
  source "$dir/env"
  if [[ -f "$dir/kcm.pid" ]] && kill -0 "$(cat "$dir/kcm.pid")" 2>/dev/null; then return 0; fi
  "$E2E_K8S_BIN/kube-controller-manager" \
    --kubeconfig "$dir/kcm.kubeconfig" \
    --authentication-kubeconfig "$dir/kcm.kubeconfig" --authorization-kubeconfig "$dir/kcm.kubeconfig" \
    --controllers cronjob,garbagecollector,namespace --use-service-account-credentials \
    --leader-elect=false --bind-address 127.0.0.1 --secure-port "$(free_port)" \
    --v 2 ${KCM_EXTRA_ARGS:-} >>"$dir/kcm.log" 2>&1 &
  echo $! >"$dir/kcm.pid"
  wait_ready kube-controller-manager 30 grep -q "Started controller\|Starting controller\|cronjob" "$dir/kcm.log" \
    || { tail -30 "$dir/kcm.log" >&2; exit 1; }
}

case "$cmd" in
  start) start ;;
  stop) stop_pid "$dir/kcm.pid"; stop_pid "$dir/apiserver.pid"; stop_pid "$dir/etcd.pid" ;;
  kcm-start) kcm_start ;;
  kcm-stop) stop_pid "$dir/kcm.pid" ;;
  *) usage ;;
esac
