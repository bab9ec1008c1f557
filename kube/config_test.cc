#include "kube/config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "kube/testing/client_fixture.h"
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

// A credential plugin written by the test: each run appends a line to `runs`, then prints the
// ExecCredential in the file named by $CRED_FILE (the test rewrites it between runs), and echoes
// the arguments and KUBERNETES_EXEC_INFO into `seen`.
std::string WritePlugin(const TempDir& dir) {
  const std::string path = dir.Write("plugin.sh",
                                     "#!/bin/sh\n"
                                     "echo run >> \"$(dirname \"$0\")/runs\"\n"
                                     "printf '%s|%s|%s\\n' \"$*\" \"$GREETING\" "
                                     "\"$KUBERNETES_EXEC_INFO\" > \"$(dirname \"$0\")/seen\"\n"
                                     "cat \"$CRED_FILE\"\n");
  fs::permissions(path, fs::perms::owner_all);
  return path;
}

int Runs(const TempDir& dir) {
  std::ifstream in(dir.path() / "runs");
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

std::string Credential(const std::string& version, const std::string& token,
                       const std::string& expiration = "") {
  std::string status = "\"token\":\"" + token + "\"";
  if (!expiration.empty()) status += ",\"expirationTimestamp\":\"" + expiration + "\"";
  return "{\"apiVersion\":\"" + version + "\",\"kind\":\"ExecCredential\",\"status\":{" + status +
         "}}";
}

std::string ExecKubeconfig(const std::string& version, const std::string& cred_file,
                           const std::string& server = "https://x") {
  return "current-context: c\n"
         "contexts: [{name: c, context: {cluster: k, user: u}}]\n"
         "clusters: [{name: k, cluster: {server: \"" +
         server +
         "\"}}]\n"
         "users:\n"
         "- name: u\n"
         "  user:\n"
         "    exec:\n"
         "      apiVersion: " +
         version +
         "\n"
         "      command: ./plugin.sh\n"
         "      args: [get-token, --cluster, k]\n"
         "      env: [{name: GREETING, value: hello}, {name: CRED_FILE, value: \"" +
         cred_file + "\"}]\n";
}

TEST(ExecPluginTest, KubeconfigExecIsParsedAndChecked) {
  TempDir dir;
  auto cfg =
      ParseKubeconfig(ExecKubeconfig("client.authentication.k8s.io/v1", "/c"), dir.path().string());
  ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
  ASSERT_TRUE(cfg->exec.has_value());
  EXPECT_EQ(cfg->exec->api_version, "client.authentication.k8s.io/v1");
  EXPECT_EQ(cfg->exec->command, (dir.path() / "plugin.sh").string());  // relative to the file
  EXPECT_EQ(cfg->exec->args, (std::vector<std::string>{"get-token", "--cluster", "k"}));
  ASSERT_EQ(cfg->exec->env.size(), 2u);
  EXPECT_EQ(cfg->exec->env[0], (std::pair<std::string, std::string>{"GREETING", "hello"}));

  const std::string head = R"(current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://x"}}]
)";
  const std::string bad[] = {
      "users: [{name: u, user: {exec: {command: aws}}}]",
      "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1alpha1, "
      "command: aws}}}]",
      "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1}}}]",
      "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, "
      "interactiveMode: Always}}}]",
      "users: [{name: u, user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: aws, "
      "env: [{value: x}]}}}]",
      "users: [{name: u, user: {auth-provider: {name: gcp}}}]",
  };
  for (const std::string& users : bad) {
    auto r = ParseKubeconfig(head + users + "\n", ".");
    EXPECT_TRUE(r.status().IsInvalidArgument()) << users;
  }
  // A bare command name stays a name (looked up in PATH when run).
  auto bare = ParseKubeconfig(head +
                                  "users: [{name: u, user: {exec: {apiVersion: "
                                  "client.authentication.k8s.io/v1beta1, command: aws}}}]\n",
                              "/somewhere");
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_EQ(bare->exec->command, "aws");
}

