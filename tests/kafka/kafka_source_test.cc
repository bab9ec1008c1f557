// The watch-topic consumer against librdkafka's mock cluster: round trip into the ledger,
// offsets stored with the inputs, exact resume, poison messages, a rebalance between two
// consumers of one group.
#include "ingest/kafka_source.h"

#include <gtest/gtest.h>

#include <set>

#include "store/test_util.h"
#include "tests/kafka/kafka_testing.h"

namespace cronledger {
namespace {

using ingest::KafkaEventSource;
using kafka_testing::MockCluster;
using kafka_testing::ProduceSync;
using namespace std::chrono_literals;

constexpr int kPartitions = 3;

std::string CronJobEvent(const std::string& name, int rv) {
  return R"({"type":"MODIFIED","object":)" +
         store::testing::CronJobJson("prod", name, "uid-" + name, std::to_string(rv)) + "}";
}

class KafkaSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_.CreateTopic(topic_, kPartitions);
    store::LedgerOptions o;
    o.path = dir_.Sub("ledger");
    o.sync = store::SyncMode::kNone;
    ledger_ = store::Ledger::Open(o).value();
  }

  ingest::KafkaSourceOptions Options() {
    ingest::KafkaSourceOptions o;
    o.brokers = cluster_.bootstraps();
    o.topic = topic_;
    o.group_id = "cronledger-test";
    o.log = kafka_testing::Quiet;
    return o;
  }

  // Produces `count` CronJob updates over 6 CronJobs with resourceVersions first+1.. and returns
  // where each landed.
  std::vector<std::pair<int32_t, int64_t>> ProduceEvents(int first, int count) {
    std::vector<std::pair<std::string, std::string>> records;
    for (int i = first; i < first + count; ++i) {
      const std::string name = "cj" + std::to_string(i % 6);
      records.emplace_back("prod/" + name, CronJobEvent(name, i + 1));
    }
    return ProduceSync(cluster_.bootstraps(), topic_, records);
  }

  // Polls until the ledger holds `inputs` input records and `quarantined` entries.
  void IngestUntil(KafkaEventSource& source, uint64_t inputs, uint64_t quarantined = 0) {
    const bool done = kafka_testing::PollUntil([&] {
      auto p = source.Poll(50ms);
      EXPECT_TRUE(p.ok()) << p.status().ToString();
      if (!p.ok()) return true;
      auto meta = ledger_->Meta().value();
      return meta.last_input_seq >= inputs && meta.quarantine_count >= quarantined;
    });
    EXPECT_TRUE(done) << "ledger did not reach " << inputs << " inputs";
  }

  // The watch events of the ledger: resourceVersions per CronJob in log order.
  std::map<std::string, std::vector<int>> LedgerEvents() {
    std::map<std::string, std::vector<int>> out;
    EXPECT_TRUE(ledger_
                    ->ScanInputs(1, false,
                                 [&](const store::LogRecord& r) {
                                   const auto& e = std::get<model::WatchEvent>(r.input);
                                   out[e.name].push_back(std::stoi(e.resource_version));
                                   return true;
                                 })
                    .ok());
    return out;
  }

  static std::map<std::string, std::vector<int>> Expected(int count) {
    std::map<std::string, std::vector<int>> out;
    for (int i = 0; i < count; ++i) out["cj" + std::to_string(i % 6)].push_back(i + 1);
    return out;
  }

  std::map<int32_t, int64_t> StoredPositions() {
    std::map<int32_t, int64_t> out;
    for (int32_t p = 0; p < kPartitions; ++p) {
      auto s = ledger_->GetSourcePosition(ingest::KafkaPartitionSource(topic_, p));
      if (s.ok()) out[p] = ingest::DecodeKafkaPosition(*s).value();
    }
    return out;
  }

  static std::map<int32_t, int64_t> NextOffsets(
      const std::vector<std::pair<int32_t, int64_t>>& where) {
    std::map<int32_t, int64_t> out;
    for (const auto& [p, offset] : where) out[p] = std::max(out[p], offset + 1);
    return out;
  }

  store::testing::TempDir dir_;
  MockCluster cluster_;
  const std::string topic_ = "cronledger.watch";
  std::unique_ptr<store::Ledger> ledger_;
};

