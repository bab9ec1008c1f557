#pragma once

// Where the API server is and how to authenticate to it: in-cluster service-account config or a
// kubeconfig file, resolved into one KubeConfig the client consumes. Loading follows client-go's
// clientcmd: the kubeconfig's current-context (or an explicit context) selects a cluster and a
// user; file paths in a kubeconfig are relative to the kubeconfig's directory; `*-data` fields are
// base64 and win over their file counterparts.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/result.h"

namespace cronledger::kube {

// A kubeconfig `users[].user.exec` credential plugin (client-go's ExecConfig): a command that
// prints an ExecCredential with a bearer token and/or a client certificate (kube/token_source.h
// runs it).
struct ExecPlugin {
  // client.authentication.k8s.io/v1 or client.authentication.k8s.io/v1beta1: the ExecCredential
  // version the plugin is given (KUBERNETES_EXEC_INFO) and must answer in.
  std::string api_version;
  // The program: a bare name is looked up in PATH; a relative path with a '/' is relative to the
  // kubeconfig's directory, as clientcmd resolves it.
  std::string command;
  std::vector<std::string> args;
  // Added to cronledger's own environment for the plugin.
  std::vector<std::pair<std::string, std::string>> env;
  // Shown when the command cannot be started (e.g. "install gke-gcloud-auth-plugin").
  std::string install_hint;
};

struct KubeConfig {
  // Base URL: "https://10.96.0.1:443". "http://" is accepted for tests and local proxies.
  std::string server;
  // PEM bundle of trusted CAs. Empty: the system trust store.
  std::string ca_pem;
  // PEM client certificate and key for mutual TLS; both or neither.
  std::string client_cert_pem;
  std::string client_key_pem;
  // A static bearer token.
  std::string token;
  // A file holding the bearer token, re-read when it changes (projected service-account tokens
  // rotate). When set it wins over `token`, as in client-go's BearerTokenFile.
  std::string token_file;
  // A credential plugin; when set its token and client certificate win over the fields above.
  std::optional<ExecPlugin> exec;
  bool insecure_skip_tls_verify = false;
  // The namespace of the context, or of the service account in-cluster. Default: "default".
  std::string namespace_ = "default";
  // Where this config came from, for messages: "in-cluster", or "kubeconfig <path> context <c>".
  std::string source;
};

struct InClusterOptions {
  // The projected service-account volume. Tests point this at a temporary directory.
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  // Environment lookup. Default: std::getenv.
  std::function<std::optional<std::string>(const std::string&)> getenv;
};

// In-cluster config from KUBERNETES_SERVICE_HOST/KUBERNETES_SERVICE_PORT and the service-account
// directory (token, ca.crt, namespace). FailedPrecondition when not running in a cluster (variables
// unset); NotFound/IoError when the token or CA cannot be read.
Result<KubeConfig> LoadInClusterConfig(const InClusterOptions& options = {});

// Parses kubeconfig YAML. `base_dir` resolves relative paths; `context` overrides
// current-context. InvalidArgument for malformed YAML, a missing context/cluster/user, bad base64,
// a malformed exec plugin, or credentials cronledger cannot use (auth-provider plugins, exec
// plugins that need a terminal).
Result<KubeConfig> ParseKubeconfig(std::string_view yaml, std::string_view base_dir,
                                   std::string_view context = "");
Result<KubeConfig> LoadKubeconfigFile(const std::string& path, std::string_view context = "");

// controller-runtime's order: an explicit --kubeconfig path, else $KUBECONFIG (first entry), else
// in-cluster, else $HOME/.kube/config.
// `context` (--context) picks a kubeconfig context instead of current-context; it is an error
// with the in-cluster configuration, which has no contexts.
Result<KubeConfig> LoadDefaultConfig(const std::string& kubeconfig_flag,
                                     const InClusterOptions& in_cluster = {},
                                     std::string_view context = "");

}  // namespace cronledger::kube
