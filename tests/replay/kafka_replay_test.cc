// `replay --kafka-brokers`: the incident day (sim_world.h) recorded by the real controller loop
// into a store, emitted through the real OutboxEmitter to librdkafka's mock cluster (3 brokers,
// several partitions), then replayed from the streams (app/support_replay_kafka.h): the same
// inputs, the same digests as the store replay; repeats change nothing; holes are gaps.

#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "app/support_replay_kafka.h"
#include "emit/outbox_emitter.h"
#include "model/json.h"
#include "replay/engine.h"
#include "tests/kafka/kafka_testing.h"
#include "tests/replay/sim_world.h"
#include "tests/testing/cli.h"

namespace cronledger::replay {
namespace {

using app::replay_cli::KafkaHistory;
using app::replay_cli::KafkaHistoryOptions;
using app::replay_cli::ReadKafkaHistory;
using kafka_testing::MockCluster;
using namespace std::chrono_literals;

constexpr int kLedgerPartitions = 5;
constexpr int kDecisionPartitions = 3;

class KafkaReplay : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    world_ = new testing::SimWorld(testing::At(9, 59, 30), std::chrono::minutes(12));
    testing::RecordIncidentDay(*world_);
    LedgerSource store(world_->ledger());
    store_ = new ReplayResult(RunReplay(store));
    auto meta = world_->ledger().Meta();
    CL_CHECK(meta.ok());
    inputs_ = meta->last_input_seq;
    decisions_ = meta->last_decision_seq;
  }
  static void TearDownTestSuite() {
    delete store_;
    delete world_;
    store_ = nullptr;
    world_ = nullptr;
  }

  static ReplayResult RunReplay(RecordSource& source) {
    auto r = Replay(source, {});
    if (!r.ok()) std::fprintf(stderr, "replay: %s\n", r.status().ToString().c_str());
    CL_CHECK(r.ok());
    return std::move(*r);
  }

  void CreateTopics(const std::string& prefix) {
    cluster_.CreateTopic(prefix + ".ledger", kLedgerPartitions);
    cluster_.CreateTopic(prefix + ".decisions", kDecisionPartitions);
  }

  // Emits the world's log to `topic` through the real outbox until it caught up. Every call uses
  // its own emission position (the world's ledger is shared by the tests), starting at `from`:
  // every record after seq `from` is produced.
  void Emit(emit::EmitStream stream, const std::string& topic, uint64_t from = 0,
            const std::string& source_id = "") {
    emit::OutboxEmitterOptions o;
    o.producer.brokers = cluster_.bootstraps();
    o.producer.log = kafka_testing::Quiet;
    o.stream = stream;
    o.topic = topic;
    o.source_id = source_id;
    o.position_source = "kafka-emit-test:" + std::to_string(++emissions_);
    if (from > 0) {
      store::UnitOfWork unit;
      unit.positions.push_back({o.position_source, emit::EncodeEmitPosition(from)});
      ASSERT_TRUE(world_->ledger().Commit(std::move(unit)).ok());
    }
    auto e = emit::OutboxEmitter::Open(world_->ledger(), o);
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    const uint64_t head = (*e)->Head().value();
    const bool done = kafka_testing::PollUntil([&] {
      auto p = (*e)->Step(50ms);
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      return !p.ok() || p->position >= head;
    });
    ASSERT_TRUE(done) << "the emitter did not catch up to " << head;
  }
  void EmitBoth(const std::string& prefix, uint64_t from_input = 0, uint64_t from_decision = 0,
                const std::string& source_id = "") {
    Emit(emit::EmitStream::kLedger, prefix + ".ledger", from_input, source_id);
    Emit(emit::EmitStream::kDecisions, prefix + ".decisions", from_decision, source_id);
  }

  Result<KafkaHistory> Read(const std::string& prefix, const std::string& source_id = "") {
    KafkaHistoryOptions o;
    o.brokers = cluster_.bootstraps();
    o.topic_prefix = prefix;
    o.source_id = source_id;
    o.log = kafka_testing::Quiet;
    o.timeout = 30s;
    return ReadKafkaHistory(o);
  }