TEST(KafkaKeys, CronJobAndItsJobsShareAKey) {
  model::WatchEvent e;
  e.kind = model::ObjectKind::kCronJob;
  e.namespace_ = "prod";
  e.name = "backup";
  EXPECT_EQ(model::WatchEventKey(e), "prod/backup");
  e.kind = model::ObjectKind::kJob;
  e.name = "backup-28600000";
  e.owner_name = "backup";
  EXPECT_EQ(model::WatchEventKey(e), "prod/backup");
  e.owner_name = "";
  EXPECT_EQ(model::WatchEventKey(e), "prod/backup-28600000");
  e.name = "";
  e.namespace_ = "";
  EXPECT_EQ(model::WatchEventKey(e), "/");
}

TEST(KafkaKeys, PositionsRoundTripAndRejectGarbage) {
  EXPECT_EQ(ingest::KafkaPartitionSource("cronledger.watch", 2), "kafka:cronledger.watch/2");
  EXPECT_EQ(ingest::DecodeKafkaPosition(ingest::EncodeKafkaPosition(77)).value(), 77);
  for (const char* bad : {"", "next=", "next=-3", "next=4x", "seq=4"}) {
    EXPECT_FALSE(ingest::DecodeKafkaPosition(bad).ok()) << bad;
  }
}

TEST_F(KafkaSourceTest, EveryMessageReachesTheLedgerWithItsOffset) {
  const auto where = ProduceEvents(0, 60);
  auto source = KafkaEventSource::Open(*ledger_, Options()).value();
  IngestUntil(*source, 60);
  EXPECT_EQ(LedgerEvents(), Expected(60));
  EXPECT_EQ(ledger_->Meta().value().last_input_seq, 60u);
  EXPECT_EQ(StoredPositions(), NextOffsets(where));
  // The ingested event is the watch event the message carried.
  auto cj = ledger_->GetCronJob("prod", "cj5");
  ASSERT_TRUE(cj.ok()) << cj.status().ToString();
}

TEST_F(KafkaSourceTest, RestartResumesExactlyAtTheStoredOffsets) {
  auto where = ProduceEvents(0, 30);
  {
    auto o = Options();
    o.batch_messages = 7;
    auto source = KafkaEventSource::Open(*ledger_, o).value();
    IngestUntil(*source, 12);  // stops mid-topic: some partitions only partly read
  }
  const uint64_t first_run = ledger_->Meta().value().last_input_seq;
  EXPECT_LT(first_run, 30u);
  const auto more = ProduceEvents(30, 30);
  where.insert(where.end(), more.begin(), more.end());
  {
    // A new consumer in the same group: the group's committed offsets would also resume, so a
    // new group id proves the ledger's positions decide.
    auto o = Options();
    o.group_id = "another-group";
    o.commit_to_group = false;
    auto source = KafkaEventSource::Open(*ledger_, o).value();
    IngestUntil(*source, 60);
    // Nothing beyond: a few more polls add nothing.
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(source->Poll(20ms).ok());
  }
  EXPECT_EQ(ledger_->Meta().value().last_input_seq, 60u);
  EXPECT_EQ(LedgerEvents(), Expected(60));  // no duplicate, no loss, per-key order
  EXPECT_EQ(StoredPositions(), NextOffsets(where));
}

TEST_F(KafkaSourceTest, PoisonMessagesAreQuarantinedWithTheirOffsetAndBytes) {
  ProduceEvents(0, 3);
  const std::string bad_json = "{\"type\":\"ADDED\",\"object\":{";
  const std::string wrong_kind = R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1"}})";
  const auto offsets =
      ProduceSync(cluster_.bootstraps(), topic_,
                  {{"prod/cj1", bad_json}, {"prod/cj1", ""}, {"prod/cj1", wrong_kind}});
  const auto at_bad = offsets[0], at_empty = offsets[1], at_kind = offsets[2];
  ProduceEvents(3, 3);
  auto source = KafkaEventSource::Open(*ledger_, Options()).value();
  IngestUntil(*source, 6, 3);
  EXPECT_EQ(LedgerEvents(), Expected(6));
  auto q = ledger_->ListQuarantine(0, 0).value();
  ASSERT_EQ(q.size(), 3u);
  std::map<std::string, std::string> raw_at;
  for (const auto& e : q) {
    EXPECT_FALSE(e.reason.empty());
    raw_at[e.source] = e.raw;
  }
  auto where = [&](std::pair<int32_t, int64_t> at) {
    return topic_ + "/" + std::to_string(at.first) + "/" + std::to_string(at.second);
  };
  const std::map<std::string, std::string> want = {
      {where(at_bad), bad_json}, {where(at_empty), ""}, {where(at_kind), wrong_kind}};
  EXPECT_EQ(raw_at, want);
}

