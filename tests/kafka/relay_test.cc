// The watch relay (`cronledger relay`, app/support_kafka_relay.h) between the fixture API server
// and the mock cluster: every change reaches the watch topic keyed by CronJob, a 410 relist and a
// restart publish what changed (deletions included) and nothing else again, and the topic
// consumed by ingest::KafkaEventSource rebuilds a view equal to the API server's state.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <thread>

#include "app/support_kafka_relay.h"
#include "emit/kafka_watch_relay.h"
#include "ingest/kafka_source.h"
#include "kube/poco_client.h"
#include "kube/testing/fake_api_server.h"
#include "kube/testing/recording_sleeper.h"
#include "model/json.h"
#include "store/test_util.h"
#include "tests/kafka/kafka_testing.h"

namespace cronledger {
namespace {

using kafka_testing::MockCluster;
using model::Json;
using namespace std::chrono_literals;

Json CronJob(const std::string& ns, const std::string& name, const std::string& schedule) {
  return kafka_testing::CronJobManifest(ns, name, schedule);
}

Json Job(const std::string& ns, const std::string& name, const Json& owner) {
  Json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", {{"name", name}, {"namespace", ns}}}};
  job["spec"]["template"]["spec"] = {
      {"restartPolicy", "Never"},
      {"containers", Json::array({{{"name", "c"}, {"image", "busybox"}}})}};
  if (!owner.is_null()) {
    Json ref = {{"apiVersion", "batch/v1"},
                {"kind", "CronJob"},
                {"name", owner["metadata"]["name"]},
                {"uid", owner["metadata"]["uid"]},
                {"controller", true}};
    job["metadata"]["ownerReferences"] = Json::array({ref});
  }
  return job;
}

// One watch document on the topic.
struct Doc {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  std::string type;
  std::string kind;
  std::string id;  // namespace/name
  std::string rv;
};

class RelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = kube::testing::FakeApiServer::Start({});
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    kube::PocoKubeClientOptions options;
    options.config.server = server_->url();
    options.clock = &clock_;
    options.sleeper = &sleeper_;
    options.request_timeout = 10s;
    options.qps = 0;
    client_ = kube::PocoKubeClient::Open(options).value();
    cluster_.CreateTopic(topic_, 3);
  }

  void TearDown() override { Stop(); }

  app::RelayConfig Config() {
    app::RelayConfig c;
    c.resource = kube::BatchCronJobs();
    c.producer.brokers = cluster_.bootstraps();
    c.producer.log = kafka_testing::Quiet;
    c.topic = topic_;
    c.reflector.stall_timeout = 20s;
    return c;
  }

  void Start() {
    relay_ = std::make_unique<app::WatchRelay>(Config(), *client_, sleeper_, clock_, nullptr);
    cancel_ = std::make_unique<kube::Cancellation>();
    thread_ = std::thread([this] { result_ = relay_->Run(*cancel_); });
  }

  void Stop() {
    if (!thread_.joinable()) return;
    cancel_->Cancel();
    thread_.join();
    EXPECT_TRUE(result_.ok()) << result_.ToString();
  }

  Json Create(const kube::ResourceType& type, const Json& object) {
    auto created = server_->Create(type, object);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    return created.ok() ? *created : Json();
  }

  std::vector<Doc> Docs() {
    std::vector<Doc> out;
    for (const auto& m : kafka_testing::ReadTopic(cluster_.bootstraps(), topic_, 3)) {
      const Json doc = model::ParseJson(m.value).value();
      const Json& object = doc["object"];
      const Json& meta = object["metadata"];
      out.push_back({m.partition, m.offset, m.key, doc["type"].get<std::string>(),
                     object["kind"].get<std::string>(),
                     meta.value("namespace", "") + "/" + meta.value("name", ""),
                     meta["resourceVersion"].get<std::string>()});
    }
    return out;
  }

  // Polls the topic until `pred(docs)` holds.
  bool TopicUntil(const std::function<bool(const std::vector<Doc>&)>& pred) {
    return kafka_testing::PollUntil([&] { return pred(Docs()); }, 30s);
  }