TEST(ExecPluginTest, ParseExecCredential) {
  const std::string v1 = "client.authentication.k8s.io/v1";
  auto ok = ParseExecCredential(Credential(v1, "t", "2030-01-01T00:00:00Z"), v1);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->token, "t");
  EXPECT_EQ(ok->expiration, ParseRfc3339("2030-01-01T00:00:00Z").value());
  auto cert = ParseExecCredential(
      R"({"apiVersion":")" + v1 +
          R"(","kind":"ExecCredential","status":{"clientCertificateData":"CERT","clientKeyData":"KEY"}})",
      v1);
  ASSERT_TRUE(cert.ok()) << cert.status().ToString();
  EXPECT_EQ(cert->client_cert_pem, "CERT");
  EXPECT_FALSE(cert->expiration.has_value());
  const std::string bad[] = {
      "not json",
      Credential("client.authentication.k8s.io/v1beta1", "t"),  // another version than asked
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"Other","status":{"token":"t"}})",
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{}})",
      R"({"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",)"
      R"("status":{"clientCertificateData":"CERT"}})",
      Credential(v1, "t", "tomorrow"),
  };
  for (const std::string& text : bad) {
    EXPECT_TRUE(ParseExecCredential(text, v1).status().IsInvalidArgument()) << text;
  }
}

TEST(ExecPluginTest, RunsThePluginCachesUntilExpiryAndAgainAfter401) {
  for (const std::string version :
       {"client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"}) {
    TempDir dir;
    WritePlugin(dir);
    const std::string cred =
        dir.Write("cred.json", Credential(version, "first", "2023-11-14T23:00:00Z"));
    auto cfg = ParseKubeconfig(ExecKubeconfig(version, cred), dir.path().string());
    ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
    ManualClock clock(ParseRfc3339("2023-11-14T22:00:00Z").value());
    BearerTokenSource source(*cfg, &clock);
    EXPECT_EQ(Runs(dir), 0);  // nothing runs before a token is needed
    EXPECT_EQ(source.Token().value(), "first");
    EXPECT_EQ(source.Token().value(), "first");
    EXPECT_EQ(Runs(dir), 1);
    // The plugin got its args, its env and KUBERNETES_EXEC_INFO of the configured version.
    std::ifstream seen_in(dir.path() / "seen");
    std::string seen;
    std::getline(seen_in, seen);
    EXPECT_EQ(seen, "get-token --cluster k|hello|{\"apiVersion\":\"" + version +
                        "\",\"kind\":\"ExecCredential\",\"spec\":{\"interactive\":false}}");

    // Expired: run again.
    dir.Write("cred.json", Credential(version, "second"));
    clock.AdvanceTo(ParseRfc3339("2023-11-14T23:00:00Z").value());
    EXPECT_EQ(source.Token().value(), "second");
    EXPECT_EQ(Runs(dir), 2);
    // No expiry: kept until the server refuses it.
    clock.Advance(std::chrono::hours(24 * 365));
    EXPECT_EQ(source.Token().value(), "second");
    EXPECT_EQ(Runs(dir), 2);
    dir.Write("cred.json", Credential(version, "third"));
    EXPECT_TRUE(source.Invalidate());
    EXPECT_EQ(source.Token().value(), "third");
    EXPECT_EQ(Runs(dir), 3);
  }
}

TEST(ExecPluginTest, PluginFailuresAreErrors) {
  TempDir dir;
  WritePlugin(dir);
  const std::string version = "client.authentication.k8s.io/v1";
  const std::string cred = dir.Write("cred.json", "garbage");
  auto cfg = ParseKubeconfig(ExecKubeconfig(version, cred), dir.path().string());
  ASSERT_TRUE(cfg.ok());
  ManualClock clock(Time::FromUnix(0));
  BearerTokenSource garbage(*cfg, &clock);
  EXPECT_TRUE(garbage.Token().status().IsInvalidArgument());

  ExecPlugin missing;
  missing.api_version = version;
  missing.command = (dir.path() / "no-such-plugin").string();
  missing.install_hint = "install the no-such-plugin package";
  auto r = RunExecPlugin(missing);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("install the no-such-plugin package"), std::string::npos)
      << r.status().ToString();

  ExecPlugin failing;
  failing.api_version = version;
  failing.command = "false";  // found in PATH, exits 1
  auto f = RunExecPlugin(failing);
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().message().find("exited with status 1"), std::string::npos)
      << f.status().ToString();

  BearerTokenSource plain("abc", "");
  EXPECT_FALSE(plain.Invalidate());
  EXPECT_FALSE(plain.Credential().ok());
}

