// The metrics and health-probe listeners of `cronledger run` (--metrics-bind-address,
// --health-probe-bind-address), scraped over HTTP: readiness follows the informers' sync, a
// follower is ready but not leading, /metrics carries the creation-skew histogram fed by the
// controller's creates and the counters.
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>

#include <cerrno>
#include <cstring>

#include "kube/lease.h"
#include "kube/manager_server.h"
#include "kube/testing/raw_http_client.h"
#include "model/build_info.h"
#include "tests/run/run_fixture.h"

namespace cronledger::app::testing {
namespace {

struct Scrape {
  int status = 0;
  std::string content_type;
  std::string body;
};

Scrape Get(uint16_t port, const std::string& target) {
  Poco::Net::HTTPClientSession session("127.0.0.1", port);
  session.setTimeout(Poco::Timespan(10, 0));
  Poco::Net::HTTPRequest request("GET", target, Poco::Net::HTTPMessage::HTTP_1_1);
  session.sendRequest(request);
  Poco::Net::HTTPResponse response;
  std::istream& in = session.receiveResponse(response);
  Scrape out;
  out.status = static_cast<int>(response.getStatus());
  out.content_type = response.getContentType();
  Poco::StreamCopier::copyToString(in, out.body);
  return out;
}

bool Has(const std::string& text, const std::string& line) {
  return text.find(line) != std::string::npos;
}

class EndpointsTest : public RunFixture {
 protected:
  void Open(const RunConfig& config) {
    run_client_ = NewClient(kAssemblyAgent);
    ASSERT_NE(run_client_, nullptr);
    RunParts parts{ledger_.get(), run_client_.get(), &sleeper_, &clock_, &clock_, tzdb_.get(), {}};
    auto assembly = RunAssembly::Open(config, parts);
    ASSERT_TRUE(assembly.ok()) << assembly.status().ToString();
    assembly_ = std::move(assembly).value();
    kube::ManagerServerOptions metrics;
    metrics.listen = "127.0.0.1:0";
    metrics.metrics = [this] { return assembly_->RenderMetrics(); };
    auto m = kube::ManagerServer::Start(metrics);
    ASSERT_TRUE(m.ok()) << m.status().ToString();
    metrics_ = std::move(m).value();
    kube::ManagerServerOptions probes;
    probes.listen = "127.0.0.1:0";
    probes.probes = true;
    probes.readyz = assembly_->ReadinessChecks();
    auto p = kube::ManagerServer::Start(probes);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    probes_ = std::move(p).value();
  }
  void TearDown() override {
    metrics_.reset();
    probes_.reset();
    RunFixture::TearDown();
  }
  std::unique_ptr<kube::ManagerServer> metrics_;
  std::unique_ptr<kube::ManagerServer> probes_;
};

TEST_F(EndpointsTest, ReadinessFollowsTheSyncAndMetricsCarryTheSkewHistogram) {
  const kube::ResourceType& type = kube::CronledgerCronJobs();
  ASSERT_TRUE(server_->Create(type, CronJobObject(type, "prod", "backup", "*/5 * * * *")).ok());
  Open(Config(type));

  // Alive at once; not ready before the reflectors have synced (they have not started).
  Scrape healthz = Get(probes_->port(), "/healthz");
  EXPECT_EQ(healthz.status, 200);
  EXPECT_EQ(healthz.body, "ok");
  Scrape readyz = Get(probes_->port(), "/readyz");
  EXPECT_EQ(readyz.status, 500);
  EXPECT_EQ(readyz.body,
            "[+]ledger ok\n[-]informers-synced failed: reason withheld\n[+]ingest ok\n"
            "healthz check failed\n");
  EXPECT_EQ(Get(probes_->port(), "/readyz/informers-synced").status, 500);
  EXPECT_EQ(Get(probes_->port(), "/readyz/ledger").status, 200);
  EXPECT_EQ(Get(probes_->port(), "/readyz?exclude=informers-synced").status, 200);
  EXPECT_EQ(Get(probes_->port(), "/metrics").status, 404);  // metrics have their own listener

  ASSERT_TRUE(assembly_->StartIngest().ok());
  ASSERT_TRUE(Eventually([&] { return Get(probes_->port(), "/readyz").status == 200; }));
  EXPECT_EQ(Get(probes_->port(), "/readyz?verbose").body,
            "[+]ledger ok\n[+]informers-synced ok\n[+]ingest ok\nhealthz check passed\n");

  // The controller creates the 00:05 Job at 00:05:07: one observation of 7 s (le=8).
  Settle(type);
  clock_.AdvanceTo(Time::FromUnix(kStart + 5 * 60 + 7));
  Settle(type);
  ASSERT_TRUE(server_->Get(kube::BatchJobs(), "prod", JobName("backup", kStart + 300)));
  const Scrape m = Get(metrics_->port(), "/metrics");
  EXPECT_EQ(m.status, 200);
  EXPECT_EQ(m.content_type, "text/plain; version=0.0.4; charset=utf-8");
  const std::string skew = "cronjob_controller_job_creation_skew_duration_seconds";
  EXPECT_TRUE(Has(m.body, "# TYPE " + skew + " histogram\n")) << m.body;
  EXPECT_TRUE(Has(m.body, skew + "_bucket{le=\"4\"} 0\n")) << m.body;
  EXPECT_TRUE(Has(m.body, skew + "_bucket{le=\"8\"} 1\n")) << m.body;
  EXPECT_TRUE(Has(m.body, skew + "_bucket{le=\"+Inf\"} 1\n")) << m.body;
  EXPECT_TRUE(Has(m.body, skew + "_sum 7\n")) << m.body;
  EXPECT_TRUE(Has(m.body, skew + "_count 1\n")) << m.body;
  // The passes ran on the test thread (Settle); the assembly's own workers were never started.
  EXPECT_TRUE(Has(m.body, "cronledger_acting 0\n")) << m.body;
  EXPECT_TRUE(Has(m.body, "cronledger_ingest_synced{resource=\"cronjobs.v1.cronledger.io\"} 1\n"))
      << m.body;
  EXPECT_TRUE(Has(m.body, "cronledger_ingest_lists_total{resource=\"jobs.v1.batch\"} 1\n"))
      << m.body;
  // The CronJob's ADDED and the Job's ADDED (at least; status writes add MODIFIED events).
  const auto stats = assembly_->controller().Stats();
  EXPECT_GE(stats.events_ingested, 2u);
  EXPECT_TRUE(Has(m.body, "cronledger_controller_events_ingested_total " +
                              std::to_string(stats.events_ingested) + "\n"))
      << m.body;
  EXPECT_TRUE(Has(m.body, "\ncronledger_build_info{version=\"" +
                              std::string(model::CronledgerVersion()) + "\",tzdata=\"" +
                              model::TzdataLabel(RunConfig().zoneinfo_dir) + "\"} 1\n"))
      << m.body;
  EXPECT_FALSE(Has(m.body, "leader_election_master_status")) << "no election configured";
  EXPECT_EQ(Get(metrics_->port(), "/healthz").status, 404);

  // Every fire time so far has its decision. Then no pass runs while 00:10 and 00:15 come due:
  // both are unaccounted (more than 10 s past) until a pass accounts for them.
  EXPECT_TRUE(Has(m.body, "# TYPE cronledger_unaccounted_fire_times gauge\n")) << m.body;
  EXPECT_TRUE(Has(m.body, "\ncronledger_unaccounted_fire_times 0\n")) << m.body;
  clock_.AdvanceTo(Time::FromUnix(kStart + 15 * 60 + 30));
  EXPECT_TRUE(
      Has(Get(metrics_->port(), "/metrics").body, "\ncronledger_unaccounted_fire_times 2\n"));
  Settle(type);
  EXPECT_TRUE(
      Has(Get(metrics_->port(), "/metrics").body, "\ncronledger_unaccounted_fire_times 0\n"));
}

TEST_F(EndpointsTest, AFollowerIsReadyButNotLeading) {
  const kube::ResourceType& type = kube::CronledgerCronJobs();
  RunConfig config = Config(type);
  kube::LeaderElectionOptions le;
  le.namespace_ = "kube-system";
  le.name = "cronledger-controller";
  le.identity = "follower";
  config.leader_election = le;
  kube::LeaderElectionOptions other_options = le;
  other_options.identity = "leader";
  kube::LeaseElector other(*client_, clock_, clock_, other_options);
  ASSERT_TRUE(other.Step());

  Open(config);
  ASSERT_TRUE(assembly_->StartIngest().ok());
  assembly_->StartActing();
  ASSERT_TRUE(Eventually([&] {
    return assembly_->elector()->last_error().find("held by leader") != std::string::npos;
  }));
  ASSERT_TRUE(Eventually([&] { return Get(probes_->port(), "/readyz").status == 200; }));
  const Scrape m = Get(metrics_->port(), "/metrics");
  EXPECT_TRUE(Has(m.body, "leader_election_master_status{name=\"cronledger-controller\"} 0\n"))
      << m.body;
  EXPECT_TRUE(Has(m.body, "cronledger_acting 0\n")) << m.body;

  // The leader gives the lease up: the follower leads, and says so.
  ASSERT_TRUE(other.Release().ok());
  EXPECT_TRUE(Eventually([&] {
    return Has(Get(metrics_->port(), "/metrics").body,
               "leader_election_master_status{name=\"cronledger-controller\"} 1\n");
  }));
  EXPECT_TRUE(Eventually(
      [&] { return Has(Get(metrics_->port(), "/metrics").body, "cronledger_acting 1\n"); }));
  EXPECT_EQ(Get(probes_->port(), "/readyz").status, 200);
}

// Idle connections held against both listeners (the defect: two of them stalled /healthz and
// /metrics for 60 s, and a kubelet liveness probe would have restarted a healthy controller).
// The probe must answer within the kubelet's 1 s timeoutSeconds; the test allows 3 s for a
// loaded machine — a liveness deadline, not a speed claim (kube/http_server_test.cc has the rest).
TEST_F(EndpointsTest, IdleConnectionsDoNotKeepTheProbesOrMetricsFromAnswering) {
  ASSERT_GE(kube::testing::RaiseDescriptorLimit(4096), 2200u);
  Open(Config(kube::CronledgerCronJobs()));
  std::vector<kube::testing::RawConnection> idle;
  for (uint16_t port : {probes_->port(), metrics_->port()}) {
    for (int i = 0; i < 1000; ++i) {
      auto c = kube::testing::RawConnection::Open(port, "127.0.0.2");
      ASSERT_TRUE(c.has_value()) << "connection " << i << ": " << std::strerror(errno);
      idle.push_back(std::move(*c));
    }
  }
  const Duration deadline = std::chrono::seconds(3);
  auto healthz = kube::testing::GetWithin(probes_->port(), "/healthz", deadline);
  ASSERT_TRUE(healthz.has_value()) << "/healthz did not answer beside 1000 idle connections";
  EXPECT_EQ(kube::testing::StatusOf(*healthz), 200);
  auto metrics = kube::testing::GetWithin(metrics_->port(), "/metrics", deadline);
  ASSERT_TRUE(metrics.has_value()) << "/metrics did not answer beside 1000 idle connections";
  EXPECT_EQ(kube::testing::StatusOf(*metrics), 200);
}

TEST(BindAddress, ControllerRuntimeSpellings) {
  EXPECT_EQ(kube::ParseBindAddress("0").value(), std::nullopt);
  EXPECT_EQ(kube::ParseBindAddress("").value(), std::nullopt);
  EXPECT_EQ(kube::ParseBindAddress(":8080").value(), "0.0.0.0:8080");
  EXPECT_EQ(kube::ParseBindAddress("127.0.0.1:8081").value(), "127.0.0.1:8081");
  EXPECT_EQ(kube::ParseBindAddress("[::1]:9090").value(), "[::1]:9090");
  EXPECT_FALSE(kube::ParseBindAddress("8080").ok());
  EXPECT_FALSE(kube::ParseBindAddress(":http").ok());
  EXPECT_FALSE(kube::ParseBindAddress(":70000").ok());
  kube::ManagerServerOptions options;
  options.probes = true;
  EXPECT_EQ(kube::HandleManagerRequest(options, "POST", "/healthz", "").status, 405);
  EXPECT_EQ(kube::HandleManagerRequest(options, "GET", "/healthz", "verbose").body,
            "[+]ping ok\nhealthz check passed\n");
  EXPECT_EQ(kube::HandleManagerRequest(options, "GET", "/readyz/nope", "").status, 404);
}

}  // namespace
}  // namespace cronledger::app::testing
