// A real `cronledger run --kafka-brokers` watching the fixture API server (docs/kafka.md "Topics"):
// it produces its ledger's inputs to P.ledger and its decisions to P.decisions with its source
// id, and checkpoints of the audit trail to P.checkpoints. Stopped with SIGTERM it drains the
// outbox, so the next start repeats nothing; SIGKILLed, the next start resumes from the stored
// positions without a gap (repeats are removed by the consumer rule).
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <set>
#include <thread>

#include "app/system_clock.h"
#include "emit/ledger_record.h"
#include "kube/testing/fake_api_server.h"
#include "model/json.h"
#include "replay/trail.h"
#include "store/test_util.h"
#include "tests/kafka/kafka_testing.h"
#include "tests/testing/cli.h"
#include "tests/testing/minute_jobs.h"

#ifndef CRONLEDGER_BIN
#error "CRONLEDGER_BIN must name the cronledger executable"
#endif

namespace cronledger {
namespace {

using kafka_testing::ApplyDedupe;
using kafka_testing::DecisionSeqsByKey;
using kafka_testing::LedgerValues;
using kafka_testing::Message;
using kafka_testing::MockCluster;
using kafka_testing::ReadTopic;
using namespace std::chrono_literals;

constexpr int kPartitions = 4;
const std::string kSource = "replica-1";

int64_t RealUnix() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string Header(const Message& m, const std::string& name) {
  auto it = m.headers.find(name);
  return it == m.headers.end() ? std::string("-") : it->second;
}

class RunOutboxProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kube::testing::FakeApiServerOptions options;
    options.now = [this] {
      return app::RealClock().Now().Add(-std::chrono::seconds(back_.load()));
    };
    server_ = kube::testing::FakeApiServer::Start(options).value();
    cluster_.CreateTopic("cronledger.decisions", kPartitions);
    cluster_.CreateTopic("cronledger.ledger", kPartitions);
    cluster_.CreateTopic("cronledger.checkpoints", 1);
    std::ofstream(dir_.Sub("kubeconfig"))
        << "apiVersion: v1\nkind: Config\nclusters:\n- name: fixture\n  cluster:\n    server: "
        << server_->url()
        << "\ncontexts:\n- name: fixture\n  context:\n    cluster: fixture\n    user: test\n"
           "    namespace: default\ncurrent-context: fixture\nusers:\n- name: test\n  user:\n"
           "    token: test-token\n";
  }

  std::unique_ptr<cli_test::ChildProcess> StartRun() {
    return std::make_unique<cli_test::ChildProcess>(
        std::vector<std::string>{CRONLEDGER_BIN, "run", "--kubeconfig=" + dir_.Sub("kubeconfig"),
                                 "--resource=cronjobs.v1.batch", "--data-dir=" + dir_.Sub("data"),
                                 "--sync=none", "--kafka-brokers=" + cluster_.bootstraps(),
                                 "--kafka-source-id=" + kSource, "--kafka-checkpoint-interval=1s"},
        "", /*quiet=*/true);
  }

  void CreateCronJobs(const std::string& prefix, int n) {
    back_.store(600);
    for (int i = 0; i < n; ++i) {
      const std::string name = prefix + std::to_string(i);
      ASSERT_TRUE(server_
                      ->Create(kube::BatchCronJobs(), kafka_testing::CronJobManifest(
                                                          "default", name, "* * * * *", "Allow"))
                      .ok());
      created_[name] = RealUnix() / 60;
    }
    back_.store(0);
  }

  // Every fire time has its Job, and P.checkpoints holds more than `checkpoints` messages.
  bool EventuallyJobsAndCheckpoints(size_t checkpoints, std::string* missing) {
    return kafka_testing::PollUntil(
        [&] {
          std::this_thread::sleep_for(50ms);
          return ::cronledger::testing::AllMinuteJobsExist(*server_, "default", created_,
                                                           RealUnix() / 60, missing) &&
                 Topic("cronledger.checkpoints", 1).size() > checkpoints;
        },
        60s);
  }

  std::vector<Message> Topic(const std::string& name, int partitions = kPartitions) {
    return ReadTopic(cluster_.bootstraps(), name, partitions);
  }

  std::unique_ptr<store::Ledger> OpenLedger() {
    store::LedgerOptions lo;
    lo.path = dir_.Sub("data");
    lo.create_if_missing = false;
    return store::Ledger::Open(lo).value();
  }

  store::testing::TempDir dir_;
  std::atomic<int64_t> back_{0};
  std::unique_ptr<kube::testing::FakeApiServer> server_;
  MockCluster cluster_;
  std::map<std::string, int64_t> created_;
};

