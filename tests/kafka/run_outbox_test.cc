// The outbox `cronledger run --kafka-brokers` runs (app/support_run_outbox.h, docs/kafka.md):
// P.decisions and P.ledger with the source header, each from its own stored position, and the
// audit trail's checkpoints on P.checkpoints, against the mock cluster and a real RocksDB ledger.
#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "app/support_run_outbox.h"
#include "app/system_clock.h"
#include "emit/ledger_record.h"
#include "replay/trail.h"
#include "store/test_util.h"
#include "tests/kafka/kafka_testing.h"
#include "tests/testing/cli.h"

#ifndef CRONLEDGER_BIN
#error "CRONLEDGER_BIN must name the cronledger executable"
#endif

namespace cronledger {
namespace {

using kafka_testing::ApplyDedupe;
using kafka_testing::CommitDecisions;
using kafka_testing::DecisionSeqsByKey;
using kafka_testing::LedgerValues;
using kafka_testing::Message;
using kafka_testing::MockCluster;
using kafka_testing::ReadTopic;
using namespace std::chrono_literals;

constexpr int kPartitions = 4;
const std::vector<std::string> kCronJobs = {"prod/backup", "prod/report", "dev/cleanup"};

std::string Header(const Message& m, const std::string& name) {
  auto it = m.headers.find(name);
  return it == m.headers.end() ? std::string("-") : it->second;
}

uint64_t SeqOf(const Message& m) { return std::stoull(Header(m, "cronledger-seq")); }

class RunOutboxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* t : {"cronledger.decisions", "cronledger.ledger"}) {
      cluster_.CreateTopic(t, kPartitions);
    }
    cluster_.CreateTopic("cronledger.checkpoints", 1);
    OpenLedger();
  }

  void OpenLedger() {
    store::LedgerOptions o;
    o.path = dir_.Sub("ledger");
    o.sync = store::SyncMode::kNone;
    ledger_ = store::Ledger::Open(o).value();
  }

  app::RunOutboxOptions Options() {
    app::RunOutboxOptions o;
    o.kafka.brokers = cluster_.bootstraps();
    o.source_id = "replica-1";
    o.checkpoint_interval = 1h;  // only Finish() publishes, unless a test says otherwise
    o.kafka_log = kafka_testing::Quiet;
    o.warn = [](const std::string& line) { ADD_FAILURE() << "warning: " << line; };
    return o;
  }

  std::vector<Message> Topic(const std::string& name, int partitions = kPartitions) {
    return ReadTopic(cluster_.bootstraps(), name, partitions);
  }

  MockCluster cluster_;
  store::testing::TempDir dir_;
  std::unique_ptr<store::Ledger> ledger_;
};