  // Has the topic published `kind` `id` at the server's current resourceVersion (or, when the
  // server no longer holds it, a DELETED as its last document)?
  bool Current(const std::vector<Doc>& docs, const kube::ResourceType& type, const std::string& ns,
               const std::string& name) {
    const Doc* last = nullptr;
    for (const Doc& d : docs) {
      if (d.kind == type.kind && d.id == ns + "/" + name) last = &d;
    }
    auto obj = server_->Get(type, ns, name);
    if (!obj) return last != nullptr && last->type == "DELETED";
    return last != nullptr && last->type != "DELETED" &&
           last->rv == (*obj)["metadata"]["resourceVersion"].get<std::string>();
  }

  // No object is published twice at one resourceVersion with the same type.
  static void ExpectNoRepeats(const std::vector<Doc>& docs) {
    std::set<std::string> seen;
    for (const Doc& d : docs) {
      if (d.type == "BOOKMARK") continue;
      EXPECT_TRUE(seen.insert(d.kind + " " + d.id + " " + d.rv + " " + d.type).second)
          << "repeated: " << d.type << " " << d.kind << " " << d.id << " @" << d.rv;
    }
  }

  ManualClock clock_{Time::FromUnix(1704067200)};
  kube::testing::RecordingSleeper sleeper_{clock_};
  std::unique_ptr<kube::testing::FakeApiServer> server_;
  std::unique_ptr<kube::PocoKubeClient> client_;
  MockCluster cluster_;
  const std::string topic_ = "cronledger.watch";
  std::unique_ptr<app::WatchRelay> relay_;
  std::unique_ptr<kube::Cancellation> cancel_;
  std::thread thread_;
  Status result_;
};

