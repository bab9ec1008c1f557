// The decision/ledger outbox against librdkafka's mock cluster: delivery, keys, payloads, resume
// after a restart, broker outages, request errors, leader changes and failed sessions.
#include <gtest/gtest.h>

#include "emit/ledger_record.h"
#include "emit/outbox_emitter.h"
#include "store/test_util.h"
#include "tests/kafka/kafka_testing.h"

namespace cronledger {
namespace {

using emit::EmitProgress;
using emit::OutboxEmitter;
using kafka_testing::ApplyDedupe;
using kafka_testing::CommitDecisions;
using kafka_testing::DecisionSeqsByKey;
using kafka_testing::MockCluster;
using kafka_testing::ReadTopic;
using namespace std::chrono_literals;

constexpr int kPartitions = 4;
// The Kafka protocol ApiKey of Produce requests (librdkafka keeps its name in a private header).
constexpr int16_t kProduceApiKey = 0;
const std::vector<std::string> kCronJobs = {"prod/backup", "prod/report", "dev/cleanup", "dev/sync",
                                            "ops/rotate"};

class EmitterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.CreateTopic(topic_, kPartitions);
    store::LedgerOptions o;
    o.path = dir_.Sub("ledger");
    o.sync = store::SyncMode::kNone;
    ledger_ = store::Ledger::Open(o).value();
  }

  emit::OutboxEmitterOptions Options(emit::EmitStream stream = emit::EmitStream::kDecisions) {
    emit::OutboxEmitterOptions o;
    o.producer.brokers = cluster_.bootstraps();
    o.producer.log = kafka_testing::Quiet;
    o.stream = stream;
    o.topic = topic_;
    return o;
  }

  std::unique_ptr<OutboxEmitter> Open(emit::EmitStream stream = emit::EmitStream::kDecisions) {
    auto e = OutboxEmitter::Open(*ledger_, Options(stream));
    CL_CHECK(e.ok());
    return std::move(e).value();
  }

  // Steps until every committed record is acknowledged; fails the test after 30 s.
  EmitProgress Drain(OutboxEmitter& e) {
    const uint64_t head = e.Head().value();
    EmitProgress last;
    const bool done = kafka_testing::PollUntil([&] {
      auto p = e.Step(50ms);
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      if (!p.ok()) return true;
      last = *p;
      return last.position >= head;
    });
    EXPECT_TRUE(done) << "emitter did not catch up to " << head;
    return last;
  }

  uint64_t StoredPosition() {
    auto s = ledger_->GetSourcePosition("kafka-emit:" + topic_);
    return s.ok() ? emit::DecodeEmitPosition(*s).value() : 0;
  }

  // Every record of the topic, checked against the decision log: the key is the CronJob, the
  // headers name the schema and seq, the value is the decision's canonical JSON.
  std::vector<kafka_testing::Message> ReadAndCheck(const std::vector<model::Decision>& log) {
    auto messages = ReadTopic(cluster_.bootstraps(), topic_, kPartitions);
    for (const auto& m : messages) {
      const uint64_t seq = std::stoull(m.headers.at("cronledger-seq"));
      EXPECT_EQ(m.headers.at("cronledger-schema"), "cronledger.decision/v1");
      EXPECT_TRUE(seq >= 1 && seq <= log.size()) << seq;
      if (seq < 1 || seq > log.size()) continue;
      const model::Decision& d = log[seq - 1];
      EXPECT_EQ(m.key, d.cron_job.namespace_ + "/" + d.cron_job.name);
      EXPECT_EQ(m.value, model::DumpJson(model::EncodeDecision(d)));
    }
    return messages;
  }

  store::testing::TempDir dir_;
  MockCluster cluster_;
  const std::string topic_ = "cronledger.decisions";
  std::unique_ptr<store::Ledger> ledger_;
};