TEST_F(RunOutboxTest, ProducesBothStreamsWithTheSourceAndAStopAndRestartRepeatsNothing) {
  CommitDecisions(*ledger_, kCronJobs, 12, 2);
  {
    app::RunOutbox outbox(*ledger_, app::RealClock(), Options());
    for (int i = 0; i < 3; ++i) outbox.Step(50ms);
    ASSERT_TRUE(outbox.Finish(30s).ok());
    EXPECT_EQ(outbox.checkpoints_acknowledged(), 1u);
  }
  // Committed while no outbox runs, then a new session from the stored positions.
  CommitDecisions(*ledger_, kCronJobs, 9, 3, /*first=*/100);
  {
    app::RunOutbox outbox(*ledger_, app::RealClock(), Options());
    ASSERT_TRUE(outbox.Finish(30s).ok());
  }

  // P.ledger: every input exactly once (no repeat after a clean stop), its value the record's
  // encoding, with the ledger schema and the source.
  const std::map<uint64_t, std::string> inputs = LedgerValues(*ledger_);
  std::map<uint64_t, int> seen;
  std::map<int32_t, uint64_t> last_per_partition;
  for (const Message& m : Topic("cronledger.ledger")) {
    const uint64_t seq = SeqOf(m);
    ++seen[seq];
    EXPECT_EQ(Header(m, "cronledger-schema"), "cronledger.ledger/v1");
    EXPECT_EQ(Header(m, "cronledger-source"), "replica-1");
    ASSERT_TRUE(inputs.count(seq)) << seq;
    EXPECT_EQ(m.value, inputs.at(seq)) << seq;
    EXPECT_GT(seq, last_per_partition[m.partition]) << "partition " << m.partition;
    last_per_partition[m.partition] = seq;
  }
  ASSERT_EQ(seen.size(), inputs.size());
  for (const auto& [seq, n] : seen) EXPECT_EQ(n, 1) << "input " << seq;

  // P.decisions: every decision exactly once, per key in log order.
  const std::vector<Message> decisions = Topic("cronledger.decisions");
  std::map<std::string, std::vector<uint64_t>> by_key;
  for (const Message& m : decisions) {
    EXPECT_EQ(Header(m, "cronledger-schema"), "cronledger.decision/v1");
    EXPECT_EQ(Header(m, "cronledger-source"), "replica-1");
    by_key[m.key].push_back(SeqOf(m));
  }
  EXPECT_EQ(by_key, DecisionSeqsByKey(*ledger_));

  // P.checkpoints: one per Finish(), keyed by the source; the last covers every record and the
  // store verifies against it.
  const std::vector<Message> checkpoints = Topic("cronledger.checkpoints", 1);
  ASSERT_EQ(checkpoints.size(), 2u);
  for (const Message& m : checkpoints) {
    EXPECT_EQ(m.key, "replica-1");
    EXPECT_EQ(Header(m, "cronledger-schema"), "cronledger.checkpoint/v1");
    EXPECT_EQ(Header(m, "cronledger-source"), "replica-1");
  }
  auto checkpoint = replay::trail::ParseCheckpoint(checkpoints.back().value);
  ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
  const auto meta = ledger_->Meta().value();
  ASSERT_EQ(checkpoint->chains.size(), 2u);
  EXPECT_EQ(checkpoint->chains[0].log, "inputs");
  EXPECT_EQ(checkpoint->chains[0].last_seq, meta.last_input_seq);
  EXPECT_EQ(checkpoint->chains[1].log, "decisions");
  EXPECT_EQ(checkpoint->chains[1].last_seq, meta.last_decision_seq);
  auto verdict = replay::trail::VerifyStore(*ledger_, *checkpoint);
  ASSERT_TRUE(verdict.ok()) << verdict.status().ToString();
  EXPECT_TRUE(verdict->intact()) << replay::trail::VerdictJson(*verdict).dump();
  // The value is the document `cronledger checkpoint -o json` prints (compact).
  EXPECT_EQ(checkpoints.back().value, replay::trail::CheckpointJson(*checkpoint).dump());
}

