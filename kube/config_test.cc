#include "kube/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>

#include "kube/token_source.h"

namespace cronledger::kube {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("kube_config_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    const fs::path p = path_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

// "CA-PEM\n" and "CERT\n", "KEY\n" in base64.
const char* kKubeconfig = R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example:6443
    certificate-authority-data: Q0EtUEVNCg==
- name: prod-cluster
  cluster:
    server: https://prod.example:6443
    certificate-authority: certs/ca.pem
    insecure-skip-tls-verify: false
contexts:
- name: dev
  context:
    cluster: dev-cluster
    user: dev-user
    namespace: team-a
- name: prod
  context:
    cluster: prod-cluster
    user: prod-user
users:
- name: dev-user
  user:
    client-certificate-data: Q0VSVAo=
    client-key-data: S0VZCg==
- name: prod-user
  user:
    tokenFile: secrets/token
)";

TEST(KubeconfigTest, CurrentContextWithInlineData) {
  auto cfg = ParseKubeconfig(kKubeconfig, "/nowhere");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->server, "https://dev.example:6443");
  EXPECT_EQ(cfg->ca_pem, "CA-PEM\n");
  EXPECT_EQ(cfg->client_cert_pem, "CERT\n");
  EXPECT_EQ(cfg->client_key_pem, "KEY\n");
  EXPECT_EQ(cfg->namespace_, "team-a");
  EXPECT_TRUE(cfg->token.empty());
}

TEST(KubeconfigTest, ExplicitContextWithRelativeFiles) {
  TempDir dir;
  fs::create_directories(dir.path() / "certs");
  dir.Write("certs/ca.pem", "PROD-CA\n");
  const std::string path = dir.Write("config", kKubeconfig);
  auto cfg = LoadKubeconfigFile(path, "prod");
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->server, "https://prod.example:6443");
  EXPECT_EQ(cfg->ca_pem, "PROD-CA\n");
  EXPECT_EQ(cfg->token_file, (dir.path() / "secrets/token").string());
  EXPECT_EQ(cfg->namespace_, "default");
  EXPECT_FALSE(cfg->insecure_skip_tls_verify);
}

TEST(KubeconfigTest, Errors) {
  EXPECT_FALSE(ParseKubeconfig("{ not: [yaml", ".").ok());
  EXPECT_FALSE(ParseKubeconfig(kKubeconfig, ".", "missing").ok());
  // Missing CA file.
  EXPECT_FALSE(ParseKubeconfig(kKubeconfig, "/nonexistent", "prod").ok());
  const std::string bad_b64 = R"(current-context: c
contexts: [{name: c, context: {cluster: k}}]
clusters: [{name: k, cluster: {server: "https://x", certificate-authority-data: "!!!"}}]
)";
  EXPECT_TRUE(ParseKubeconfig(bad_b64, ".").status().IsInvalidArgument());
  const std::string exec = R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://x", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {exec: {command: aws}}}]
)";
  auto r = ParseKubeconfig(exec, ".");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("exec"), std::string::npos);
}

TEST(KubeconfigTest, StaticTokenAndInsecure) {
  const std::string text = R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "http://127.0.0.1:8080", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: abc.def}}]
)";
  auto cfg = ParseKubeconfig(text, ".");
  ASSERT_TRUE(cfg.ok());
  EXPECT_TRUE(cfg->insecure_skip_tls_verify);
  EXPECT_EQ(cfg->token, "abc.def");
}

InClusterOptions Env(const std::string& dir, std::map<std::string, std::string> vars) {
  InClusterOptions o;
  o.service_account_dir = dir;
  o.getenv = [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  return o;
}

TEST(InClusterTest, ReadsServiceAccountDirectory) {
  TempDir dir;
  dir.Write("token", "tok-1\n");
  dir.Write("ca.crt", "CLUSTER-CA");
  dir.Write("namespace", "cronledger-system");
  auto cfg = LoadInClusterConfig(Env(dir.path().string(), {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                                           {"KUBERNETES_SERVICE_PORT", "443"}}));
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  EXPECT_EQ(cfg->server, "https://10.96.0.1:443");
  EXPECT_EQ(cfg->ca_pem, "CLUSTER-CA");
  EXPECT_EQ(cfg->namespace_, "cronledger-system");
  EXPECT_EQ(cfg->token_file, (dir.path() / "token").string());

  auto v6 = LoadInClusterConfig(Env(dir.path().string(), {{"KUBERNETES_SERVICE_HOST", "fd00::1"},
                                                          {"KUBERNETES_SERVICE_PORT", "443"}}));
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->server, "https://[fd00::1]:443");
}

TEST(InClusterTest, NotInCluster) {
  TempDir dir;
  auto cfg = LoadInClusterConfig(Env(dir.path().string(), {}));
  EXPECT_EQ(cfg.status().code(), Status::Code::kFailedPrecondition);
  auto no_token =
      LoadInClusterConfig(Env(dir.path().string(), {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                                    {"KUBERNETES_SERVICE_PORT", "443"}}));
  EXPECT_FALSE(no_token.ok());
}

TEST(InClusterTest, DefaultOrderPrefersFlagThenEnvThenCluster) {
  TempDir dir;
  const std::string path = dir.Write("config", kKubeconfig);
  auto from_env = LoadDefaultConfig("", Env(dir.path().string(), {{"KUBECONFIG", path}}));
  ASSERT_TRUE(from_env.ok());
  EXPECT_EQ(from_env->server, "https://dev.example:6443");
  dir.Write("token", "t");
  dir.Write("ca.crt", "CA");
  auto in_cluster = LoadDefaultConfig(
      "", Env(dir.path().string(),
              {{"KUBERNETES_SERVICE_HOST", "h"}, {"KUBERNETES_SERVICE_PORT", "1"}}));
  ASSERT_TRUE(in_cluster.ok());
  EXPECT_EQ(in_cluster->source, "in-cluster");
  EXPECT_TRUE(LoadDefaultConfig("", Env(dir.path().string(), {})).status().IsNotFound());
}

TEST(TokenSourceTest, RereadsRotatedTokenFile) {
  TempDir dir;
  const std::string path = dir.Write("token", "first\n");
  BearerTokenSource source("static", path);
  EXPECT_EQ(source.Token().value(), "first");
  // The kubelet swaps the file atomically: a new inode even when size and mtime match.
  dir.Write("token.new", "secnd\n");
  fs::rename(dir.path() / "token.new", path);
  EXPECT_EQ(source.Token().value(), "secnd");
  // A vanished or empty file mid-rotation keeps the last good token.
  fs::remove(path);
  EXPECT_EQ(source.Token().value(), "secnd");
  dir.Write("token", "");
  EXPECT_EQ(source.Token().value(), "secnd");
  dir.Write("token", "third-token");
  EXPECT_EQ(source.Token().value(), "third-token");
}

TEST(TokenSourceTest, StaticAndMissing) {
  BearerTokenSource fixed("abc", "");
  EXPECT_EQ(fixed.Token().value(), "abc");
  BearerTokenSource missing("", "/nonexistent/token");
  EXPECT_FALSE(missing.Token().ok());
}

}  // namespace
}  // namespace cronledger::kube
