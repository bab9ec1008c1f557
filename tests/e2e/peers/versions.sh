# Pinned versions of the real test peers (sourced by build.sh and the e2e scripts). Changing a version
# here rebuilds that peer into a new cache directory; the Go modules' go.mod/go.sum pin the rest.
K8S_VERSION=1.34.4       # k8s.io/kubernetes (kube-apiserver, kube-controller-manager, kubectl)
ETCD_VERSION=3.6.16      # go.etcd.io/etcd/server/v3
KAFKA_VERSION=4.1.1      # org.apache.kafka:kafka_2.13 (KRaft), from Maven Central
HELM_VERSION=3.22.0        # helm.sh/helm/v3 (cmd/helm)
PROMETHEUS_VERSION=3.16.0  # github.com/prometheus/prometheus v0.316.0 (cmd/promtool); the module's v0.3xx.y is release 3.xx.y
PROMETHEUS_OPERATOR_VERSION=0.85.0  # github.com/prometheus-operator/prometheus-operator: its ServiceMonitor and PrometheusRule CRDs