TEST_F(EmitterTest, DeliversEveryDecisionOnceKeyedAndInOrder) {
  const auto log = CommitDecisions(*ledger_, kCronJobs, 60, 3);
  ASSERT_EQ(log.size(), 180u);
  auto emitter = Open();
  const EmitProgress p = Drain(*emitter);
  EXPECT_EQ(p.position, 180u);
  EXPECT_EQ(p.acknowledged, 180u);
  EXPECT_EQ(StoredPosition(), 180u);
  const auto messages = ReadAndCheck(log);
  // One session: exactly once, so the raw stream already is the log per key.
  EXPECT_EQ(messages.size(), 180u);
  std::map<std::string, std::vector<uint64_t>> raw;
  std::map<std::string, int32_t> partition_of;
  for (const auto& m : messages) {
    raw[m.key].push_back(std::stoull(m.headers.at("cronledger-seq")));
    auto [it, inserted] = partition_of.emplace(m.key, m.partition);
    EXPECT_EQ(it->second, m.partition) << "key " << m.key << " spans partitions";
  }
  EXPECT_EQ(raw, DecisionSeqsByKey(*ledger_));
  // Caught up: another step produces nothing.
  auto again = emitter->Step(10ms);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->produced, 180u);
}

TEST_F(EmitterTest, RestartResumesAtTheStoredPositionWithNothingLost) {
  auto log = CommitDecisions(*ledger_, kCronJobs, 40, 2);
  uint64_t unconfirmed = 0;
  {
    // Session 1 stops ("crashes") with records in flight: at most max_in_flight outstanding.
    auto o = Options();
    o.max_in_flight = 25;
    auto emitter = OutboxEmitter::Open(*ledger_, o).value();
    ASSERT_TRUE(kafka_testing::PollUntil([&] {
      auto p = emitter->Step(0ms);
      EXPECT_TRUE(p.ok());
      return !p.ok() || p->position >= 30;
    }));
    unconfirmed = emitter->progress().produced - emitter->progress().position;
    EXPECT_EQ(StoredPosition(), emitter->progress().position);
  }
  const uint64_t resumed_from = StoredPosition();
  EXPECT_GE(resumed_from, 30u);
  log = CommitDecisions(*ledger_, kCronJobs, 30, 2, 40);
  ASSERT_EQ(log.size(), 140u);
  auto emitter = Open();
  const EmitProgress p = Drain(*emitter);
  EXPECT_EQ(p.position, 140u);
  EXPECT_EQ(p.produced, 140u - resumed_from);  // the new session starts after the position
  const auto messages = ReadAndCheck(log);
  EXPECT_GE(messages.size(), 140u);
  EXPECT_LE(messages.size(), 140u + unconfirmed);
  EXPECT_EQ(ApplyDedupe(messages), DecisionSeqsByKey(*ledger_));
}

TEST_F(EmitterTest, BrokerOutageDelaysDeliveryAndLosesNothing) {
  auto log = CommitDecisions(*ledger_, kCronJobs, 20, 2);
  auto emitter = Open();
  EXPECT_EQ(Drain(*emitter).position, 40u);
  cluster_.SetAllBrokersDown(true);
  log = CommitDecisions(*ledger_, kCronJobs, 30, 2, 20);
  // While every broker is down nothing can be acknowledged: the position must stay put.
  const auto until = std::chrono::steady_clock::now() + 1500ms;
  while (std::chrono::steady_clock::now() < until) {
    auto p = emitter->Step(50ms);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    EXPECT_EQ(p->position, 40u);
  }
  EXPECT_EQ(emitter->progress().in_flight, 60u);
  EXPECT_EQ(StoredPosition(), 40u);
  cluster_.SetAllBrokersDown(false);
  const EmitProgress p = Drain(*emitter);
  EXPECT_EQ(p.position, 100u);
  const auto messages = ReadAndCheck(log);
  // Same session throughout: the idempotent producer wrote every record exactly once.
  EXPECT_EQ(messages.size(), 100u);
  EXPECT_EQ(ApplyDedupe(messages), DecisionSeqsByKey(*ledger_));
}