TEST_F(RunOutboxTest, PublishesCheckpointsPeriodicallyAndSelectedStreamsOnly) {
  app::RunOutboxOptions o = Options();
  o.streams = {emit::EmitStream::kLedger};
  o.checkpoint_interval = 200ms;
  CommitDecisions(*ledger_, kCronJobs, 5, 1);
  app::RunOutbox outbox(*ledger_, app::RealClock(), o);
  const uint64_t last_input = ledger_->Meta().value().last_input_seq;
  const std::string caught_up =
      "cronledger_outbox_position{stream=\"ledger\"} " + std::to_string(last_input) + "\n";
  // The checkpoints come from the outbox's own thread, while this one steps the stream.
  ASSERT_TRUE(kafka_testing::PollUntil(
      [&] {
        outbox.Step(50ms);
        return outbox.checkpoints_acknowledged() >= 3 &&
               outbox.RenderMetrics().find(caught_up) != std::string::npos;
      },
      30s))
      << outbox.RenderMetrics();
  const std::string metrics = outbox.RenderMetrics();
  EXPECT_NE(metrics.find("cronledger_outbox_lag_records{stream=\"ledger\"} 0\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("cronledger_outbox_acknowledged_total{stream=\"ledger\"} " +
                         std::to_string(last_input) + "\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("cronledger_outbox_session_failures_total{stream=\"ledger\"} 0\n"),
            std::string::npos);
  EXPECT_EQ(metrics.find("stream=\"decisions\""), std::string::npos);  // not selected
  EXPECT_NE(metrics.find("cronledger_checkpoints_failed_total 0\n"), std::string::npos);
  EXPECT_EQ(metrics.find("cronledger_checkpoint_last_acknowledged_timestamp_seconds 0\n"),
            std::string::npos)
      << metrics;
  ASSERT_TRUE(outbox.Finish(30s).ok());
  EXPECT_GE(Topic("cronledger.checkpoints", 1).size(), 4u);
  EXPECT_EQ(Topic("cronledger.ledger").size(), ledger_->Meta().value().last_input_seq);
  EXPECT_TRUE(Topic("cronledger.decisions").empty());
  EXPECT_TRUE(ledger_->GetSourcePosition("kafka-emit:cronledger.decisions").status().IsNotFound());
}

TEST_F(RunOutboxTest, ASessionEndedWithoutFinishIsResumedWithoutAGap) {
  CommitDecisions(*ledger_, kCronJobs, 40, 2);
  {
    // Ended mid-stream, as by a crash: acknowledged records may not be in the position yet.
    app::RunOutbox outbox(*ledger_, app::RealClock(), Options());
    outbox.Step(5ms);
  }
  CommitDecisions(*ledger_, kCronJobs, 10, 1, /*first=*/200);
  {
    app::RunOutbox outbox(*ledger_, app::RealClock(), Options());
    ASSERT_TRUE(outbox.Finish(30s).ok());
  }
  // The consumer rule gives exactly the ledger's records: none missing, none twice.
  std::set<uint64_t> applied;
  for (const auto& [key, seqs] : ApplyDedupe(Topic("cronledger.ledger"))) {
    EXPECT_EQ(key.substr(0, key.find('|')), "replica-1");
    for (uint64_t s : seqs) EXPECT_TRUE(applied.insert(s).second) << "input " << s << " twice";
  }
  std::set<uint64_t> all;
  for (const auto& [seq, value] : LedgerValues(*ledger_)) all.insert(seq);
  EXPECT_EQ(applied, all);
  std::map<std::string, std::vector<uint64_t>> decisions;
  for (const auto& [key, seqs] : ApplyDedupe(Topic("cronledger.decisions"))) {
    decisions[key.substr(key.find('|') + 1)] = seqs;
  }
  EXPECT_EQ(decisions, DecisionSeqsByKey(*ledger_));
}

// `cronledger emit --stream ledger --kafka-source-id ID` and `run`'s outbox are one producer
// path: over the same store they put the same records on the topic (key, value, headers,
// partition), and a checkpoint read back from P.checkpoints is what `verify-trail --checkpoint`
// takes.
TEST_F(RunOutboxTest, EmitCommandProducesTheSameStreamAndVerifyTrailTakesTheTopicsCheckpoint) {
  CommitDecisions(*ledger_, kCronJobs, 15, 2);
  {
    app::RunOutbox outbox(*ledger_, app::RealClock(), Options());
    ASSERT_TRUE(outbox.Finish(30s).ok());
  }
  ledger_.reset();  // the commands below open the store themselves
  for (const char* t : {"copy.decisions", "copy.ledger"}) cluster_.CreateTopic(t, kPartitions);
  const auto emitted = cli_test::Cli("emit --data-dir " + dir_.Sub("ledger") + " --kafka-brokers " +
                                         cluster_.bootstraps() +
                                         " --kafka-topic-prefix copy --stream all "
                                         "--kafka-source-id replica-1 --timeout 60s",
                                     /*merge_stderr=*/true);
  ASSERT_EQ(emitted.exit_code, 0) << emitted.out;
  auto strip = [](std::vector<Message> messages) {
    for (Message& m : messages) m.offset = 0;
    return messages;
  };
  for (const char* stream : {"ledger", "decisions"}) {
    const auto ours = strip(Topic(std::string("cronledger.") + stream));
    const auto theirs = strip(Topic(std::string("copy.") + stream));
    ASSERT_FALSE(ours.empty());
    ASSERT_EQ(ours.size(), theirs.size()) << stream;
    for (size_t i = 0; i < ours.size(); ++i) {
      EXPECT_EQ(ours[i].partition, theirs[i].partition) << stream << " " << i;
      EXPECT_EQ(ours[i].key, theirs[i].key) << stream << " " << i;
      EXPECT_EQ(ours[i].value, theirs[i].value) << stream << " " << i;
      EXPECT_EQ(ours[i].headers, theirs[i].headers) << stream << " " << i;
    }
  }

  const std::vector<Message> checkpoints = Topic("cronledger.checkpoints", 1);
  ASSERT_EQ(checkpoints.size(), 1u);
  std::ofstream(dir_.Sub("checkpoint.json")) << checkpoints[0].value;
  const auto verified = cli_test::Cli("verify-trail --data-dir " + dir_.Sub("ledger") +
                                          " --checkpoint " + dir_.Sub("checkpoint.json"),
                                      /*merge_stderr=*/true);
  EXPECT_EQ(verified.exit_code, 0) << verified.out;
  EXPECT_NE(verified.out.find("intact"), std::string::npos) << verified.out;
}

}  // namespace
}  // namespace cronledger