TEST_F(RelayTest, PublishesEveryChangeKeyedByCronJobAndResumesWithOnlyTheDifference) {
  const auto& cj_type = kube::BatchCronJobs();
  const auto& job_type = kube::BatchJobs();
  const Json a = Create(cj_type, CronJob("prod", "backup", "*/5 * * * *"));
  const Json b = Create(cj_type, CronJob("prod", "report", "0 * * * *"));
  Create(job_type, Job("prod", "backup-28401125", a));
  Create(job_type, Job("prod", "report-28401160", b));
  Create(job_type, Job("prod", "orphan", Json()));
  Start();
  auto all_current = [&](const std::vector<Doc>& docs) {
    return Current(docs, cj_type, "prod", "backup") && Current(docs, cj_type, "prod", "report") &&
           Current(docs, job_type, "prod", "backup-28401125") &&
           Current(docs, job_type, "prod", "report-28401160") &&
           Current(docs, job_type, "prod", "orphan");
  };
  ASSERT_TRUE(TopicUntil(all_current));
  // Keys: a CronJob and its Jobs share one; an orphan Job has its own; checkpoints "/".
  for (const Doc& d : Docs()) {
    if (d.type == "BOOKMARK") {
      EXPECT_EQ(d.key, "/");
    } else if (d.id == "prod/backup-28401125") {
      EXPECT_EQ(d.key, "prod/backup");
    } else if (d.id == "prod/report-28401160") {
      EXPECT_EQ(d.key, "prod/report");
    } else {
      EXPECT_EQ(d.key, d.id);
    }
  }

  // Live changes, then a 410: changes made while the watch is gone reach the topic by the relist.
  Json changed = *server_->Get(cj_type, "prod", "backup");
  changed["spec"]["schedule"] = "*/10 * * * *";
  ASSERT_TRUE(server_->Update(cj_type, changed).ok());
  ASSERT_TRUE(server_->Delete(job_type, "prod", "orphan").ok());
  ASSERT_TRUE(TopicUntil(all_current));
  server_->SetWatchesStalled(true);
  Create(job_type, Job("prod", "backup-28401130", a));
  ASSERT_TRUE(server_->Delete(job_type, "prod", "report-28401160").ok());
  server_->Compact();
  server_->SetWatchesStalled(false);
  server_->ExpireWatches();
  ASSERT_TRUE(TopicUntil([&](const std::vector<Doc>& docs) {
    return all_current(docs) && Current(docs, job_type, "prod", "backup-28401130");
  }));

  // Stopped: changes and deletions meanwhile are published by the next relay, which reads the
  // topic back and relists; unchanged objects are not published again.
  Stop();
  std::map<int32_t, int64_t> ends;  // per partition, the offset after the first relay's last
  for (const Doc& d : Docs()) ends[d.partition] = std::max(ends[d.partition], d.offset + 1);
  ASSERT_TRUE(server_->Delete(cj_type, "prod", "report").ok());
  Create(cj_type, CronJob("prod", "cleanup", "30 2 * * *"));
  Json job = *server_->Get(job_type, "prod", "backup-28401130");
  job["metadata"]["labels"] = {{"phase", "done"}};
  ASSERT_TRUE(server_->Update(job_type, job).ok());
  server_->Compact();
  Start();
  ASSERT_TRUE(TopicUntil([&](const std::vector<Doc>& docs) {
    return all_current(docs) && Current(docs, job_type, "prod", "backup-28401130") &&
           Current(docs, cj_type, "prod", "cleanup");
  }));
  Stop();
  const std::vector<Doc> docs = Docs();
  ExpectNoRepeats(docs);
  std::set<std::string> republished;
  for (const Doc& d : docs) {
    if (d.type != "BOOKMARK" && d.offset >= ends[d.partition]) {
      republished.insert(d.type + " " + d.id);
    }
  }
  EXPECT_EQ(republished, (std::set<std::string>{"DELETED prod/report", "ADDED prod/cleanup",
                                                "MODIFIED prod/backup-28401130"}));
  EXPECT_EQ(relay_->stats().state_objects, 4u);  // backup, report, 2 Jobs of backup

  // The topic, consumed, gives a view equal to the server's state.
  store::testing::TempDir dir;
  store::LedgerOptions lo;
  lo.path = dir.Sub("ledger");
  lo.sync = store::SyncMode::kNone;
  auto ledger = store::Ledger::Open(lo).value();
  ingest::KafkaSourceOptions so;
  so.brokers = cluster_.bootstraps();
  so.topic = topic_;
  so.log = kafka_testing::Quiet;
  auto source = ingest::KafkaEventSource::Open(*ledger, so).value();
  ASSERT_TRUE(kafka_testing::PollUntil([&] {
    EXPECT_TRUE(source->Poll(50ms).ok());
    uint64_t next = 0;
    for (const auto& [p, offset] : source->Assignment()) next += static_cast<uint64_t>(offset);
    return next == docs.size();
  }));
  for (const auto* type : {&cj_type, &job_type}) {
    const auto kind = type == &cj_type ? model::ObjectKind::kCronJob : model::ObjectKind::kJob;
    for (const std::string name : {"backup", "report", "cleanup", "backup-28401125",
                                   "backup-28401130", "report-28401160", "orphan"}) {
      auto in_server = server_->Get(*type, "prod", name);
      auto in_view = ledger->GetObject(kind, "prod", name);
      ASSERT_EQ(in_server.has_value(), in_view.ok()) << type->kind << " " << name;
      if (in_server) {
        EXPECT_EQ(in_view->entry.resource_version,
                  (*in_server)["metadata"]["resourceVersion"].get<std::string>());
      }
    }
  }
}