TEST(ExecPluginTest, ContextFlagPicksAContextAndIsRefusedInCluster) {
  TempDir dir;
  fs::create_directories(dir.path() / "certs");
  dir.Write("certs/ca.pem", "PROD-CA\n");  // the prod context's certificate-authority file
  const std::string path = dir.Write("config", kKubeconfig);
  auto prod = LoadDefaultConfig(path, {}, "prod");
  auto current = LoadDefaultConfig(path, {}, "");
  ASSERT_TRUE(prod.ok()) << prod.status().ToString();
  ASSERT_TRUE(current.ok()) << current.status().ToString();
  EXPECT_NE(prod->source, current->source);
  EXPECT_NE(prod->source.find("context prod"), std::string::npos) << prod->source;
  EXPECT_FALSE(LoadDefaultConfig(path, {}, "no-such-context").ok());
  dir.Write("token", "t");
  dir.Write("ca.crt", "CA");
  auto in_cluster = LoadDefaultConfig("",
                                      Env(dir.path().string(), {{"KUBERNETES_SERVICE_HOST", "h"},
                                                                {"KUBERNETES_SERVICE_PORT", "1"}}),
                                      "prod");
  EXPECT_TRUE(in_cluster.status().IsInvalidArgument()) << in_cluster.status().ToString();
}

// The client against the fixture API server: the plugin's first token is refused (401), the
// client runs the plugin again and retries with the new one.
class ExecPluginClientTest : public testing::KubeClientFixture {
 protected:
  testing::FakeApiServerOptions ServerOptions() override {
    testing::FakeApiServerOptions o;
    o.bearer_tokens = {"good-token"};
    return o;
  }
  void Configure(PocoKubeClientOptions* options) override {
    WritePlugin(dir_);
    cred_ = dir_.Write("cred.json", Credential(kVersion, "revoked-token"));
    auto cfg = ParseKubeconfig(ExecKubeconfig(kVersion, cred_), dir_.path().string());
    ASSERT_TRUE(cfg.ok()) << cfg.status().ToString();
    options->config.exec = cfg->exec;
    options->wall_clock = &clock_;
  }
  static constexpr const char* kVersion = "client.authentication.k8s.io/v1beta1";
  TempDir dir_;
  std::string cred_;
};

TEST_F(ExecPluginClientTest, A401RunsThePluginAgainAndRetries) {
  // The client ran the plugin at Open (for a client certificate): "revoked-token" is cached.
  EXPECT_EQ(Runs(dir_), 1);
  dir_.Write("cred.json", Credential(kVersion, "good-token"));
  auto listed = client_->List(BatchJobs(), "", {});
  EXPECT_TRUE(listed.ok()) << listed.error().ToString();
  EXPECT_EQ(Runs(dir_), 2);
  ASSERT_TRUE(client_->List(BatchJobs(), "", {}).ok());  // "good-token" stays cached
  EXPECT_EQ(Runs(dir_), 2);
}

TEST_F(ExecPluginClientTest, A401AfterAFreshRunIsTheAnswer) {
  dir_.Write("cred.json", Credential(kVersion, "also-revoked"));
  auto listed = client_->List(BatchJobs(), "", {});
  ASSERT_FALSE(listed.ok());
  EXPECT_EQ(listed.error().code, 401);
  EXPECT_EQ(Runs(dir_), 2);  // one re-run per request, not a loop
}

}  // namespace
}  // namespace cronledger::kube
