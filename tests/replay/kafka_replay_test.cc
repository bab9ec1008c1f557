// `replay --kafka-brokers`: the incident day (sim_world.h) recorded by the real controller loop
// into a store, emitted through the real OutboxEmitter to librdkafka's mock cluster (3 brokers,
// several partitions), then replayed from the streams (app/support_replay_kafka.h): the same
// inputs, the same digests as the store replay; repeats change nothing; holes are gaps.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "app/support_audit_store.h"
#include "app/support_replay_kafka.h"
#include "emit/outbox_emitter.h"
#include "model/json.h"
#include "replay/engine.h"
#include "replay/trail.h"
#include "store/test_util.h"
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

// Produces each message to its partition of `topic` with its key, value and headers.
void ProduceMessages(const std::string& bootstraps, const std::string& topic,
                     const std::vector<kafka_testing::Message>& messages) {
  char err[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  CL_CHECK(rd_kafka_conf_set(conf, "bootstrap.servers", bootstraps.c_str(), err, sizeof(err)) ==
           RD_KAFKA_CONF_OK);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  CL_CHECK(rk != nullptr);
  for (const kafka_testing::Message& m : messages) {
    rd_kafka_headers_t* headers = rd_kafka_headers_new(m.headers.size());
    for (const auto& [k, v] : m.headers) {
      rd_kafka_header_add(headers, k.data(), static_cast<ssize_t>(k.size()), v.data(),
                          static_cast<ssize_t>(v.size()));
    }
    const rd_kafka_resp_err_t e = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(m.partition),
        RD_KAFKA_V_KEY(m.key.data(), m.key.size()),
        RD_KAFKA_V_VALUE(const_cast<char*>(m.value.data()), m.value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_END);
    if (e != RD_KAFKA_RESP_ERR_NO_ERROR) rd_kafka_headers_destroy(headers);
    CL_CHECK(e == RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  CL_CHECK(rd_kafka_flush(rk, 30000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_destroy(rk);
}

// Copies `from` to `to` (same partitions, keys, values, headers) except the records whose
// cronledger-seq is in `drop`: a topic that lost records.
void CopyWithHoles(const std::string& bootstraps, const std::string& from, const std::string& to,
                   int partitions, const std::set<uint64_t>& drop) {
  std::vector<kafka_testing::Message> kept;
  for (kafka_testing::Message& m : kafka_testing::ReadTopic(bootstraps, from, partitions)) {
    if (drop.count(std::stoull(m.headers.at("cronledger-seq"))) == 0) kept.push_back(std::move(m));
  }
  ProduceMessages(bootstraps, to, kept);
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

// The audit store (app/support_audit_store.h): every source's copy holds exactly its records.

using app::audit_store::AuditStore;
using app::audit_store::AuditStoreOptions;
using app::audit_store::RoundReport;
using app::audit_store::SourceState;

class AuditStoreTest : public KafkaReplay {
 protected:
  AuditStoreOptions StoreOptions(const std::string& prefix) {
    AuditStoreOptions o;
    o.brokers = cluster_.bootstraps();
    o.topic_prefix = prefix;
    o.data_dir = dir_.Sub("audit");
    o.log = kafka_testing::Quiet;
    o.read_timeout = 30s;
    return o;
  }
  static RoundReport RoundOf(AuditStore& store) {
    auto r = store.Round();
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(*r) : RoundReport{};
  }
  static const SourceState* Find(const RoundReport& r, const std::string& source) {
    for (const SourceState& s : r.sources) {
      if (s.source == source) return &s;
    }
    return nullptr;
  }

  // The copy holds the world's records byte for byte (inputs as stored with their recorded times
  // and raw bytes, decision records as stored) and replays to the store replay's digests.
  void ExpectCopyOfTheWorld(const std::string& dir) {
    store::LedgerOptions lo;
    lo.path = dir;
    lo.create_if_missing = false;
    lo.read_only = true;
    auto copy = store::Ledger::Open(lo);
    ASSERT_TRUE(copy.ok()) << copy.status().ToString();
    auto scan_inputs = [](store::Ledger& l) {
      std::vector<std::string> out;
      EXPECT_TRUE(l.ScanStoredInputs(1, [&](const store::StoredInput& in) {
                     out.push_back(std::to_string(in.seq) + "|" +
                                   std::to_string(in.recorded_at.UnixNanosSaturated()) + "|" +
                                   std::string(in.record) + "|" + std::string(in.raw));
                     return true;
                   }).ok());
      return out;
    };
    auto scan_decisions = [](store::Ledger& l) {
      std::vector<std::string> out;
      EXPECT_TRUE(l.ScanDecisionBytes(1, [&](uint64_t seq, std::string_view bytes) {
                     out.push_back(std::to_string(seq) + "|" + std::string(bytes));
                     return true;
                   }).ok());
      return out;
    };
    const auto want_inputs = scan_inputs(world_->ledger());
    const auto want_decisions = scan_decisions(world_->ledger());
    EXPECT_EQ(want_inputs.size(), inputs_);
    EXPECT_TRUE(scan_inputs(**copy) == want_inputs);
    EXPECT_TRUE(scan_decisions(**copy) == want_decisions);
    LedgerSource source(**copy);
    const ReplayResult r = RunReplay(source);
    EXPECT_EQ(r.divergences, 0u);
    EXPECT_EQ(r.recorded_digest.sha256, store_->recorded_digest.sha256);
    EXPECT_EQ(r.derived_digest.sha256, store_->derived_digest.sha256);
    // The replica's audit trail checkpoint verifies the copy: same records, same chain.
    trail::UpdateOptions in_memory;
    in_memory.persist = false;
    auto checkpoint = trail::UpdateTrail(world_->ledger(), in_memory, Time::FromUnix(1));
    ASSERT_TRUE(checkpoint.ok()) << checkpoint.status().ToString();
    auto verdict = trail::VerifyStore(**copy, *checkpoint);
    ASSERT_TRUE(verdict.ok()) << verdict.status().ToString();
    EXPECT_TRUE(verdict->intact()) << model::DumpJson(trail::VerdictJson(*verdict));
    for (const trail::ChainVerdict& c : verdict->chains) EXPECT_GT(c.verified, 0u) << c.log;
  }

  store::testing::TempDir dir_;
};

TEST_F(AuditStoreTest, EverySourceGetsAByteExactCopyOfItsLedger) {
  CreateTopics("as");
  EmitBoth("as", 0, 0, "replica-a");
  EmitBoth("as", 0, 0, "replica/b");  // a name that is not a plain directory name
  auto store = AuditStore::Open(StoreOptions("as"));
  ASSERT_TRUE(store.ok()) << store.status().ToString();
  const RoundReport r = RoundOf(**store);
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.messages, 2 * (inputs_ + decisions_));
  EXPECT_EQ(r.duplicates, 0u);
  ASSERT_EQ(r.sources.size(), 2u);
  for (const std::string& source : {std::string("replica-a"), std::string("replica/b")}) {
    const SourceState* s = Find(r, source);
    ASSERT_NE(s, nullptr) << source;
    EXPECT_EQ(s->last_input_seq, inputs_);
    EXPECT_EQ(s->last_decision_seq, decisions_);
    EXPECT_EQ(s->inputs_added, inputs_);
    EXPECT_EQ(s->waiting_inputs + s->waiting_decisions, 0u);
    ExpectCopyOfTheWorld(s->dir);
  }
  EXPECT_EQ(Find(r, "replica/b")->dir, dir_.Sub("audit") + "/sources/replica%2Fb");
}

TEST_F(AuditStoreTest, RepeatsAndRestartsStoreNothingTwice) {
  CreateTopics("asdup");
  EmitBoth("asdup", 0, 0, "r");
  {
    auto store = AuditStore::Open(StoreOptions("asdup")).value();
    EXPECT_EQ(Find(RoundOf(*store), "r")->inputs_added, inputs_);
    // An emitter that restarted from an earlier position repeats records.
    EmitBoth("asdup", inputs_ / 2, decisions_ / 2, "r");
    const RoundReport again = RoundOf(*store);
    EXPECT_EQ(again.messages, (inputs_ - inputs_ / 2) + (decisions_ - decisions_ / 2));
    EXPECT_EQ(again.duplicates, again.messages);
    EXPECT_EQ(Find(again, "r")->inputs_added + Find(again, "r")->decisions_added, 0u);
  }
  // A restarted audit store resumes at its stored positions: nothing is read again.
  auto store = AuditStore::Open(StoreOptions("asdup")).value();
  const RoundReport resumed = RoundOf(*store);
  EXPECT_EQ(resumed.messages, 0u);
  ASSERT_NE(Find(resumed, "r"), nullptr);
  EXPECT_EQ(Find(resumed, "r")->last_input_seq, inputs_);
  ExpectCopyOfTheWorld(Find(resumed, "r")->dir);
}

TEST_F(AuditStoreTest, RecordsWaitForAMissingSeqAndArePersistedOnlyInOrder) {
  CreateTopics("asgap");
  // The topic lost the first 40 inputs (or they are late): nothing after them may be stored.
  EmitBoth("asgap", 40, 0, "r");
  {
    auto store = AuditStore::Open(StoreOptions("asgap")).value();
    const RoundReport r = RoundOf(*store);
    EXPECT_FALSE(r.complete());
    const SourceState* s = Find(r, "r");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->last_input_seq, 0u);
    EXPECT_EQ(s->waiting_inputs, inputs_ - 40);
    EXPECT_EQ(s->input_waits_for, 1u);
    EXPECT_EQ(s->last_decision_seq, decisions_);
    std::string text;
    for (const std::string& line : r.Describe("asgap")) text += line + "\n";
    EXPECT_NE(text.find("r: asgap.ledger waits for seq 1 (" + std::to_string(inputs_ - 40) +
                        " later records held)"),
              std::string::npos)
        << text;
  }
  // Restarted: the held records are read again (their partitions' positions stayed before them),
  // and once the missing ones arrive the copy is complete.
  auto store = AuditStore::Open(StoreOptions("asgap")).value();
  Emit(emit::EmitStream::kLedger, "asgap.ledger", 0, "r");
  const RoundReport r = RoundOf(*store);
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(Find(r, "r")->last_input_seq, inputs_);
  ExpectCopyOfTheWorld(Find(r, "r")->dir);
}

TEST_F(AuditStoreTest, ARecordThatDiffersUnderTheSameSeqIsCorruption) {
  CreateTopics("asbad");
  EmitBoth("asbad", 0, 0, "r");
  // Another record under decision seq 1 of the same source (a second ledger with the same id).
  auto messages =
      kafka_testing::ReadTopic(cluster_.bootstraps(), "asbad.decisions", kDecisionPartitions);
  kafka_testing::Message forged;
  for (const auto& m : messages) {
    if (m.headers.at("cronledger-seq") == "1") forged = m;
  }
  ASSERT_FALSE(forged.value.empty());
  auto d = model::ParseJson(forged.value).value();
  d["reason"] = "Forged";
  forged.value = model::DumpJson(d);
  ProduceMessages(cluster_.bootstraps(), "asbad.decisions", {forged});
  auto store = AuditStore::Open(StoreOptions("asbad")).value();
  auto r = store->Round();
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
  EXPECT_NE(r.status().message().find("asbad.decisions/" + std::to_string(forged.partition) + "/"),
            std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("seq 1 of source 'r'"), std::string::npos)
      << r.status().ToString();

  auto o = StoreOptions("asbad");
  o.properties.emplace_back("group.id", "g");
  EXPECT_TRUE(AuditStore::Open(o).status().IsInvalidArgument());
}

// A free TCP port on 127.0.0.1 (bound, read, released).
uint16_t FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  CL_CHECK(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0);
  socklen_t len = sizeof(a);
  CL_CHECK(::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0);
  ::close(fd);
  return ntohs(a.sin_port);
}

// The whole HTTP/1.0 response to GET `target` on 127.0.0.1:port ("" when nothing answers).
std::string HttpGet(uint16_t port, const std::string& target) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
    const std::string req = "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
    if (::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[4096];
      for (ssize_t n; (n = ::read(fd, buf, sizeof(buf))) > 0;)
        out.append(buf, static_cast<size_t>(n));
    }
  }
  ::close(fd);
  return out;
}

TEST_F(AuditStoreTest, CliFollowsTheTopicsAndEveryReadCommandWorksOnACopy) {
  CreateTopics("ascli");
  EmitBoth("ascli", 0, 0, "replica-0");
  const std::string dir = dir_.Sub("cli");
  const std::string kafka =
      " --kafka-brokers " + cluster_.bootstraps() + " --kafka-topic-prefix ascli --data-dir " + dir;
  const CliResult caught_up = Cli("audit-store --until-caught-up -o json" + kafka);
  ASSERT_EQ(caught_up.exit_code, 0) << caught_up.out;
  auto j = model::ParseJson(caught_up.out);
  ASSERT_TRUE(j.ok()) << caught_up.out;
  ASSERT_EQ((*j)["items"].size(), 1u);
  EXPECT_EQ((*j)["items"][0]["source"], "replica-0");
  EXPECT_EQ((*j)["items"][0]["lastInputSeq"], inputs_);
  EXPECT_EQ((*j)["items"][0]["lastDecisionSeq"], decisions_);
  // When the source recorded its last input: the time of the replica's own last record.
  Time last_recorded;
  ASSERT_TRUE(world_->ledger()
                  .ScanInputs(inputs_, false,
                              [&](const store::LogRecord& r) {
                                last_recorded = r.recorded_at;
                                return false;
                              })
                  .ok());
  EXPECT_EQ((*j)["items"][0]["lastRecordedAt"], FormatRfc3339Nano(last_recorded));

  const std::string copy = " --data-dir " + dir + "/sources/replica-0";
  const CliResult verify = Cli("replay --verify -o json" + copy);
  ASSERT_EQ(verify.exit_code, 0) << verify.out;
  EXPECT_EQ((*model::ParseJson(verify.out))["match"], true);
  // The audit queries answer from the copy what they answer from the replica's own store.
  const CliResult audit = Cli("audit -o json" + copy);
  ASSERT_EQ(audit.exit_code, 0) << audit.out;
  EXPECT_EQ((*model::ParseJson(audit.out))["items"].size(), decisions_);
  const CliResult report = Cli(
      "report adherence --since 2024-01-01T00:00:00Z --until 2024-01-02T00:00:00Z -o json" + copy);
  ASSERT_EQ(report.exit_code, 0) << report.out;
  EXPECT_FALSE((*model::ParseJson(report.out))["items"].empty()) << report.out;

  // Following: records produced while it runs reach the copy within rounds; SIGTERM ends it.
  CreateTopics("asfollow");
  const std::string follow_dir = dir_.Sub("follow");
  const uint16_t metrics_port = FreePort();
  const uint16_t probe_port = FreePort();
  cli_test::ChildProcess follower(
      {CRONLEDGER_BIN, "audit-store", "--kafka-brokers", cluster_.bootstraps(),
       "--kafka-topic-prefix", "asfollow", "--data-dir", follow_dir, "--poll-interval", "100ms",
       "--metrics-bind-address", "127.0.0.1:" + std::to_string(metrics_port),
       "--health-probe-bind-address", "127.0.0.1:" + std::to_string(probe_port)},
      "", /*quiet=*/true);
  EmitBoth("asfollow", 0, 0, "replica-2");
  auto last_seqs = [&]() -> std::pair<uint64_t, uint64_t> {
    store::LedgerOptions lo;
    lo.path = follow_dir + "/sources/replica-2";
    lo.create_if_missing = false;
    lo.read_only = true;
    auto l = store::Ledger::Open(lo);
    if (!l.ok()) return {0, 0};
    auto meta = (*l)->Meta();
    return meta.ok() ? std::make_pair(meta->last_input_seq, meta->last_decision_seq)
                     : std::make_pair(uint64_t{0}, uint64_t{0});
  };
  EXPECT_TRUE(kafka_testing::PollUntil(
      [&] { return last_seqs() == std::make_pair(inputs_, decisions_); }, 60s));
  // Its listeners: ready once rounds succeed; the copy's seqs and nothing waiting in /metrics.
  EXPECT_TRUE(kafka_testing::PollUntil(
      [&] { return HttpGet(probe_port, "/readyz").starts_with("HTTP/1.0 200"); }, 30s));
  EXPECT_TRUE(HttpGet(probe_port, "/healthz").starts_with("HTTP/1.0 200"));
  const std::string want =
      "\ncronledger_audit_store_last_seq{source=\"replica-2\",log=\"inputs\"} " +
      std::to_string(inputs_) + "\n";
  EXPECT_TRUE(kafka_testing::PollUntil(
      [&] { return HttpGet(metrics_port, "/metrics").find(want) != std::string::npos; }, 30s))
      << HttpGet(metrics_port, "/metrics");
  const std::string scrape = HttpGet(metrics_port, "/metrics");
  EXPECT_NE(
      scrape.find(
          "\ncronledger_audit_store_waiting_records{source=\"replica-2\",log=\"decisions\"} 0\n"),
      std::string::npos)
      << scrape;
  EXPECT_NE(
      scrape.find("\ncronledger_audit_store_last_record_timestamp_seconds{source=\"replica-2\"} " +
                  std::to_string(last_recorded.UnixNanosSaturated() / 1'000'000'000) + "\n"),
      std::string::npos)
      << scrape;
  EXPECT_NE(scrape.find("\ncronledger_audit_store_records_total " +
                        std::to_string(inputs_ + decisions_) + "\n"),
            std::string::npos)
      << scrape;
  EXPECT_EQ(follower.Stop(), 0);

  // A source whose first records are missing: exit 1, named on stderr.
  CreateTopics("ascut");
  EmitBoth("ascut", 10, 0, "replica-1");
  const CliResult cut =
      Cli("audit-store --until-caught-up --kafka-brokers " + cluster_.bootstraps() +
              " --kafka-topic-prefix ascut --data-dir " + dir_.Sub("cut"),
          true);
  EXPECT_EQ(cut.exit_code, 1) << cut.out;
  EXPECT_NE(cut.out.find("replica-1: ascut.ledger waits for seq 1"), std::string::npos) << cut.out;
  EXPECT_EQ(Cli("audit-store --until-caught-up --data-dir " + dir).exit_code, 2);
}

TEST_F(AuditStoreTest, TheAdherenceReportOfTheStoreCountsEachFireTimeOnce) {
  // Two sources that decided the same fire times (a handover in which both the old and the new
  // owner recorded a terminal record for each): the merged report counts each once, keeps the
  // other source's record beside it, and its totals are those of one replica's ledger.
  CreateTopics("asmerge");
  EmitBoth("asmerge", 0, 0, "replica-b");
  EmitBoth("asmerge", 0, 0, "replica-a");
  const std::string dir = dir_.Sub("merge");
  ASSERT_EQ(Cli("audit-store --until-caught-up --kafka-brokers " + cluster_.bootstraps() +
                " --kafka-topic-prefix asmerge --data-dir " + dir)
                .exit_code,
            0);
  const std::string window =
      "report adherence --since 2024-01-01T00:00:00Z --until 2024-01-02T00:00:00Z -o json ";
  const CliResult one = Cli(window + "--data-dir " + dir + "/sources/replica-a");
  const CliResult merged = Cli(window + "--slots --data-dir " + dir);
  ASSERT_EQ(one.exit_code, 0) << one.out;
  ASSERT_EQ(merged.exit_code, 0) << merged.out;
  const model::Json o = model::ParseJson(one.out).value();
  const model::Json m = model::ParseJson(merged.out).value();
  EXPECT_EQ(m["totals"], o["totals"]);
  ASSERT_EQ(m["items"].size(), o["items"].size());
  uint64_t terminal = 0;
  for (const model::Json& row : m["items"]) {
    for (const model::Json& slot : row["slots"]) {
      EXPECT_EQ(slot["source"], "replica-a") << slot.dump();
      if (slot["status"] != "created" && slot["status"] != "skipped") continue;
      ++terminal;
      ASSERT_EQ(slot["alsoDecidedBy"].size(), 1u) << slot.dump();
      EXPECT_EQ(slot["alsoDecidedBy"][0]["source"], "replica-b");
      EXPECT_EQ(slot["alsoDecidedBy"][0]["seq"], slot["seq"]);
    }
  }
  EXPECT_GT(terminal, 5u);

  // why on the store: the answer of the source that recorded the fire time, and the other's.
  std::string cron_job, scheduled;
  for (const model::Json& row : m["items"]) {
    for (const model::Json& slot : row["slots"]) {
      if (cron_job.empty() && slot["status"] == "created") {
        cron_job = row["namespace"].get<std::string>() + "/" + row["name"].get<std::string>();
        scheduled = slot["scheduledTime"].get<std::string>();
      }
    }
  }
  ASSERT_FALSE(cron_job.empty());
  const CliResult why =
      Cli("why " + cron_job + " --scheduled " + scheduled + " -o json --data-dir " + dir);
  ASSERT_EQ(why.exit_code, 0) << why.out;
  const model::Json w = model::ParseJson(why.out).value()["items"][0];
  EXPECT_EQ(w["verdict"], "created") << why.out;
  EXPECT_EQ(w["source"], "replica-a") << why.out;
  ASSERT_EQ(w["otherSources"].size(), 1u) << why.out;
  EXPECT_EQ(w["otherSources"][0]["source"], "replica-b");
  EXPECT_EQ(w["otherSources"][0]["verdict"], "created");
  const CliResult text =
      Cli("why " + cron_job + " --scheduled " + scheduled + " --data-dir " + dir);
  EXPECT_NE(text.out.find("From the ledger of source replica-a."), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("The ledger of source replica-b also records it: created"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(terminal, o["totals"]["created"].get<uint64_t>() +
                          o["totals"]["skipped"].get<uint64_t>() +
                          o["totals"]["unexpected"].get<uint64_t>());

  // audit on the store: both sources' records, each labelled, the pages joined losing nothing.
  const CliResult all = Cli("audit -o json --data-dir " + dir);
  ASSERT_EQ(all.exit_code, 0) << all.out;
  const model::Json items = model::ParseJson(all.out).value()["items"];
  ASSERT_EQ(items.size(), 2 * decisions_);
  std::map<std::string, uint64_t> per_source;  // records so far = the last seq, in seq order
  for (const model::Json& item : items) {
    uint64_t& n = per_source[item["source"].get<std::string>()];
    EXPECT_EQ(item["seq"], ++n) << item.dump();
  }
  EXPECT_EQ(per_source["replica-a"], decisions_);
  EXPECT_EQ(per_source["replica-b"], decisions_);
  EXPECT_EQ(items[0]["source"], "replica-a");  // same times: the first source name first
  const CliResult first = Cli("audit --limit 3 -o json --data-dir " + dir, true);
  ASSERT_EQ(first.exit_code, 0) << first.out;
  const size_t at = first.out.find("more results: --continue ");
  ASSERT_NE(at, std::string::npos) << first.out;
  const std::string token = first.out.substr(at + 25, first.out.find('\n', at) - at - 25);
  const CliResult rest = Cli("audit -o json --continue " + token + " --data-dir " + dir);
  ASSERT_EQ(rest.exit_code, 0) << rest.out;
  EXPECT_EQ(model::ParseJson(rest.out).value()["items"].size(), 2 * decisions_ - 3);
  // replay --verify on the store: every source's copy against its own recorded digest.
  const CliResult verify = Cli("replay --verify -o json --data-dir " + dir);
  ASSERT_EQ(verify.exit_code, 0) << verify.out;
  const model::Json v = model::ParseJson(verify.out).value();
  EXPECT_EQ(v["match"], true);
  ASSERT_EQ(v["items"].size(), 2u);
  EXPECT_EQ(v["items"][0]["source"], "replica-a");
  EXPECT_EQ(v["items"][1]["source"], "replica-b");
  for (const model::Json& row : v["items"]) {
    EXPECT_EQ(row["match"], true);
    EXPECT_EQ(row["decisions"], decisions_);
    EXPECT_EQ(row["recordedSha256"], row["derivedSha256"]);
  }
  EXPECT_EQ(Cli("replay --data-dir " + dir).exit_code, 2);  // which source's stream to print?

  // state --at on the store: the view of the source that decided the CronJob last (both did at
  // the same times here: the first by name), the other named beside it.
  const CliResult state =
      Cli("state " + cron_job + " --at " + scheduled + " -o json --data-dir " + dir);
  ASSERT_EQ(state.exit_code, 0) << state.out;
  const model::Json st = model::ParseJson(state.out).value()["items"][0];
  EXPECT_EQ(st["source"], "replica-a") << state.out;
  EXPECT_EQ(st["exists"], true);
  ASSERT_EQ(st["otherSources"].size(), 1u) << state.out;
  EXPECT_EQ(st["otherSources"][0]["source"], "replica-b");
  EXPECT_EQ(st["otherSources"][0]["exists"], true);
  EXPECT_TRUE(st["otherSources"][0]["lastDecision"].is_string()) << state.out;
  const CliResult state_text =
      Cli("state " + cron_job + " --at " + scheduled + " --data-dir " + dir);
  EXPECT_NE(state_text.out.find("From the ledger of source replica-a (the last to decide"),
            std::string::npos)
      << state_text.out;
  const model::Json single =
      model::ParseJson(Cli("state " + cron_job + " --at " + scheduled + " -o json --data-dir " +
                           dir + "/sources/replica-a")
                           .out)
          .value()["items"][0];
  EXPECT_EQ(single["viewSeq"], st["viewSeq"]);
  const CliResult table = Cli("audit --count -o csv --data-dir " + dir);
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find("action,reason,count"), std::string::npos) << table.out;
}

}  // namespace
}  // namespace cronledger::replay
