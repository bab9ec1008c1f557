// HTTPS end to end: the fixture API server serves TLS with a certificate from a throw-away CA;
// the client trusts the CA from kubeconfig certificate-authority-data, presents the client
// certificate from client-certificate-data/client-key-data, and refuses a server its CA did not
// sign with a clear error.
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>

#include "kube/config.h"
#include "kube/poco_client.h"
#include "kube/testing/fake_api_server.h"
#include "kube/testing/recording_sleeper.h"
#include "kube/testing/test_pki.h"

namespace cronledger::kube {
namespace {

using testing::Base64;
using testing::FakeApiServer;

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pki = testing::MakeTestPki();
    ASSERT_TRUE(pki.ok()) << pki.status().ToString();
    pki_ = std::move(pki).value();
    testing::FakeApiServerOptions options;
    options.tls_cert_pem = pki_.server.cert;
    options.tls_key_pem = pki_.server.key;
    options.client_ca_pem = pki_.ca.cert;
    auto server = FakeApiServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
  }

  std::string Kubeconfig(const std::string& ca, bool client_cert) {
    std::string y =
        "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n"
        "  cluster:\n    server: " +
        server_->url() + "\n    certificate-authority-data: " + Base64(ca) +
        "\ncontexts:\n- name: c\n  context: {cluster: k, user: u}\nusers:\n- name: u\n"
        "  user:\n";
    if (client_cert) {
      y += "    client-certificate-data: " + Base64(pki_.client.cert) +
           "\n    client-key-data: " + Base64(pki_.client.key) + "\n";
    } else {
      y += "    token: abc\n";
    }
    return y;
  }

  std::unique_ptr<PocoKubeClient> Client(const std::string& kubeconfig) {
    auto config = ParseKubeconfig(kubeconfig, "/nonexistent");
    EXPECT_TRUE(config.ok()) << config.status().ToString();
    if (!config.ok()) return nullptr;
    PocoKubeClientOptions options;
    options.config = *config;
    options.clock = &clock_;
    options.sleeper = &sleeper_;
    options.request_timeout = std::chrono::seconds(10);
    options.qps = 0;
    auto client = PocoKubeClient::Open(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(client).value() : nullptr;
  }

  static Json Job(const std::string& name) {
    Json job = {{"apiVersion", "batch/v1"}, {"kind", "Job"}};
    job["metadata"] = {{"name", name}, {"namespace", "ns"}};
    job["spec"]["template"]["spec"] = {
        {"restartPolicy", "Never"},
        {"containers", Json::array({{{"name", "c"}, {"image", "busybox"}}})}};
    return job;
  }

  ManualClock clock_{Time::FromUnix(1700000000)};
  testing::RecordingSleeper sleeper_{clock_};
  testing::TestPki pki_;
  std::unique_ptr<FakeApiServer> server_;
};

TEST_F(TlsTest, TrustsTheKubeconfigCaAndPresentsTheClientCertificate) {
  ASSERT_EQ(server_->url().rfind("https://127.0.0.1:", 0), 0u) << server_->url();
  std::unique_ptr<PocoKubeClient> client = Client(Kubeconfig(pki_.ca.cert, true));
  ASSERT_NE(client, nullptr);
  auto created = client->Create(BatchJobs(), "ns", Job("j1"));
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  auto got = client->Get(BatchJobs(), "ns", "j1");
  ASSERT_TRUE(got.ok()) << got.error().ToString();
  EXPECT_EQ(got.value()["metadata"]["uid"], created.value()["metadata"]["uid"]);

  // A watch streams over TLS too.
  WatchOptions watch;
  watch.resource_version = "";
  std::vector<std::string> names;
  auto result = client->Watch(BatchJobs(), "ns", watch, [&](model::DecodedDocument& d) {
    for (const model::WatchEvent& e : d.events) names.push_back(e.name);
    return false;
  });
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(result->end, WatchEnd::kStopped);
  EXPECT_EQ(names, std::vector<std::string>{"j1"});

  // The server saw the client certificate (kube-apiserver's x509 user = CN) on every request.
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 3u);
  for (const auto& r : requests) {
    EXPECT_EQ(r.client_cert_cn, "cronledger-test") << r.method << " " << r.path;
    EXPECT_EQ(r.authorization, "");
  }

  // Token users present no certificate.
  std::unique_ptr<PocoKubeClient> token_client = Client(Kubeconfig(pki_.ca.cert, false));
  ASSERT_NE(token_client, nullptr);
  ASSERT_TRUE(token_client->Get(BatchJobs(), "ns", "j1").ok());
  EXPECT_EQ(server_->requests().back().client_cert_cn, "");
  EXPECT_EQ(server_->requests().back().authorization, "Bearer abc");
}

// The stall deadline holds over TLS too, where Poco's blocking read used to wait out the receive
// timeout twice (a 90 s stall_timeout was detected after about 180 s). The stream is silent for
// good, so the watch ends at stall_timeout; the bound asserted, twice that, is the defect's
// smallest value — the margin is for a loaded machine, not a speed claim.
TEST_F(TlsTest, AStalledWatchEndsWithinTheStallTimeout) {
  std::unique_ptr<PocoKubeClient> client = Client(Kubeconfig(pki_.ca.cert, true));
  ASSERT_NE(client, nullptr);
  server_->SetWatchesStalled(true);
  WatchOptions watch;
  watch.resource_version = "";
  watch.stall_timeout = std::chrono::milliseconds(1500);
  const auto start = std::chrono::steady_clock::now();
  auto result =
      client->Watch(BatchJobs(), "ns", watch, [](model::DecodedDocument&) { return true; });
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(result->end, WatchEnd::kStalled) << result->detail;
  EXPECT_GE(took, watch.stall_timeout);
  EXPECT_LT(took, 2 * watch.stall_timeout);
}

TEST_F(TlsTest, AnotherCaIsRefusedWithAClearErrorAndNotRetried) {
  auto other = testing::MakeTestPki("some-other-ca");
  ASSERT_TRUE(other.ok());
  std::unique_ptr<PocoKubeClient> client = Client(Kubeconfig(other->ca.cert, true));
  ASSERT_NE(client, nullptr);
  auto got = client->Get(BatchJobs(), "ns", "j1");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().reason, "CertificateNotTrusted") << got.error().ToString();
  EXPECT_NE(got.error().message.find("certificate-authority-data"), std::string::npos)
      << got.error().message;
  EXPECT_NE(got.error().message.find("certificate verify failed"), std::string::npos)
      << got.error().message;
  EXPECT_TRUE(sleeper_.waits().empty()) << "an untrusted server is not retried";
  EXPECT_EQ(server_->request_count(), 0u);  // no request got through

  // A watch is refused the same way.
  WatchOptions watch;
  auto w = client->Watch(BatchJobs(), "ns", watch, [](model::DecodedDocument&) { return true; });
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().reason, "CertificateNotTrusted");
}

TEST_F(TlsTest, AClientCertificateFromAnotherCaFailsTheHandshake) {
  auto other = testing::MakeTestPki("some-other-ca");
  ASSERT_TRUE(other.ok());
  pki_.client = other->client;  // trusted server, but a client certificate the server rejects
  std::unique_ptr<PocoKubeClient> client = Client(Kubeconfig(pki_.ca.cert, true));
  ASSERT_NE(client, nullptr);
  auto got = client->Get(BatchJobs(), "ns", "j1");
  ASSERT_FALSE(got.ok());
  EXPECT_TRUE(got.error().IsTransport()) << got.error().ToString();
  EXPECT_EQ(server_->request_count(), 0u);
}

}  // namespace
}  // namespace cronledger::kube
