#include "kube/config.h"

#include <Poco/Base64Decoder.h>
#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace cronledger::kube {
namespace {

namespace fs = std::filesystem;

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::NotFound("cannot open " + path);
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return Status::IoError("cannot read " + path);
  return out.str();
}

std::string TrimSpace(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

Result<std::string> DecodeBase64(const std::string& text, std::string_view field) {
  std::string compact;
  for (char c : text) {
    if (c != '\n' && c != '\r' && c != ' ' && c != '\t') compact += c;
  }
  for (char c : compact) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '+' || c == '/' || c == '=';
    if (!ok) return Status::InvalidArgument(std::string(field) + ": invalid base64");
  }
  if (compact.size() % 4 != 0) {
    return Status::InvalidArgument(std::string(field) + ": invalid base64 length");
  }
  try {
    std::istringstream in(compact);
    Poco::Base64Decoder decoder(in);
    std::ostringstream out;
    out << decoder.rdbuf();
    return out.str();
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string(field) + ": " + e.what());
  }
}

std::string Str(const YAML::Node& node, const char* key) {
  const YAML::Node v = node[key];
  return v && v.IsScalar() ? v.Scalar() : "";
}

// Finds the entry named `name` in a kubeconfig list (clusters, users, contexts) and returns its
// inner map (entry[field]).
Result<YAML::Node> FindNamed(const YAML::Node& root, const char* list, const char* field,
                             const std::string& name) {
  const YAML::Node entries = root[list];
  if (entries && entries.IsSequence()) {
    for (const YAML::Node& entry : entries) {
      if (entry.IsMap() && Str(entry, "name") == name) {
        const YAML::Node inner = entry[field];
        if (inner && inner.IsMap()) return YAML::Node(inner);
        return Status::InvalidArgument(std::string(list) + " entry \"" + name + "\" has no " +
                                       field);
      }
    }
  }
  return Status::InvalidArgument(std::string(field) + " \"" + name + "\" not found in " + list);
}

// `*-data` (base64) wins over the file field, as in client-go.
Result<std::string> DataOrFile(const YAML::Node& node, const char* data_key, const char* file_key,
                               const fs::path& base_dir) {
  const std::string data = Str(node, data_key);
  if (!data.empty()) return DecodeBase64(data, data_key);
  const std::string file = Str(node, file_key);
  if (file.empty()) return std::string();
  fs::path p(file);
  if (p.is_relative()) p = base_dir / p;
  return ReadFile(p.string());
}

std::string ResolvePath(const std::string& file, const fs::path& base_dir) {
  if (file.empty()) return file;
  fs::path p(file);
  return p.is_relative() ? (base_dir / p).lexically_normal().string() : file;
}

constexpr std::string_view kExecV1 = "client.authentication.k8s.io/v1";
constexpr std::string_view kExecV1beta1 = "client.authentication.k8s.io/v1beta1";

// users[].user.exec, checked as client-go's clientcmd validation does.
Result<ExecPlugin> ParseExec(const YAML::Node& exec, const fs::path& base) {
  if (!exec.IsMap()) return Status::InvalidArgument("user.exec must be a mapping");
  ExecPlugin plugin;
  plugin.api_version = Str(exec, "apiVersion");
  if (plugin.api_version != kExecV1 && plugin.api_version != kExecV1beta1) {
    return Status::InvalidArgument("user.exec.apiVersion must be " + std::string(kExecV1) + " or " +
                                   std::string(kExecV1beta1) + ", not \"" + plugin.api_version +
                                   "\"");
  }
  plugin.command = Str(exec, "command");
  if (plugin.command.empty()) return Status::InvalidArgument("user.exec.command is required");
  if (plugin.command.find('/') != std::string::npos) {
    plugin.command = ResolvePath(plugin.command, base);
  }
  if (const YAML::Node args = exec["args"]) {
    if (!args.IsSequence()) return Status::InvalidArgument("user.exec.args must be a list");
    for (const YAML::Node& a : args) {
      if (!a.IsScalar()) return Status::InvalidArgument("user.exec.args must be strings");
      plugin.args.push_back(a.Scalar());
    }
  }
  if (const YAML::Node env = exec["env"]) {
    if (!env.IsSequence()) return Status::InvalidArgument("user.exec.env must be a list");
    for (const YAML::Node& e : env) {
      if (!e.IsMap() || Str(e, "name").empty()) {
        return Status::InvalidArgument("user.exec.env entries need a name and a value");
      }
      plugin.env.emplace_back(Str(e, "name"), Str(e, "value"));
    }
  }
  plugin.install_hint = Str(exec, "installHint");
  // cronledger runs without a terminal: a plugin that must ask the user cannot work.
  if (Str(exec, "interactiveMode") == "Always") {
    return Status::InvalidArgument(
        "user.exec.interactiveMode is Always, but cronledger runs without a terminal");
  }
  return plugin;
}

Status FillUser(const YAML::Node& user, const fs::path& base, KubeConfig* cfg) {
  if (user["auth-provider"]) {
    return Status::InvalidArgument(
        "kubeconfig user uses an auth-provider plugin, which cronledger does not run; use an exec "
        "plugin, a token, tokenFile or a client certificate");
  }
  if (const YAML::Node exec = user["exec"]) {
    CL_ASSIGN_OR_RETURN(cfg->exec, ParseExec(exec, base));
  }
  CL_ASSIGN_OR_RETURN(cfg->client_cert_pem,
                      DataOrFile(user, "client-certificate-data", "client-certificate", base));
  CL_ASSIGN_OR_RETURN(cfg->client_key_pem, DataOrFile(user, "client-key-data", "client-key", base));
  if (cfg->client_cert_pem.empty() != cfg->client_key_pem.empty()) {
    return Status::InvalidArgument("kubeconfig user needs both a client certificate and a key");
  }
  cfg->token = Str(user, "token");
  cfg->token_file = ResolvePath(Str(user, "tokenFile"), base);
  return Status::Ok();
}

}  // namespace