  // The history read from Kafka holds exactly the store's records, and replays to the store
  // replay's digests.
  void ExpectSameAsStore(KafkaHistory& h) {
    EXPECT_TRUE(h.report.complete());
    EXPECT_EQ(h.report.ledger.records, inputs_);
    EXPECT_EQ(h.report.ledger.last_seq, inputs_);
    EXPECT_EQ(h.report.decisions.records, decisions_);
    const auto& inputs = h.source->inputs();
    size_t i = 0;
    ASSERT_TRUE(world_->ledger()
                    .ScanInputs(1, true,
                                [&](const store::LogRecord& r) {
                                  EXPECT_LT(i, inputs.size());
                                  if (i >= inputs.size()) return false;
                                  EXPECT_EQ(inputs[i].seq, r.seq);
                                  EXPECT_EQ(inputs[i].recorded_at, r.recorded_at);
                                  EXPECT_TRUE(inputs[i].input == r.input) << "seq " << r.seq;
                                  ++i;
                                  return true;
                                })
                    .ok());
    EXPECT_EQ(i, inputs.size());

    const ReplayResult r = RunReplay(*h.source);
    EXPECT_EQ(r.divergences, 0u);
    EXPECT_EQ(r.passes_replayed, store_->passes_replayed);
    EXPECT_EQ(r.derived_digest.sha256, store_->derived_digest.sha256);
    EXPECT_EQ(r.recorded_digest.sha256, store_->recorded_digest.sha256);
    EXPECT_EQ(r.derived_digest.sha256, r.recorded_digest.sha256);
    EXPECT_EQ(r.derived_digest.decisions, store_->derived_digest.decisions);
  }

  static testing::SimWorld* world_;
  static ReplayResult* store_;
  static uint64_t inputs_;
  static uint64_t decisions_;
  static int emissions_;
  MockCluster cluster_{3};
};
testing::SimWorld* KafkaReplay::world_ = nullptr;
ReplayResult* KafkaReplay::store_ = nullptr;
uint64_t KafkaReplay::inputs_ = 0;
uint64_t KafkaReplay::decisions_ = 0;
int KafkaReplay::emissions_ = 0;

TEST_F(KafkaReplay, StreamReplaysToTheStoreDigest) {
  ASSERT_GT(inputs_, 100u);
  ASSERT_GT(decisions_, 20u);
  ASSERT_EQ(store_->divergences, 0u);
  CreateTopics("one");
  EmitBoth("one");
  auto h = Read("one");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->report.ledger.duplicates, 0u);
  EXPECT_EQ(h->report.ledger.messages, inputs_);
  ExpectSameAsStore(*h);
}

TEST_F(KafkaReplay, RepeatedRecordsChangeNothing) {
  CreateTopics("dup");
  EmitBoth("dup");
  EmitBoth("dup");                               // a second emitter from the start
  EmitBoth("dup", inputs_ / 2, decisions_ / 3);  // a restart from an earlier position
  auto h = Read("dup");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->report.ledger.messages, 2 * inputs_ + (inputs_ - inputs_ / 2));
  EXPECT_EQ(h->report.ledger.duplicates, inputs_ + (inputs_ - inputs_ / 2));
  EXPECT_EQ(h->report.decisions.duplicates, decisions_ + (decisions_ - decisions_ / 3));
  ExpectSameAsStore(*h);
}