TEST_F(KafkaSourceTest, ARebalanceBetweenTwoConsumersDuplicatesAndLosesNothing) {
  // Two consumers of one group writing one ledger: what a partition's previous owner committed
  // is where its next owner starts (revocation commits the batch; assignment seeks to the
  // ledger's position).
  ProduceEvents(0, 45);
  // Short group timers: the mock coordinator completes a rebalance when every member rejoined,
  // which each notices on its next heartbeat.
  auto o = Options();
  o.properties = {{"session.timeout.ms", "6000"}, {"heartbeat.interval.ms", "200"}};
  auto first = KafkaEventSource::Open(*ledger_, o).value();
  IngestUntil(*first, 15);
  auto second = KafkaEventSource::Open(*ledger_, o).value();
  ProduceEvents(45, 45);
  const bool done = kafka_testing::PollUntil(
      [&] {
        EXPECT_TRUE(first->Poll(20ms).ok());
        EXPECT_TRUE(second->Poll(20ms).ok());
        return ledger_->Meta().value().last_input_seq >= 90 && !second->Assignment().empty() &&
               !first->Assignment().empty();
      },
      std::chrono::seconds(60));
  ASSERT_TRUE(done) << "inputs: " << ledger_->Meta().value().last_input_seq;
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(first->Poll(10ms).ok());
    ASSERT_TRUE(second->Poll(10ms).ok());
  }
  EXPECT_EQ(ledger_->Meta().value().last_input_seq, 90u);
  std::set<int32_t> owned;
  for (const auto& [p, next] : first->Assignment()) owned.insert(p);
  for (const auto& [p, next] : second->Assignment()) {
    EXPECT_FALSE(owned.count(p)) << "partition " << p << " owned twice";
    owned.insert(p);
  }
  EXPECT_EQ(owned.size(), static_cast<size_t>(kPartitions));
  // Per-key order holds because a key lives on one partition and the ledger is written in
  // offset order per partition.
  EXPECT_EQ(LedgerEvents(), Expected(90));
}

TEST_F(KafkaSourceTest, BrokerOutageRequestErrorsAndLeaderChangesLoseAndRepeatNothing) {
  // Fault injection on the consume side: every broker down for a while mid-topic, then failing
  // Fetch / OffsetFetch / Heartbeat requests and new partition leaders while reading.
  constexpr int16_t kFetch = 1, kOffsetFetch = 9, kHeartbeat = 12, kListOffsets = 2;
  ProduceEvents(0, 30);
  auto o = Options();
  o.batch_messages = 5;
  // Short reconnect/retry back-offs keep the test quick once the brokers are back.
  o.properties = {{"session.timeout.ms", "6000"},   {"heartbeat.interval.ms", "200"},
                  {"reconnect.backoff.ms", "20"},   {"reconnect.backoff.max.ms", "200"},
                  {"fetch.error.backoff.ms", "50"}, {"retry.backoff.ms", "50"}};
  auto source = KafkaEventSource::Open(*ledger_, o).value();
  IngestUntil(*source, 10);
  cluster_.SetAllBrokersDown(true);
  // While every broker is down, polling commits nothing new and fails nothing.
  const uint64_t during = ledger_->Meta().value().last_input_seq;
  const auto until = std::chrono::steady_clock::now() + 1000ms;
  uint64_t taken_down = 0;
  while (std::chrono::steady_clock::now() < until) {
    auto p = source->Poll(50ms);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    taken_down += p->messages;
  }
  // Messages fetched before the outage was noticed may still be served; nothing else.
  EXPECT_EQ(ledger_->Meta().value().last_input_seq, during + taken_down);
  cluster_.SetAllBrokersDown(false);
  for (int16_t api : {kFetch, kOffsetFetch, kHeartbeat, kListOffsets}) {
    rd_kafka_mock_push_request_errors(
        cluster_.mock(), api, 3, RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION,
        RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE);
  }
  for (int32_t partition = 0; partition < kPartitions; ++partition) {
    ASSERT_EQ(rd_kafka_mock_partition_set_leader(cluster_.mock(), topic_.c_str(), partition,
                                                 1 + (partition + 1) % 3),
              RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  ProduceEvents(30, 30);
  IngestUntil(*source, 60);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(source->Poll(20ms).ok());
  EXPECT_EQ(ledger_->Meta().value().last_input_seq, 60u);
  EXPECT_EQ(LedgerEvents(), Expected(60));  // no loss, no repeat, per-key order
}

TEST_F(KafkaSourceTest, ForbiddenPropertiesAreRejected) {
  auto o = Options();
  o.properties = {{"enable.auto.commit", "true"}};
  auto s = KafkaEventSource::Open(*ledger_, o);
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(s.status().IsInvalidArgument());
  o.properties = {{"sasl.password.bogus", "hunter2"}};
  s = KafkaEventSource::Open(*ledger_, o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().message().find("hunter2"), std::string::npos);
}

}  // namespace
}  // namespace cronledger