TEST_F(RelayTest, ConsumersDropRepeatedEventsByResourceVersion) {
  // Two relays during a rollout publish the same events twice; the consumer's view and input log
  // take each once.
  const auto& cj_type = kube::BatchCronJobs();
  const Json a = Create(cj_type, CronJob("prod", "backup", "*/5 * * * *"));
  Create(kube::BatchJobs(), Job("prod", "backup-28401125", a));
  Start();
  ASSERT_TRUE(TopicUntil([&](const std::vector<Doc>& docs) {
    return Current(docs, cj_type, "prod", "backup") &&
           Current(docs, kube::BatchJobs(), "prod", "backup-28401125");
  }));
  Stop();
  std::vector<std::pair<std::string, std::string>> again;
  for (const auto& m : kafka_testing::ReadTopic(cluster_.bootstraps(), topic_, 3)) {
    again.emplace_back(m.key, m.value);
  }
  kafka_testing::ProduceSync(cluster_.bootstraps(), topic_, again);
  ASSERT_TRUE(server_->Delete(kube::BatchJobs(), "prod", "backup-28401125").ok());
  Start();
  ASSERT_TRUE(TopicUntil([&](const std::vector<Doc>& docs) {
    return Current(docs, kube::BatchJobs(), "prod", "backup-28401125");
  }));
  Stop();
  const size_t total = Docs().size();
  // Also a repeated DELETED (the relay after a crash before its state read saw it).
  kafka_testing::ProduceSync(
      cluster_.bootstraps(), topic_,
      {{"prod/backup", R"({"type":"DELETED","object":{"apiVersion":"batch/v1","kind":"Job",)"
                       R"("metadata":{"name":"backup-28401125","namespace":"prod","uid":"u",)"
                       R"("resourceVersion":"1"}}})"}});

  store::testing::TempDir dir;
  store::LedgerOptions lo;
  lo.path = dir.Sub("ledger");
  lo.sync = store::SyncMode::kNone;
  auto ledger = store::Ledger::Open(lo).value();
  ingest::KafkaSourceOptions so;
  so.brokers = cluster_.bootstraps();
  so.topic = topic_;
  so.log = kafka_testing::Quiet;
  auto source = ingest::KafkaEventSource::Open(*ledger, so).value();
  uint64_t duplicates = 0;
  ASSERT_TRUE(kafka_testing::PollUntil([&] {
    auto p = source->Poll(50ms);
    EXPECT_TRUE(p.ok());
    if (p.ok()) duplicates += p->duplicates;
    uint64_t next = 0;
    for (const auto& [p2, offset] : source->Assignment()) next += static_cast<uint64_t>(offset);
    return next == total + 1;
  }));
  EXPECT_GE(duplicates, 3u);           // the CronJob's and Job's ADDED again, and the DELETED again
  std::map<std::string, int> applied;  // object@rv type -> count in the input log
  ASSERT_TRUE(ledger
                  ->ScanInputs(1, false,
                               [&](const store::LogRecord& r) {
                                 const auto& e = std::get<model::WatchEvent>(r.input);
                                 if (e.type != model::WatchEventType::kBookmark) {
                                   ++applied[std::string(model::WatchEventTypeName(e.type)) + " " +
                                             e.name + "@" + e.resource_version];
                                 }
                                 return true;
                               })
                  .ok());
  for (const auto& [what, n] : applied) EXPECT_EQ(n, 1) << what;
  EXPECT_FALSE(ledger->GetObject(model::ObjectKind::kJob, "prod", "backup-28401125").ok());
  EXPECT_TRUE(ledger->GetObject(model::ObjectKind::kCronJob, "prod", "backup").ok());
}

TEST_F(RelayTest, ABrokerOutageDelaysPublishingAndLosesOrRepeatsNothing) {
  const auto& cj_type = kube::BatchCronJobs();
  const Json a = Create(cj_type, CronJob("prod", "backup", "*/5 * * * *"));
  Start();
  ASSERT_TRUE(TopicUntil(
      [&](const std::vector<Doc>& docs) { return Current(docs, cj_type, "prod", "backup"); }));
  cluster_.SetAllBrokersDown(true);
  // Changes while no broker is reachable: the relay keeps watching and queues them.
  for (int i = 0; i < 5; ++i) {
    Create(kube::BatchJobs(), Job("prod", "backup-2840112" + std::to_string(i), a));
  }
  Json changed = *server_->Get(cj_type, "prod", "backup");
  changed["spec"]["suspend"] = true;
  ASSERT_TRUE(server_->Update(cj_type, changed).ok());
  ASSERT_TRUE(server_->Delete(kube::BatchJobs(), "prod", "backup-28401120").ok());
  cluster_.SetAllBrokersDown(false);
  ASSERT_TRUE(TopicUntil([&](const std::vector<Doc>& docs) {
    bool all = Current(docs, cj_type, "prod", "backup");
    for (int i = 0; i < 5; ++i) {
      all = all && Current(docs, kube::BatchJobs(), "prod", "backup-2840112" + std::to_string(i));
    }
    return all;
  }));
  Stop();
  EXPECT_EQ(relay_->stats().sessions, 1u);  // the outage did not end the session
  const auto docs = Docs();
  ExpectNoRepeats(docs);
  // Every Job's ADDED, the CronJob's two states and the deletion, each object's in watch order
  // (the CronJob and the Job watches are two streams: their relative order is not defined).
  std::vector<std::string> seen;
  for (const Doc& d : docs) {
    if (d.type != "BOOKMARK") seen.push_back(d.type + " " + d.id);
  }
  EXPECT_EQ(seen.size(), 1u + 5u + 1u + 1u);
  const auto at = [&](const std::string& what) {
    return std::find(seen.begin(), seen.end(), what) - seen.begin();
  };
  EXPECT_LT(at("ADDED prod/backup-28401120"), at("DELETED prod/backup-28401120"));
  EXPECT_LT(at("ADDED prod/backup"), at("MODIFIED prod/backup"));
  EXPECT_LT(at("MODIFIED prod/backup"), static_cast<std::ptrdiff_t>(seen.size()));
}