TEST_F(EmitterTest, RetriableRequestErrorsAndLeaderChangesAreAbsorbed) {
  auto log = CommitDecisions(*ledger_, kCronJobs, 20, 2);
  auto emitter = Open();
  rd_kafka_mock_push_request_errors(
      cluster_.mock(), kProduceApiKey, 6, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
      RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS,
      RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND, RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE,
      RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT);
  EXPECT_EQ(Drain(*emitter).position, 40u);
  for (int32_t partition = 0; partition < kPartitions; ++partition) {
    ASSERT_EQ(rd_kafka_mock_partition_set_leader(cluster_.mock(), topic_.c_str(), partition,
                                                 1 + (partition + 1) % 3),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  log = CommitDecisions(*ledger_, kCronJobs, 30, 2, 20);
  EXPECT_EQ(Drain(*emitter).position, 100u);
  const auto messages = ReadAndCheck(log);
  EXPECT_EQ(messages.size(), 100u);
  EXPECT_EQ(ApplyDedupe(messages), DecisionSeqsByKey(*ledger_));
}

TEST_F(EmitterTest, AFailedSessionStopsBeforeTheGapAndTheNextOneFillsIt) {
  auto log = CommitDecisions(*ledger_, kCronJobs, 20, 2);
  {
    auto emitter = Open();
    EXPECT_EQ(Drain(*emitter).position, 40u);
    log = CommitDecisions(*ledger_, kCronJobs, 30, 2, 20);
    // A non-retriable error fails the records of a produce request: the session must end and the
    // stored position must not pass the first failed record.
    rd_kafka_mock_push_request_errors(cluster_.mock(), kProduceApiKey, 1,
                                      RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
    Status failure;
    ASSERT_TRUE(kafka_testing::PollUntil([&] {
      auto p = emitter->Step(50ms);
      if (!p.ok()) failure = p.status();
      return !p.ok() || p->position >= 100;
    }));
    ASSERT_FALSE(failure.ok()) << "the injected error was not reported";
    EXPECT_LT(StoredPosition(), 100u);
    EXPECT_EQ(emitter->Step(0ms).status(), failure) << "a failed session stays failed";
  }
  auto emitter = Open();
  EXPECT_EQ(Drain(*emitter).position, 100u);
  const auto messages = ReadAndCheck(log);
  EXPECT_EQ(ApplyDedupe(messages), DecisionSeqsByKey(*ledger_));
}

TEST_F(EmitterTest, LedgerStreamCarriesEveryInputKeyedByItsCronJob) {
  const Time t = Time::FromUnix(1716112800);
  model::WatchEvent cj;
  cj.kind = model::ObjectKind::kCronJob;
  cj.namespace_ = "prod";
  cj.name = "backup";
  cj.uid = "u0";
  cj.resource_version = "1";
  cj.raw = store::testing::CronJobJson("prod", "backup", "u0", "1");
  model::WatchEvent job;
  job.kind = model::ObjectKind::kJob;
  job.namespace_ = "prod";
  job.name = "backup-28600000";
  job.uid = "u1";
  job.resource_version = "2";
  job.owner_name = "backup";
  job.owner_uid = "u0";
  job.raw = R"({"kind":"Job"})";
  store::UnitOfWork u1;
  u1.inputs = {cj, job, model::ConfigChange{t, "historyCleanup", "false"}};
  ASSERT_TRUE(ledger_->Commit(std::move(u1)).ok());
  store::UnitOfWork u2;  // a reconcile pass: seqs 4 (tick), 5 (intent), 6 (outcome), 7 (end)
  u2.inputs = {model::Tick{t, "prod", "backup", "timer"},
               model::ActionIntent{t, 4, 0, "create", model::ObjectKind::kJob, "prod",
                                   "backup-28600005", "{}"},
               model::ActionOutcome{t, 5, "create", model::ObjectKind::kJob, "prod",
                                    "backup-28600005", "OK", "{}"},
               model::PassEnd{t, 4, 3, "prod", "backup", "u0", 1, "done", "{}"}};
  ASSERT_TRUE(ledger_->Commit(std::move(u2)).ok());

  cluster_.CreateTopic("cronledger.ledger", kPartitions);
  auto o = Options(emit::EmitStream::kLedger);
  o.topic = "cronledger.ledger";
  auto emitter = OutboxEmitter::Open(*ledger_, o).value();
  EXPECT_EQ(Drain(*emitter).position, 7u);
  EXPECT_EQ(ledger_->GetSourcePosition("kafka-emit:cronledger.ledger").value(), "seq=7");

  std::vector<store::LogRecord> log;
  ASSERT_TRUE(ledger_
                  ->ScanInputs(1, true,
                               [&](const store::LogRecord& r) {
                                 log.push_back(r);
                                 return true;
                               })
                  .ok());
  const auto messages = ReadTopic(cluster_.bootstraps(), "cronledger.ledger", kPartitions);
  ASSERT_EQ(messages.size(), 7u);
  std::map<uint64_t, std::string> key_of_seq;
  for (const auto& m : messages) {
    EXPECT_EQ(m.headers.at("cronledger-schema"), "cronledger.ledger/v1");
    auto record = emit::DecodeLedgerRecord(model::ParseJson(m.value).value());
    ASSERT_TRUE(record.ok()) << record.status().ToString();
    ASSERT_GE(record->seq, 1u);
    ASSERT_LE(record->seq, 7u);
    EXPECT_EQ(std::to_string(record->seq), m.headers.at("cronledger-seq"));
    EXPECT_EQ(record->input, log[record->seq - 1].input);
    EXPECT_EQ(record->recorded_at, log[record->seq - 1].recorded_at);
    key_of_seq[record->seq] = m.key;
  }
  const std::map<uint64_t, std::string> want = {
      {1, "prod/backup"}, {2, "prod/backup"}, {3, "/"},          {4, "prod/backup"},
      {5, "prod/backup"}, {6, "prod/backup"}, {7, "prod/backup"}};
  EXPECT_EQ(key_of_seq, want);
}

TEST_F(EmitterTest, SeveralLedgersOnOneTopicAreDeduplicatedPerSource) {
  // Scale-out: two replicas, one ledger each, emit to one topic. Their seqs overlap; the
  // cronledger-source header keeps the consumer rule per (key, source) exact for both.
  store::testing::TempDir other_dir;
  store::LedgerOptions lo;
  lo.path = other_dir.Sub("ledger");
  lo.sync = store::SyncMode::kNone;
  auto other = store::Ledger::Open(lo).value();
  CommitDecisions(*ledger_, kCronJobs, 10, 2);
  CommitDecisions(*other, kCronJobs, 12, 2, 100);
  auto o = Options();
  o.source_id = "replica-0";
  auto first = OutboxEmitter::Open(*ledger_, o).value();
  o.source_id = "replica-1";
  auto second = OutboxEmitter::Open(*other, o).value();
  EXPECT_EQ(Drain(*first).position, 20u);
  EXPECT_EQ(Drain(*second).position, 24u);
  // A replica whose stored position is behind (a crash before it was recorded) repeats records:
  // still removable.
  o.source_id = "replica-0";
  first.reset();
  {
    store::UnitOfWork reset;
    reset.positions.push_back({"kafka-emit:" + topic_, emit::EncodeEmitPosition(5)});
    ASSERT_TRUE(ledger_->Commit(std::move(reset)).ok());
  }
  first = OutboxEmitter::Open(*ledger_, o).value();
  EXPECT_EQ(Drain(*first).position, 20u);
  const auto messages = ReadTopic(cluster_.bootstraps(), topic_, kPartitions);
  EXPECT_EQ(messages.size(), 20u + 24u + 15u);
  std::map<std::string, std::vector<uint64_t>> want;
  for (const auto& [key, seqs] : DecisionSeqsByKey(*ledger_)) want["replica-0|" + key] = seqs;
  for (const auto& [key, seqs] : DecisionSeqsByKey(*other)) want["replica-1|" + key] = seqs;
  EXPECT_EQ(ApplyDedupe(messages), want);
}

TEST_F(EmitterTest, ForbiddenAndInvalidPropertiesAreRejectedWithoutTheirValues) {
  auto o = Options();
  o.producer.properties = {{"enable.idempotence", "false"}};
  auto e = OutboxEmitter::Open(*ledger_, o);
  ASSERT_FALSE(e.ok());
  EXPECT_TRUE(e.status().IsInvalidArgument());
  // librdkafka's own error would quote the bad value.
  o.producer.properties = {{"security.protocol", "hunter2-secret"}};
  e = OutboxEmitter::Open(*ledger_, o);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.status().message().find("security.protocol"), std::string::npos);
  EXPECT_EQ(e.status().message().find("hunter2"), std::string::npos) << e.status().ToString();
  o.producer.properties = {};
  o.topic = "";
  EXPECT_FALSE(OutboxEmitter::Open(*ledger_, o).ok());
}

}  // namespace
}  // namespace cronledger
