// A real `cronledger run --kafka-watch-topic` process, SIGKILLed and restarted (docs/kafka.md
// "Consuming the watch topic"): the fixture API server and the watch relay run in this process on
// the real clock, the watch topic on the mock cluster. After the kill, the ledger's inputs are
// exactly the topic's messages below the offsets the ledger stores (a batch and its offsets are
// one unit of work); after the restart (same data dir, same group) nothing is ingested twice and
// no Job is created twice, while every fire time gets its Job.
//
// Fire times come from the real clock (schedules are per minute), as in tests/run's process
// test: CronJobs are created "ten minutes ago", so each is owed the Job of the minute it is first
// seen in, and one per minute boundary after that.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "app/support_kafka_relay.h"
#include "app/system_clock.h"
#include "ingest/kafka_source.h"
#include "kube/poco_client.h"
#include "kube/testing/fake_api_server.h"
#include "model/json.h"
#include "store/test_util.h"
#include "tests/kafka/kafka_testing.h"
#include "tests/testing/cli.h"
#include "tests/testing/minute_jobs.h"

#ifndef CRONLEDGER_BIN
#error "CRONLEDGER_BIN must name the cronledger executable"
#endif

namespace cronledger {
namespace {

using kafka_testing::MockCluster;
using model::Json;
using namespace std::chrono_literals;

constexpr int kPartitions = 4;

int64_t RealUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

Json CronJob(const std::string& name) {
  return kafka_testing::CronJobManifest("default", name, "* * * * *", "Allow");
}

// "<TYPE> <Kind> <ns>/<name> @<rv>" of an object event (bookmarks: none).
std::optional<std::string> EventId(const model::WatchEvent& e) {
  if (e.name.empty()) return std::nullopt;
  return std::string(model::WatchEventTypeName(e.type)) + " " +
         std::string(model::ObjectKindName(e.kind)) + " " + e.namespace_ + "/" + e.name + " @" +
         e.resource_version;
}
std::optional<std::string> EventId(const std::string& value) {
  auto doc = model::ParseJson(value);
  if (!doc.ok() || !doc->is_object() || !(*doc)["object"].is_object()) return std::nullopt;
  const Json& meta = (*doc)["object"]["metadata"];
  if (!meta.is_object() || !meta.contains("name")) return std::nullopt;
  return (*doc)["type"].get<std::string>() + " " + (*doc)["object"]["kind"].get<std::string>() +
         " " + meta.value("namespace", "") + "/" + meta["name"].get<std::string>() + " @" +
         meta["resourceVersion"].get<std::string>();
}

class KafkaRunProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kube::testing::FakeApiServerOptions options;
    options.now = [this] {
      return app::RealClock().Now().Add(-std::chrono::seconds(back_.load()));
    };
    server_ = kube::testing::FakeApiServer::Start(options).value();
    cluster_.CreateTopic(topic_, kPartitions);
    std::ofstream(dir_.Sub("kubeconfig"))
        << "apiVersion: v1\nkind: Config\nclusters:\n- name: fixture\n  cluster:\n    server: "
        << server_->url()
        << "\ncontexts:\n- name: fixture\n  context:\n    cluster: fixture\n    user: test\n"
           "    namespace: default\ncurrent-context: fixture\nusers:\n- name: test\n  user:\n"
           "    token: test-token\n";
    // A short session timeout: the killed member leaves the group within seconds.
    std::ofstream(dir_.Sub("kafka.properties"))
        << "session.timeout.ms=3000\nheartbeat.interval.ms=100\n";
    kube::PocoKubeClientOptions co;
    co.config.server = server_->url();
    co.clock = &app::RealClock();
    co.sleeper = &sleeper_;
    co.user_agent = "relay/1";
    relay_client_ = kube::PocoKubeClient::Open(co).value();
    app::RelayConfig rc;
    rc.resource = kube::BatchCronJobs();
    rc.producer.brokers = cluster_.bootstraps();
    rc.producer.log = kafka_testing::Quiet;
    rc.topic = topic_;
    relay_ =
        std::make_unique<app::WatchRelay>(rc, *relay_client_, sleeper_, app::RealClock(), nullptr);
    relay_thread_ = std::thread([this] { relay_result_ = relay_->Run(relay_cancel_); });
  }

  void TearDown() override {
    run_.reset();
    relay_cancel_.Cancel();
    if (relay_thread_.joinable()) relay_thread_.join();
    EXPECT_TRUE(relay_result_.ok()) << relay_result_.ToString();
  }

  std::unique_ptr<cli_test::ChildProcess> StartRun() {
    return std::make_unique<cli_test::ChildProcess>(
        std::vector<std::string>{CRONLEDGER_BIN, "run", "--kubeconfig=" + dir_.Sub("kubeconfig"),
                                 "--resource=cronjobs.v1.batch", "--data-dir=" + dir_.Sub("data"),
                                 "--sync=none", "--kafka-brokers=" + cluster_.bootstraps(),
                                 "--kafka-config=" + dir_.Sub("kafka.properties"),
                                 "--kafka-watch-topic=" + topic_,
                                 "--kafka-group-id=cronledger-process"},
        "", /*quiet=*/true);
  }

