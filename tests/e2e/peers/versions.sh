# Pinned versions of the real test peers (sourced by build.sh and the e2e scripts). Changing a version
# here rebuilds that peer into a new cache directory; the Go modules' go.mod/go.sum pin the rest.
K8S_VERSION=1.34.4       # k8s.io/kubernetes (kube-apiserver, kube-controller-manager, kubectl)
ETCD_VERSION=3.6.16      # go.etcd.io/etcd/server/v3
KAFKA_VERSION=4.1.1      # org.apache.kafka:kafka_2.13 (KRaft), from Maven Central