TEST_F(RelayTest, ResyncRepublishesEveryLiveObjectAndConsumersDropTheRepeats) {
  const auto& cj_type = kube::BatchCronJobs();
  const Json a = Create(cj_type, CronJob("prod", "backup", "*/5 * * * *"));
  Create(kube::BatchJobs(), Job("prod", "backup-28401125", a));
  Create(cj_type, CronJob("prod", "gone", "0 * * * *"));
  Start();
  ASSERT_TRUE(TopicUntil([&](const std::vector<Doc>& docs) {
    return Current(docs, cj_type, "prod", "backup") && Current(docs, cj_type, "prod", "gone") &&
           Current(docs, kube::BatchJobs(), "prod", "backup-28401125");
  }));
  Stop();
  std::map<int32_t, int64_t> ends;
  for (const Doc& d : Docs()) ends[d.partition] = std::max(ends[d.partition], d.offset + 1);
  ASSERT_TRUE(server_->Delete(cj_type, "prod", "gone").ok());
  // One resync session: every live object again, the deletion too.
  kube::Cancellation cancel;
  Status session;
  std::thread t([&] { session = relay_->RunSession(cancel, /*resync=*/true); });
  const bool republished = TopicUntil([&](const std::vector<Doc>& docs) {
    std::set<std::string> after;
    for (const Doc& d : docs) {
      if (d.type != "BOOKMARK" && d.offset >= ends[d.partition]) after.insert(d.type + " " + d.id);
    }
    return after == std::set<std::string>{"MODIFIED prod/backup", "MODIFIED prod/backup-28401125",
                                          "DELETED prod/gone"};
  });
  cancel.Cancel();
  t.join();
  ASSERT_TRUE(session.ok()) << session.ToString();
  ASSERT_TRUE(republished);
  EXPECT_EQ(relay_->stats().resyncs, 1u);

  // A consumer reading everything takes each object state once.
  const size_t total = Docs().size();
  store::testing::TempDir dir;
  store::LedgerOptions lo;
  lo.path = dir.Sub("ledger");
  lo.sync = store::SyncMode::kNone;
  auto ledger = store::Ledger::Open(lo).value();
  ingest::KafkaSourceOptions so;
  so.brokers = cluster_.bootstraps();
  so.topic = topic_;
  so.log = kafka_testing::Quiet;
  auto source = ingest::KafkaEventSource::Open(*ledger, so).value();
  uint64_t duplicates = 0;
  ASSERT_TRUE(kafka_testing::PollUntil([&] {
    auto p = source->Poll(50ms);
    EXPECT_TRUE(p.ok());
    if (p.ok()) duplicates += p->duplicates;
    uint64_t next = 0;
    for (const auto& [p2, offset] : source->Assignment()) next += static_cast<uint64_t>(offset);
    return next == total;
  }));
  EXPECT_EQ(duplicates, 2u);          // backup and its Job at the resourceVersions the view holds
  std::map<std::string, int> states;  // name@rv -> inputs
  ASSERT_TRUE(ledger
                  ->ScanInputs(1, false,
                               [&](const store::LogRecord& r) {
                                 const auto& e = std::get<model::WatchEvent>(r.input);
                                 if (e.type != model::WatchEventType::kBookmark &&
                                     e.type != model::WatchEventType::kDeleted) {
                                   ++states[e.name + "@" + e.resource_version];
                                 }
                                 return true;
                               })
                  .ok());
  for (const auto& [what, n] : states) EXPECT_EQ(n, 1) << what;
  EXPECT_FALSE(ledger->GetObject(model::ObjectKind::kCronJob, "prod", "gone").ok());
}

}  // namespace
}  // namespace cronledger