// Copies `from` to `to` (same partitions, keys, values, headers) except the records whose
// cronledger-seq is in `drop`: a topic that lost records.
void CopyWithHoles(const std::string& bootstraps, const std::string& from, const std::string& to,
                   int partitions, const std::set<uint64_t>& drop) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  CL_CHECK(rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps.c_str(), err, sizeof(err)) ==
           RD_KAFKA_CONF_OK);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  CL_CHECK(rk != nullptr);
  for (const kafka_testing::Message& m : kafka_testing::ReadTopic(bootstraps, from, partitions)) {
    if (drop.count(std::stoull(m.headers.at("cronledger-seq"))) > 0) continue;
    rd_kafka_headers_t* headers = rd_kafka_headers_new(m.headers.size());
    for (const auto& [k, v] : m.headers) {
      rd_kafka_header_add(headers, k.data(), static_cast<ssize_t>(k.size()), v.data(),
                          static_cast<ssize_t>(v.size()));
    }
    const rd_kafka_resp_err_t e = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(to.c_str()), RD_KAFKA_V_PARTITION(m.partition),
        RD_KAFKA_V_KEY(m.key.data(), m.key.size()),
        RD_KAFKA_V_VALUE(const_cast<char*>(m.value.data()), m.value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_END);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) rd_kafka_headers_destroy(headers);
    CL_CHECK(e == RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  CL_CHECK(rd_kafka_flush(rk, 30000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_destroy(rk);
}

TEST_F(KafkaReplay, MissingRecordsAreGaps) {
  CreateTopics("src");
  EmitBoth("src");
  CreateTopics("hole");
  const uint64_t lost = inputs_ / 2;
  CopyWithHoles(cluster_.bootstraps(), "src.ledger", "hole.ledger", kLedgerPartitions,
                {lost, lost + 1, lost + 2, inputs_ - 5});
  CopyWithHoles(cluster_.bootstraps(), "src.decisions", "hole.decisions", kDecisionPartitions, {7});
  auto h = Read("hole");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_FALSE(h->report.complete());
  ASSERT_EQ(h->report.ledger.gaps.size(), 2u);
  EXPECT_EQ(h->report.ledger.gaps[0].first, lost);
  EXPECT_EQ(h->report.ledger.gaps[0].last, lost + 2);
  EXPECT_EQ(h->report.ledger.gaps[1].first, inputs_ - 5);
  EXPECT_EQ(h->report.ledger.gaps[1].last, inputs_ - 5);
  EXPECT_EQ(h->report.ledger.missing, 4u);
  EXPECT_EQ(h->report.ledger.records, inputs_ - 4);
  ASSERT_EQ(h->report.decisions.gaps.size(), 1u);
  EXPECT_EQ(h->report.decisions.gaps[0].first, 7u);
  std::string text;
  for (const std::string& line : h->report.Describe()) text += line + "\n";
  EXPECT_NE(text.find("hole.ledger: GAP: seqs " + std::to_string(lost) + ".." +
                      std::to_string(lost + 2) + " missing (3)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("hole.decisions: GAP: seq 7 missing (1)"), std::string::npos) << text;
}

TEST_F(KafkaReplay, RetentionCutIsAGap) {
  // The emitter started at seq 41 (the topic's retention removed 1..40).
  CreateTopics("cut");
  EmitBoth("cut", 40, 0);
  auto h = Read("cut");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_FALSE(h->report.complete());
  ASSERT_EQ(h->report.ledger.gaps.size(), 1u);
  EXPECT_EQ(h->report.ledger.gaps[0].first, 1u);
  EXPECT_EQ(h->report.ledger.gaps[0].last, 40u);
  EXPECT_TRUE(h->report.decisions.gaps.empty());
}

TEST_F(KafkaReplay, SeveralLedgersNeedASource) {
  CreateTopics("multi");
  EmitBoth("multi", 0, 0, "replica-a");
  EmitBoth("multi", 0, 0, "replica-b");
  auto ambiguous = Read("multi");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_NE(ambiguous.status().message().find("replica-a, replica-b"), std::string::npos)
      << ambiguous.status().ToString();
  auto h = Read("multi", "replica-b");
  ASSERT_TRUE(h.ok()) << h.status().ToString();
  EXPECT_EQ(h->report.ledger.other_sources, inputs_);
  EXPECT_EQ(h->report.decisions.other_sources, decisions_);
  ExpectSameAsStore(*h);
}

using cli_test::Cli;
using cli_test::CliResult;

TEST_F(KafkaReplay, CliVerifiesFromKafkaAndFailsOnAGap) {
  CreateTopics("cli");
  EmitBoth("cli");
  EmitBoth("cli", inputs_ - 10, decisions_ - 3);  // a few repeats
  const std::string kafka = " --kafka-brokers " + cluster_.bootstraps() + " --kafka-topic-prefix ";
  const CliResult ok = Cli("replay --verify -o json" + kafka + "cli");
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  auto j = model::ParseJson(ok.out);
  ASSERT_TRUE(j.ok()) << ok.out;
  EXPECT_EQ((*j)["match"], true);
  EXPECT_EQ((*j)["items"][0]["sha256"], store_->recorded_digest.sha256);
  EXPECT_EQ((*j)["items"][1]["sha256"], store_->derived_digest.sha256);

  CreateTopics("clicut");
  EmitBoth("clicut", 3, 0);
  const CliResult cut = Cli("replay --verify -o json" + kafka + "clicut");
  EXPECT_EQ(cut.exit_code, 1) << cut.out;
  auto c = model::ParseJson(cut.out);
  ASSERT_TRUE(c.ok()) << cut.out;
  EXPECT_EQ((*c)["complete"], false);
  ASSERT_EQ((*c)["gaps"].size(), 1u);
  EXPECT_EQ((*c)["gaps"][0]["topic"], "clicut.ledger");
  EXPECT_EQ((*c)["gaps"][0]["last"], 3);

  EXPECT_EQ(Cli("replay --verify" + kafka + "cli --data-dir /nonexistent").exit_code, 2);
}

}  // namespace
}  // namespace cronledger::replay