TEST_F(RunOutboxProcessTest, RunProducesLedgerDecisionsAndCheckpointsAndResumesExactly) {
  CreateCronJobs("a", 3);
  auto run = StartRun();
  std::string missing;
  ASSERT_TRUE(EventuallyJobsAndCheckpoints(0, &missing)) << "missing " << missing;
  EXPECT_EQ(run->Stop(SIGTERM), 0);
  {
    // A clean stop drained both streams: every input and every decision is on its topic exactly
    // once, with the source, and the last checkpoint covers the whole store.
    auto ledger = OpenLedger();
    const auto inputs = LedgerValues(*ledger);
    ASSERT_FALSE(inputs.empty());
    std::map<uint64_t, int> seen;
    for (const Message& m : Topic("cronledger.ledger")) {
      const uint64_t seq = std::stoull(Header(m, "cronledger-seq"));
      ++seen[seq];
      EXPECT_EQ(Header(m, "cronledger-source"), kSource);
      EXPECT_EQ(Header(m, "cronledger-schema"), "cronledger.ledger/v1");
      ASSERT_TRUE(inputs.count(seq)) << seq;
      EXPECT_EQ(m.value, inputs.at(seq));
    }
    EXPECT_EQ(seen.size(), inputs.size());
    for (const auto& [seq, n] : seen) EXPECT_EQ(n, 1) << "input " << seq << " on the topic";
    std::map<std::string, std::vector<uint64_t>> decisions;
    bool creates = false;
    for (const Message& m : Topic("cronledger.decisions")) {
      EXPECT_EQ(Header(m, "cronledger-source"), kSource);
      decisions[m.key].push_back(std::stoull(Header(m, "cronledger-seq")));
      creates = creates || m.value.find("\"action\":\"createJob\"") != std::string::npos;
    }
    EXPECT_TRUE(creates);
    EXPECT_EQ(decisions, DecisionSeqsByKey(*ledger));
    const auto checkpoints = Topic("cronledger.checkpoints", 1);
    ASSERT_GE(checkpoints.size(), 2u);  // periodic ones and the one at shutdown
    auto last = replay::trail::ParseCheckpoint(checkpoints.back().value);
    ASSERT_TRUE(last.ok()) << last.status().ToString();
    EXPECT_EQ(checkpoints.back().key, kSource);
    const auto meta = ledger->Meta().value();
    EXPECT_EQ(last->chains.at(0).last_seq, meta.last_input_seq);
    EXPECT_EQ(last->chains.at(1).last_seq, meta.last_decision_seq);
    auto verdict = replay::trail::VerifyStore(*ledger, *last);
    ASSERT_TRUE(verdict.ok()) << verdict.status().ToString();
    EXPECT_TRUE(verdict->intact()) << replay::trail::VerdictJson(*verdict).dump();
  }

  // More CronJobs while it is down; then a run that is SIGKILLed, and one more start.
  CreateCronJobs("b", 2);
  run = StartRun();
  ASSERT_TRUE(EventuallyJobsAndCheckpoints(Topic("cronledger.checkpoints", 1).size(), &missing))
      << "missing " << missing;
  EXPECT_EQ(run->Stop(SIGKILL), 128 + SIGKILL);
  CreateCronJobs("c", 1);
  run = StartRun();
  ASSERT_TRUE(EventuallyJobsAndCheckpoints(Topic("cronledger.checkpoints", 1).size(), &missing))
      << "missing " << missing;
  EXPECT_EQ(run->Stop(SIGTERM), 0);

  // The consumer rule (per key and source, drop a seq not above the last applied) gives exactly
  // the store's records: none lost, none twice; every value is the record's encoding.
  auto ledger = OpenLedger();
  const auto inputs = LedgerValues(*ledger);
  const std::vector<Message> stream = Topic("cronledger.ledger");
  std::map<uint64_t, std::string> by_seq;
  for (const Message& m : stream) by_seq[std::stoull(Header(m, "cronledger-seq"))] = m.value;
  std::set<uint64_t> applied;
  for (const auto& [key, seqs] : ApplyDedupe(stream)) {
    EXPECT_EQ(key.substr(0, key.find('|')), kSource);
    for (uint64_t s : seqs) EXPECT_TRUE(applied.insert(s).second) << "input " << s << " twice";
  }
  std::set<uint64_t> all;
  for (const auto& [seq, value] : inputs) {
    all.insert(seq);
    EXPECT_EQ(by_seq[seq], value) << "input " << seq;
  }
  EXPECT_EQ(applied, all);
  std::map<std::string, std::vector<uint64_t>> decisions;
  for (const auto& [key, seqs] : ApplyDedupe(Topic("cronledger.decisions"))) {
    decisions[key.substr(key.find('|') + 1)] = seqs;
  }
  EXPECT_EQ(decisions, DecisionSeqsByKey(*ledger));
  ledger.reset();

  // The checkpoint read back from the topic is what `verify-trail --checkpoint` takes.
  const auto checkpoints = Topic("cronledger.checkpoints", 1);
  ASSERT_FALSE(checkpoints.empty());
  std::ofstream(dir_.Sub("checkpoint.json")) << checkpoints.back().value;
  const auto verified = cli_test::Cli("verify-trail --data-dir " + dir_.Sub("data") +
                                          " --checkpoint " + dir_.Sub("checkpoint.json"),
                                      /*merge_stderr=*/true);
  EXPECT_EQ(verified.exit_code, 0) << verified.out;
  EXPECT_EQ(verified.out.find("not covered"), std::string::npos) << verified.out;
}

}  // namespace
}  // namespace cronledger