namespace cronledger {
namespace {

// The hooks `cronledger run --kafka-watch-topic` uses (docs/kafka.md "Consuming the watch
// topic"): each batch goes to the commit hook with its partitions' offsets; a hook failure ends
// the source with nothing of the batch stored; ownership follows the assignment once caught up,
// and a key's partition is the producer's.
TEST_F(KafkaSourceTest, CommitHookGetsEachBatchWithItsOffsetsAndOwnershipFollowsCatchUp) {
  std::vector<store::UnitOfWork> units;
  std::vector<std::vector<int32_t>> caught_up;
  bool fail = false;
  ingest::KafkaSourceOptions o = Options();
  o.batch_messages = 7;
  o.commit = [&](store::UnitOfWork unit) -> Result<store::CommitResult> {
    if (fail) return Status::Unavailable("hook refused");
    units.push_back(unit);
    return ledger_->Commit(std::move(unit));
  };
  o.on_caught_up = [&](const std::vector<int32_t>& p) { caught_up.push_back(p); };
  auto source = KafkaEventSource::Open(*ledger_, o).value();
  EXPECT_FALSE(source->CaughtUp()) << "no assignment yet";
  const auto where = ProduceEvents(0, 30);
  IngestUntil(*source, 30);
  ASSERT_TRUE(kafka_testing::PollUntil([&] {
    EXPECT_TRUE(source->Poll(20ms).ok());
    return source->CaughtUp();
  }));
  // Every unit carried positions, each the next offset after the unit's last message of that
  // partition, and the last ones are what the ledger stores.
  std::map<int32_t, int64_t> ends;
  for (const auto& [p, offset] : where) ends[p] = std::max(ends[p], offset + 1);
  std::map<int32_t, int64_t> last;
  size_t inputs = 0;
  for (const auto& unit : units) {
    EXPECT_FALSE(unit.positions.empty());
    inputs += unit.inputs.size();
    for (const auto& pos : unit.positions) {
      const int32_t p = std::stoi(pos.source.substr(pos.source.rfind('/') + 1));
      last[p] = ingest::DecodeKafkaPosition(pos.position).value();
    }
  }
  EXPECT_EQ(inputs, 30u);
  EXPECT_EQ(last, ends);
  // Caught up: every assigned partition reported once; keys map to where the producer put them.
  std::set<int32_t> reported;
  for (const auto& batch : caught_up) reported.insert(batch.begin(), batch.end());
  EXPECT_EQ(reported, source->AssignedPartitions());
  EXPECT_EQ(reported.size(), static_cast<size_t>(kPartitions));
  for (int i = 0; i < 6; ++i) {
    const std::string key = "prod/cj" + std::to_string(i);
    EXPECT_EQ(source->PartitionOfKey(key), where[static_cast<size_t>(i)].first) << key;
    EXPECT_TRUE(source->OwnsKey(key)) << key;
  }

  // A refusing hook: the source ends with its error; the ledger's positions did not move.
  fail = true;
  ProduceEvents(30, 6);
  Status failed;
  ASSERT_TRUE(kafka_testing::PollUntil([&] {
    auto p = source->Poll(20ms);
    failed = p.status();
    return !p.ok();
  }));
  EXPECT_EQ(failed.message(), "hook refused");
  for (const auto& [p, end] : ends) {
    auto stored = ledger_->GetSourcePosition(ingest::KafkaPartitionSource(topic_, p));
    EXPECT_EQ(ingest::DecodeKafkaPosition(stored.value()).value(), end) << p;
  }
  EXPECT_EQ(ledger_->Meta().value().last_input_seq, 30u);
}

TEST_F(KafkaSourceTest, APartitionerThatIsNotAKeyHashIsRefused) {
  ingest::KafkaSourceOptions o = Options();
  o.properties = {{"partitioner", "random"}};
  auto source = KafkaEventSource::Open(*ledger_, o);
  ASSERT_FALSE(source.ok());
  EXPECT_TRUE(source.status().IsInvalidArgument()) << source.status().ToString();
}

}  // namespace
}  // namespace cronledger
