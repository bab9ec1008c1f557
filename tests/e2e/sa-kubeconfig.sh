# Sourced by tests/e2e/lib.sh and tests/e2e/kafka/lib.sh. Needs the control plane's env
# (E2E_KUBECTL, E2E_KUBECONFIG, E2E_APISERVER, E2E_CA).

# sa_kubeconfig <namespace> <serviceaccount> <file>: a kubeconfig that authenticates as the
# ServiceAccount with a token the API server issues (TokenRequest), as a pod's projected token does.
sa_kubeconfig() {
  local token
  token="$("$E2E_KUBECTL" --kubeconfig "$E2E_KUBECONFIG" create token "$2" -n "$1" --duration 2h)" || return 1
  printf '%s' "$token" >"$3.token"
  cat >"$3" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster: {server: "$E2E_APISERVER", certificate-authority: "$E2E_CA"}
users:
- name: $2
  user: {tokenFile: "$3.token"}
contexts:
- name: e2e
  context: {cluster: e2e, user: $2, namespace: $1}
current-context: e2e
EOF
}