  void CreateCronJobs(const std::string& prefix, int n) {
    back_.store(600);
    for (int i = 0; i < n; ++i) {
      const std::string name = prefix + std::to_string(i);
      ASSERT_TRUE(server_->Create(kube::BatchCronJobs(), CronJob(name)).ok());
      created_[name] = RealUnix() / 60;
    }
    back_.store(0);
  }

  bool AllFireTimesHaveJobs(std::string* missing) {
    return ::cronledger::testing::AllMinuteJobsExist(*server_, "default", created_, RealUnix() / 60,
                                                     missing);
  }

  bool EventuallyAllJobs(std::string* missing) {
    return kafka_testing::PollUntil(
        [&] {
          std::this_thread::sleep_for(20ms);
          return AllFireTimesHaveJobs(missing);
        },
        60s);
  }

  store::testing::TempDir dir_;
  std::atomic<int64_t> back_{0};
  std::unique_ptr<kube::testing::FakeApiServer> server_;
  MockCluster cluster_;
  const std::string topic_ = "cronledger.watch";
  kube::RealSleeper sleeper_;
  std::unique_ptr<kube::PocoKubeClient> relay_client_;
  std::unique_ptr<app::WatchRelay> relay_;
  kube::Cancellation relay_cancel_;
  std::thread relay_thread_;
  Status relay_result_;
  std::map<std::string, int64_t> created_;  // CronJob -> the minute it was created in
  std::unique_ptr<cli_test::ChildProcess> run_;
};

TEST_F(KafkaRunProcessTest, KilledAndRestartedRunIngestsEachEventOnceAndCreatesEachJobOnce) {
  CreateCronJobs("a", 4);
  run_ = StartRun();
  std::string missing;
  ASSERT_TRUE(EventuallyAllJobs(&missing)) << "missing " << missing;

  // SIGKILL: no revocation, no graceful flush.
  EXPECT_EQ(run_->Stop(SIGKILL), 128 + SIGKILL);
  {
    // The ledger's inputs are exactly the topic's object events below the stored offsets.
    store::LedgerOptions lo;
    lo.path = dir_.Sub("data");
    auto ledger = store::Ledger::Open(lo).value();
    std::map<int32_t, int64_t> stored;
    for (int32_t p = 0; p < kPartitions; ++p) {
      auto pos = ledger->GetSourcePosition(ingest::KafkaPartitionSource(topic_, p));
      stored[p] = pos.ok() ? ingest::DecodeKafkaPosition(*pos).value() : 0;
    }
    std::multiset<std::string> below;
    for (const auto& m : kafka_testing::ReadTopic(cluster_.bootstraps(), topic_, kPartitions)) {
      auto id = EventId(m.value);
      if (id && m.offset < stored[m.partition]) below.insert(*id);
    }
    std::multiset<std::string> held;
    ASSERT_TRUE(ledger
                    ->ScanInputs(1, false,
                                 [&](const store::LogRecord& r) {
                                   const auto* e = std::get_if<model::WatchEvent>(&r.input);
                                   if (e == nullptr) return true;
                                   if (auto id = EventId(*e)) held.insert(*id);
                                   return true;
                                 })
                    .ok());
    EXPECT_FALSE(held.empty());
    EXPECT_EQ(held, below);
  }

  // While it is down, more CronJobs (owed Jobs too); then the restart resumes from the ledger.
  CreateCronJobs("b", 2);
  run_ = StartRun();
  ASSERT_TRUE(EventuallyAllJobs(&missing)) << "missing " << missing;
  EXPECT_EQ(run_->Stop(SIGTERM), 0);

  store::LedgerOptions lo;
  lo.path = dir_.Sub("data");
  auto ledger = store::Ledger::Open(lo).value();
  std::map<std::string, int> inputs;
  ASSERT_TRUE(ledger
                  ->ScanInputs(1, false,
                               [&](const store::LogRecord& r) {
                                 const auto* e = std::get_if<model::WatchEvent>(&r.input);
                                 if (e == nullptr) return true;
                                 if (auto id = EventId(*e)) ++inputs[*id];
                                 return true;
                               })
                  .ok());
  for (const auto& [id, n] : inputs) EXPECT_EQ(n, 1) << "ingested twice: " << id;
  // No Job created twice; every Job belongs to a fire time its CronJob was owed.
  const int64_t end_minute = RealUnix() / 60;
  for (const auto& [job, tally] : server_->creates(kube::BatchJobs())) {
    EXPECT_EQ(tally.created, 1) << job;
    const std::string name = job.substr(job.find('/') + 1);
    const std::string cj = name.substr(0, name.rfind('-'));
    const int64_t minute = std::stoll(name.substr(name.rfind('-') + 1));
    ASSERT_TRUE(created_.count(cj)) << job;
    EXPECT_GE(minute, created_[cj]) << job;
    EXPECT_LE(minute, end_minute) << job;
  }
}

}  // namespace
}  // namespace cronledger