Result<KubeConfig> LoadInClusterConfig(const InClusterOptions& options) {
  auto getenv = options.getenv;
  if (!getenv) {
    getenv = [](const std::string& name) -> std::optional<std::string> {
      const char* v = std::getenv(name.c_str());
      return v ? std::optional<std::string>(v) : std::nullopt;
    };
  }
  const auto host = getenv("KUBERNETES_SERVICE_HOST");
  const auto port = getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !port || host->empty() || port->empty()) {
    return Status::FailedPrecondition(
        "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
        "KUBERNETES_SERVICE_PORT must be defined");
  }
  KubeConfig cfg;
  // net.JoinHostPort: IPv6 literals need brackets.
  const bool ipv6 = host->find(':') != std::string::npos;
  cfg.server = "https://" + (ipv6 ? "[" + *host + "]" : *host) + ":" + *port;
  const fs::path dir(options.service_account_dir);
  cfg.token_file = (dir / "token").string();
  CL_ASSIGN_OR_RETURN(std::string token, ReadFile(cfg.token_file));
  if (TrimSpace(token).empty()) return Status::IoError("empty token in " + cfg.token_file);
  CL_ASSIGN_OR_RETURN(cfg.ca_pem, ReadFile((dir / "ca.crt").string()));
  auto ns = ReadFile((dir / "namespace").string());
  if (ns.ok() && !TrimSpace(*ns).empty()) cfg.namespace_ = TrimSpace(*ns);
  cfg.source = "in-cluster";
  return cfg;
}

Result<KubeConfig> ParseKubeconfig(std::string_view yaml, std::string_view base_dir,
                                   std::string_view context) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string("kubeconfig is not valid YAML: ") + e.what());
  }
  if (!root.IsMap()) return Status::InvalidArgument("kubeconfig is not a YAML mapping");
  try {
    std::string context_name(context);
    if (context_name.empty()) context_name = Str(root, "current-context");
    if (context_name.empty()) return Status::InvalidArgument("kubeconfig has no current-context");
    CL_ASSIGN_OR_RETURN(YAML::Node ctx, FindNamed(root, "contexts", "context", context_name));
    CL_ASSIGN_OR_RETURN(YAML::Node cluster,
                        FindNamed(root, "clusters", "cluster", Str(ctx, "cluster")));
    const fs::path base(base_dir);
    KubeConfig cfg;
    cfg.server = Str(cluster, "server");
    if (cfg.server.empty()) return Status::InvalidArgument("kubeconfig cluster has no server");
    CL_ASSIGN_OR_RETURN(cfg.ca_pem, DataOrFile(cluster, "certificate-authority-data",
                                               "certificate-authority", base));
    cfg.insecure_skip_tls_verify = Str(cluster, "insecure-skip-tls-verify") == "true";
    if (!Str(ctx, "user").empty()) {
      CL_ASSIGN_OR_RETURN(YAML::Node user, FindNamed(root, "users", "user", Str(ctx, "user")));
      CL_RETURN_IF_ERROR(FillUser(user, base, &cfg));
    }
    if (!Str(ctx, "namespace").empty()) cfg.namespace_ = Str(ctx, "namespace");
    cfg.source = "kubeconfig context " + context_name;
    return cfg;
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string("kubeconfig: ") + e.what());
  }
}

Result<KubeConfig> LoadKubeconfigFile(const std::string& path, std::string_view context) {
  CL_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  const fs::path dir = fs::absolute(fs::path(path)).parent_path();
  auto cfg = ParseKubeconfig(text, dir.string(), context);
  if (!cfg.ok()) return cfg.status().WithContext(path);
  cfg->source = "kubeconfig " + path + " " + cfg->source.substr(std::string("kubeconfig ").size());
  return cfg;
}

Result<KubeConfig> LoadDefaultConfig(const std::string& kubeconfig_flag,
                                     const InClusterOptions& in_cluster, std::string_view context) {
  if (!kubeconfig_flag.empty()) return LoadKubeconfigFile(kubeconfig_flag, context);
  auto getenv = in_cluster.getenv;
  if (!getenv) {
    getenv = [](const std::string& name) -> std::optional<std::string> {
      const char* v = std::getenv(name.c_str());
      return v ? std::optional<std::string>(v) : std::nullopt;
    };
  }
  if (auto env = getenv("KUBECONFIG"); env && !env->empty()) {
    return LoadKubeconfigFile(env->substr(0, env->find(':')), context);
  }
  auto cluster = LoadInClusterConfig(in_cluster);
  if (cluster.ok() && !context.empty()) {
    return Status::InvalidArgument("--context " + std::string(context) +
                                   ": the in-cluster configuration has no contexts; pass "
                                   "--kubeconfig");
  }
  if (cluster.ok() || cluster.status().code() != Status::Code::kFailedPrecondition) return cluster;
  if (auto home = getenv("HOME"); home && !home->empty()) {
    const std::string path = *home + "/.kube/config";
    if (fs::exists(path)) return LoadKubeconfigFile(path, context);
  }
  return Status::NotFound(
      "no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, or run in a cluster");
}

}  // namespace cronledger::kube
