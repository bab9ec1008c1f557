// `cronledger run --kafka-watch-topic` (docs/kafka.md "Consuming the watch topic"): RunAssembly
// replicas that read the watch topic P.watch — written by the real watch relay from the fixture
// API server — instead of watching the API server, and act through the API server. The
// controller's time is a manual clock driven by the test (passes run on the test thread through
// Controller::RunReady); Kafka and HTTP run on real sockets.
//
//   fixture API server ─> WatchRelay ─> P.watch (mock cluster) ─> replica(s) ─> Jobs, status
//
// Shown: the Jobs are created; a batch's offsets are in the ledger with its inputs, so a restart
// (with a different consumer group, whose Kafka offsets know nothing) resumes exactly there — no
// input twice, no Job twice; two replicas split the partitions, each acting only on its own
// CronJobs, and together create every Job exactly once, and after one leaves the other takes
// over its CronJobs, also while the leaving replica's create is still in flight (it ends in
// AlreadyExists, not a second Job); malformed messages are quarantined with reason and
// topic/partition/offset.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "app/support_kafka_relay.h"
#include "app/support_run.h"
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

constexpr int64_t kStart = 1704067200;  // 2024-01-01T00:00:00Z
constexpr int kPartitions = 4;

std::string JobName(const std::string& cron_job, int64_t unix_seconds) {
  return cron_job + "-" + std::to_string(unix_seconds / 60);
}

Json CronJob(const std::string& ns, const std::string& name) {
  return kafka_testing::CronJobManifest(ns, name, "*/5 * * * *", "Allow");
}

// One `cronledger run --kafka-watch-topic` replica: its own ledger, API client and assembly.
struct Replica {
  std::unique_ptr<store::Ledger> ledger;
  std::unique_ptr<kube::PocoKubeClient> client;
  std::unique_ptr<app::RunAssembly> assembly;
  std::string agent;  // the client's user agent: tells its requests apart in the server's log

  controller::Controller& controller() { return assembly->controller(); }
  const ingest::KafkaEventSource& source() { return *assembly->kafka_source(); }
  // Per (kind, namespace/name, resourceVersion, type): how often the input log holds it.
  std::map<std::string, int> WatchInputs() {
    std::map<std::string, int> out;
    EXPECT_TRUE(
        ledger
            ->ScanInputs(1, false,
                         [&](const store::LogRecord& r) {
                           const auto* e = std::get_if<model::WatchEvent>(&r.input);
                           if (e != nullptr && !e->name.empty()) {
                             ++out[std::string(model::ObjectKindName(e->kind)) + " " +
                                   e->namespace_ + "/" + e->name + " @" + e->resource_version +
                                   " " + std::to_string(static_cast<int>(e->type))];
                           }
                           return true;
                         })
            .ok());
    return out;
  }
};

class KafkaRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kube::testing::FakeApiServerOptions options;
    options.now = [this] { return clock_.Now().TruncateToSecond(); };
    server_ = kube::testing::FakeApiServer::Start(options).value();
    client_ = NewClient("test/1");
    cluster_.CreateTopic(topic_, kPartitions);
    tzdb_ = model::OpenSystemTimeZoneDb({}).value();
  }

  void TearDown() override {
    a_.reset();
    b_.reset();
    StopRelay();
  }

  std::unique_ptr<kube::PocoKubeClient> NewClient(const std::string& agent) {
    kube::PocoKubeClientOptions o;
    o.user_agent = agent;
    o.config.server = server_->url();
    o.clock = &kube_clock_;
    o.sleeper = &sleeper_;
    o.request_timeout = request_timeout_;
    o.qps = 0;
    return kube::PocoKubeClient::Open(o).value();
  }

  void StartRelay() {
    app::RelayConfig c;
    c.resource = kube::BatchCronJobs();
    c.producer.brokers = cluster_.bootstraps();
    c.producer.log = kafka_testing::Quiet;
    c.topic = topic_;
    c.reflector.stall_timeout = 20s;
    relay_client_ = NewClient("relay/1");
    relay_ = std::make_unique<app::WatchRelay>(c, *relay_client_, sleeper_, kube_clock_, nullptr);
    relay_thread_ = std::thread([this] { relay_result_ = relay_->Run(relay_cancel_); });
  }

  void StopRelay() {
    if (!relay_thread_.joinable()) return;
    relay_cancel_.Cancel();
    relay_thread_.join();
    EXPECT_TRUE(relay_result_.ok()) << relay_result_.ToString();
  }

  std::unique_ptr<Replica> StartReplica(const std::string& dir, const std::string& agent,
                                        const std::string& group = "cronledger-run") {
    auto r = std::make_unique<Replica>();
    store::LedgerOptions lo;
    lo.path = dir;
    lo.sync = store::SyncMode::kNone;
    r->ledger = store::Ledger::Open(lo).value();
    r->agent = agent;
    r->client = NewClient(agent);
    app::RunConfig config;
    config.resource = kube::BatchCronJobs();
    config.workers = 1;
    config.kafka_poll_wait = 20ms;
    ingest::KafkaSourceOptions k;
    k.brokers = cluster_.bootstraps();
    k.topic = topic_;
    k.group_id = group;
    k.log = kafka_testing::Quiet;
    k.batch_messages = 50;
    k.properties = {{"partition.assignment.strategy", "cooperative-sticky"},
                    {"session.timeout.ms", "3000"},
                    {"heartbeat.interval.ms", "100"}};
    config.kafka_watch = k;
    app::RunParts parts{r->ledger.get(), r->client.get(), &sleeper_, &clock_,
                        &clock_,         tzdb_.get(),     {}};
    r->assembly = app::RunAssembly::Open(config, parts).value();
    EXPECT_TRUE(r->assembly->StartIngest().ok());
    return r;
  }

  // Runs the replicas' ready passes (and back-off retries due within 2 s of controller time)
  // until `done` holds; bounded in real time.
  bool Drive(const std::vector<Replica*>& replicas, const std::function<bool()>& done,
             std::chrono::seconds limit = 30s) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      size_t passes = 0;
      for (Replica* r : replicas) {
        auto n = r->controller().RunReady();
        EXPECT_TRUE(n.ok()) << n.status().ToString();
        passes += n.ok() ? *n : 0;
      }
      if (done()) return true;
      if (passes > 0) continue;
      for (Replica* r : replicas) {
        auto due = r->controller().NextDueNanos();
        if (due && *due - clock_.NowNanos() <= int64_t{2'000'000'000}) {
          clock_.Advance(Duration(std::max<int64_t>(*due - clock_.NowNanos(), 1'000'000)));
        }
      }
      std::this_thread::sleep_for(5ms);
    }
    return done();
  }

  // Replicas a_ and b_ each own some partitions, together all, and both have caught up.
  bool Split() {
    const auto pa = a_->source().AssignedPartitions();
    const auto pb = b_->source().AssignedPartitions();
    std::set<int32_t> all(pa.begin(), pa.end());
    all.insert(pb.begin(), pb.end());
    return !pa.empty() && !pb.empty() && all.size() == static_cast<size_t>(kPartitions) &&
           pa.size() + pb.size() == static_cast<size_t>(kPartitions) && a_->assembly->Synced() &&
           b_->assembly->Synced();
  }

  // The replica holds every CronJob `names` in its view at the server's resourceVersion.
  bool Holds(Replica& r, const std::vector<std::string>& names) {
    for (const std::string& name : names) {
      auto live = server_->Get(kube::BatchCronJobs(), "prod", name);
      auto held = r.ledger->GetObject(model::ObjectKind::kCronJob, "prod", name);
      if (!live || !held.ok() ||
          held->entry.resource_version != (*live)["metadata"]["resourceVersion"]) {
        return false;
      }
    }
    return true;
  }

  bool JobsExist(const std::vector<std::string>& names, int64_t slot) {
    for (const std::string& name : names) {
      if (!server_->Get(kube::BatchJobs(), "prod", JobName(name, slot))) return false;
    }
    return true;
  }

  // Job POSTs (answered 201) per agent.
  std::map<std::string, int> JobCreatesByAgent() {
    std::map<std::string, int> out;
    for (const auto& req : server_->requests()) {
      if (req.method == "POST" && req.status == 201 &&
          req.path.find("/jobs") != std::string::npos) {
        ++out[req.user_agent];
      }
    }
    return out;
  }

  // Every expected Job was created by exactly one 201, and nothing else was created.
  void ExpectEveryJobOnce(const std::vector<std::string>& names,
                          const std::vector<int64_t>& slots) {
    const auto creates = server_->creates(kube::BatchJobs());
    std::set<std::string> expected;
    for (const auto& name : names) {
      for (int64_t slot : slots) expected.insert("prod/" + JobName(name, slot));
    }
    for (const auto& [job, tally] : creates) {
      EXPECT_TRUE(expected.count(job)) << "unexpected Job " << job;
      EXPECT_EQ(tally.created, 1) << job;
    }
    for (const auto& job : expected) EXPECT_TRUE(creates.count(job)) << "missing Job " << job;
  }

  static void ExpectNoRepeatedInputs(Replica& r) {
    for (const auto& [event, n] : r.WatchInputs()) EXPECT_EQ(n, 1) << "input twice: " << event;
  }

  std::vector<std::string> CreateCronJobs(int from, int to) {
    std::vector<std::string> names;
    for (int i = from; i < to; ++i) {
      names.push_back("cj" + std::to_string(i));
      EXPECT_TRUE(server_->Create(kube::BatchCronJobs(), CronJob("prod", names.back())).ok());
    }
    return names;
  }

  ManualClock clock_{Time::FromUnix(kStart)};       // the controllers' (and the server's) time
  ManualClock kube_clock_{Time::FromUnix(kStart)};  // absorbs HTTP client back-off waits
  kube::testing::RecordingSleeper sleeper_{kube_clock_};
  std::unique_ptr<kube::testing::FakeApiServer> server_;
  std::unique_ptr<kube::PocoKubeClient> client_;
  std::unique_ptr<model::TimeZoneDb> tzdb_;
  MockCluster cluster_;
  const std::string topic_ = "cronledger.watch";
  std::unique_ptr<kube::PocoKubeClient> relay_client_;
  std::unique_ptr<app::WatchRelay> relay_;
  kube::Cancellation relay_cancel_;
  std::thread relay_thread_;
  Status relay_result_;
  store::testing::TempDir dir_;
  std::unique_ptr<Replica> a_;
  std::unique_ptr<Replica> b_;
  Duration request_timeout_ = 10s;  // of the clients made after it is set
};

TEST_F(KafkaRunTest, ConsumesTheWatchTopicCreatesTheJobsAndQuarantinesMalformedMessages) {
  const auto names = CreateCronJobs(0, 6);
  // Malformed messages among the relay's: not JSON, and a watch document of the wrong kind.
  kafka_testing::SyncProducer producer(cluster_.bootstraps());
  const auto bad = producer.Produce(
      topic_, {{"prod/cj0", "not json"},
               {"prod/cj1", R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod",)"
                            R"("metadata":{"name":"p","namespace":"prod"}}})"}});
  ASSERT_EQ(bad.size(), 2u);
  StartRelay();
  a_ = StartReplica(dir_.Sub("a"), "replica-a/1");
  ASSERT_TRUE(Drive({a_.get()}, [&] { return a_->assembly->Synced() && Holds(*a_, names); }))
      << "the replica did not catch up on the watch topic";
  EXPECT_EQ(a_->source().AssignedPartitions().size(), static_cast<size_t>(kPartitions));
  // /readyz: the watch-topic check replaces informers-synced, and passes once caught up.
  std::vector<std::string> checks;
  for (const auto& check : a_->assembly->ReadinessChecks()) {
    checks.push_back(check.name);
    EXPECT_TRUE(check.check().ok()) << check.name;
  }
  EXPECT_EQ(checks, (std::vector<std::string>{"ledger", "kafka-caught-up", "ingest"}));
  EXPECT_TRUE(server_->creates(kube::BatchJobs()).empty()) << "nothing was due yet";

  clock_.AdvanceTo(Time::FromUnix(kStart + 300 + 1));
  ASSERT_TRUE(Drive({a_.get()}, [&] { return JobsExist(names, kStart + 300); }));
  // The Jobs and the status updates come back through the relay and the topic.
  ASSERT_TRUE(Drive({a_.get()}, [&] {
    for (const auto& name : names) {
      auto jobs = a_->ledger->ListJobsByOwner("prod", name);
      if (!jobs.ok() || jobs->size() != 1) return false;
    }
    return Holds(*a_, names);
  }));
  ExpectEveryJobOnce(names, {kStart + 300});
  auto live = server_->Get(kube::BatchCronJobs(), "prod", "cj3");
  ASSERT_TRUE(live);
  EXPECT_EQ((*live)["status"]["lastScheduleTime"], "2024-01-01T00:05:00Z");

  // The two malformed messages: quarantined with the reason and where they were.
  auto quarantine = a_->ledger->ListQuarantine(0, 0);
  ASSERT_TRUE(quarantine.ok());
  ASSERT_EQ(quarantine->size(), 2u);
  std::map<std::string, store::QuarantineEntry> by_raw;
  for (const auto& q : *quarantine) by_raw[q.raw] = q;
  const std::string pod = R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"Pod",)"
                          R"("metadata":{"name":"p","namespace":"prod"}}})";
  ASSERT_TRUE(by_raw.count("not json") && by_raw.count(pod));
  EXPECT_EQ(by_raw["not json"].source,
            topic_ + "/" + std::to_string(bad[0].first) + "/" + std::to_string(bad[0].second));
  EXPECT_EQ(by_raw[pod].source,
            topic_ + "/" + std::to_string(bad[1].first) + "/" + std::to_string(bad[1].second));
  EXPECT_NE(by_raw["not json"].reason.find("malformed JSON"), std::string::npos)
      << by_raw["not json"].reason;
  EXPECT_NE(by_raw[pod].reason.find("Pod"), std::string::npos) << by_raw[pod].reason;
  EXPECT_EQ(a_->assembly->KafkaTotals().quarantined, 2u);
  EXPECT_EQ(a_->assembly->KafkaTotals().misrouted, 0u) << "the relay's partitioner is ours";

  // Every partition's offset is in the ledger: the next offset after what was read.
  for (const auto& [p, next] : a_->source().Assignment()) {
    auto stored = a_->ledger->GetSourcePosition(ingest::KafkaPartitionSource(topic_, p));
    ASSERT_TRUE(stored.ok()) << "partition " << p;
    EXPECT_EQ(ingest::DecodeKafkaPosition(*stored).value(), next);
  }
  ExpectNoRepeatedInputs(*a_);
  const std::string metrics = a_->assembly->RenderMetrics();
  EXPECT_NE(metrics.find("cronledger_kafka_watch_caught_up 1"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("cronledger_kafka_watch_quarantined_total 2"), std::string::npos);
}

TEST_F(KafkaRunTest, RestartResumesAtTheLedgersOffsetsWithoutRepeatsOrDuplicateJobs) {
  const auto first = CreateCronJobs(0, 4);
  StartRelay();
  a_ = StartReplica(dir_.Sub("a"), "replica-a/1", "group-one");
  ASSERT_TRUE(Drive({a_.get()}, [&] { return a_->assembly->Synced() && Holds(*a_, first); }));
  clock_.AdvanceTo(Time::FromUnix(kStart + 300 + 1));
  ASSERT_TRUE(Drive({a_.get()}, [&] { return JobsExist(first, kStart + 300); }));
  const std::map<int32_t, int64_t> before = a_->source().Assignment();

  // Stopped; meanwhile two CronJobs are created (the relay publishes them).
  a_.reset();
  const auto later = CreateCronJobs(4, 6);
  std::vector<std::string> all = first;
  all.insert(all.end(), later.begin(), later.end());

  // Restarted with ANOTHER consumer group: Kafka has no offsets for it, so only the ledger's
  // positions can make it resume where it stopped.
  a_ = StartReplica(dir_.Sub("a"), "replica-a/2", "group-two");
  ASSERT_TRUE(Drive({a_.get()}, [&] { return a_->assembly->Synced() && Holds(*a_, all); }));
  for (const auto& [p, next] : a_->source().Assignment()) {
    EXPECT_GE(next, before.at(p)) << "partition " << p;
  }
  // Nothing was read twice: no message below the stored offsets, no event already held.
  EXPECT_EQ(a_->assembly->KafkaTotals().skipped, 0u);
  clock_.AdvanceTo(Time::FromUnix(kStart + 600 + 1));
  ASSERT_TRUE(Drive({a_.get()}, [&] { return JobsExist(all, kStart + 600); }));
  ExpectNoRepeatedInputs(*a_);
  // Every Job exactly once: the first slot's by the first run only, the second slot's for all
  // six CronJobs (the later two were created after the first slot).
  const auto creates = server_->creates(kube::BatchJobs());
  for (const auto& [job, tally] : creates) EXPECT_EQ(tally.created, 1) << job;
  for (const auto& name : first) EXPECT_TRUE(creates.count("prod/" + JobName(name, kStart + 300)));
  for (const auto& name : all) EXPECT_TRUE(creates.count("prod/" + JobName(name, kStart + 600)));
  EXPECT_EQ(creates.size(), first.size() + all.size());
}

TEST_F(KafkaRunTest, TwoReplicasSplitThePartitionsAndTheSurvivorTakesOver) {
  const auto names = CreateCronJobs(0, 12);
  StartRelay();
  a_ = StartReplica(dir_.Sub("a"), "replica-a/1");
  b_ = StartReplica(dir_.Sub("b"), "replica-b/1");
  ASSERT_TRUE(Drive(
      {a_.get(), b_.get()}, [&] { return Split(); }, 60s))
      << "the replicas never shared";
  // Each CronJob is owned by exactly one replica.
  for (const auto& name : names) {
    EXPECT_NE(a_->source().OwnsKey("prod/" + name), b_->source().OwnsKey("prod/" + name)) << name;
  }

  clock_.AdvanceTo(Time::FromUnix(kStart + 300 + 1));
  ASSERT_TRUE(Drive({a_.get(), b_.get()}, [&] { return JobsExist(names, kStart + 300); }));
  ExpectEveryJobOnce(names, {kStart + 300});
  auto by_agent = JobCreatesByAgent();
  EXPECT_GT(by_agent["replica-a/1"], 0);
  EXPECT_GT(by_agent["replica-b/1"], 0);
  EXPECT_EQ(by_agent["replica-a/1"] + by_agent["replica-b/1"], static_cast<int>(names.size()));
  // Since the split, a replica's passes (Ticks) are only for its own CronJobs.
  for (Replica* r : {a_.get(), b_.get()}) {
    ASSERT_TRUE(r->ledger
                    ->ScanInputs(1, false,
                                 [&](const store::LogRecord& rec) {
                                   const auto* t = std::get_if<model::Tick>(&rec.input);
                                   if (t != nullptr && t->now >= Time::FromUnix(kStart + 300)) {
                                     EXPECT_TRUE(r->source().OwnsKey(t->namespace_ + "/" + t->name))
                                         << r->agent << " ticked " << t->name;
                                   }
                                   return true;
                                 })
                    .ok());
  }

  // B leaves: A takes over B's partitions, catches up on them and acts for their CronJobs.
  b_.reset();
  ASSERT_TRUE(Drive(
      {a_.get()},
      [&] {
        return a_->source().AssignedPartitions().size() == static_cast<size_t>(kPartitions) &&
               a_->assembly->Synced() && Holds(*a_, names);
      },
      60s))
      << "the survivor did not take over";
  clock_.AdvanceTo(Time::FromUnix(kStart + 600 + 1));
  ASSERT_TRUE(Drive({a_.get()}, [&] { return JobsExist(names, kStart + 600); }));
  ExpectEveryJobOnce(names, {kStart + 300, kStart + 600});
  EXPECT_EQ(JobCreatesByAgent()["replica-a/1"], by_agent["replica-a/1"] + 12);
  ExpectNoRepeatedInputs(*a_);
}

// The old owner's create is in flight when its partitions move. B's pass has recorded its
// intent and waits on the API server for the Job create (held by the fixture before it takes
// effect) when B shuts down: leaving the group hands B's partitions to A, which catches up and
// creates that Job itself. B's create then goes through and is answered AlreadyExists — Job
// names are deterministic — which B records as the outcome. One Job, not two; each ledger holds
// what its own replica did; B acts for nothing it no longer owns.
TEST_F(KafkaRunTest, ACreateInFlightWhenItsPartitionsMoveMakesNoSecondJob) {
  const auto names = CreateCronJobs(0, 8);
  StartRelay();
  a_ = StartReplica(dir_.Sub("a"), "replica-a/1");
  // B's client waits for its held create as long as the takeover may take (seconds, with the
  // group's rebalances) instead of giving up and recording an unknown fate.
  request_timeout_ = 120s;
  b_ = StartReplica(dir_.Sub("b"), "replica-b/1");
  ASSERT_TRUE(Drive(
      {a_.get(), b_.get()}, [&] { return Split(); }, 60s))
      << "the replicas never shared";

  // B's passes run on a thread of their own; its first Job create waits at the server.
  server_->HoldRequests("POST", "replica-b/");
  clock_.AdvanceTo(Time::FromUnix(kStart + 300 + 1));
  std::optional<Result<size_t>> b_passes;
  std::thread b_thread([&] { b_passes.emplace(b_->controller().RunReady()); });
  struct ReleaseAndJoin {  // however the test ends, B's thread is released and joined
    kube::testing::FakeApiServer& server;
    std::thread& thread;
    ~ReleaseAndJoin() {
      server.ReleaseHeld();
      if (thread.joinable()) thread.join();
    }
  } release_and_join{*server_, b_thread};
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (server_->held_requests() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(2ms);
  }
  ASSERT_EQ(server_->held_requests(), 1) << "B's create never reached the server";
  std::string held_job;
  for (const auto& r : server_->requests()) {
    if (r.held) held_job = model::ParseJson(r.body).value()["metadata"]["name"];
  }
  ASSERT_FALSE(held_job.empty());
  ASSERT_FALSE(server_->Get(kube::BatchJobs(), "prod", held_job));

  // B shuts down with the create in flight; A takes over all partitions and creates every Job.
  b_->assembly->Stop();
  ASSERT_TRUE(Drive(
      {a_.get()},
      [&] {
        return a_->source().AssignedPartitions().size() == static_cast<size_t>(kPartitions) &&
               a_->assembly->Synced() && JobsExist(names, kStart + 300);
      },
      60s))
      << "A did not take over";
  EXPECT_EQ(server_->held_requests(), 1);  // B's create still waits: A made the held Job itself
  EXPECT_EQ(JobCreatesByAgent()["replica-a/1"], static_cast<int>(names.size()));

  // B's create goes through now: AlreadyExists, recorded in B's ledger as the create's outcome.
  server_->ReleaseHeld();
  b_thread.join();
  ASSERT_TRUE(b_passes.has_value());
  EXPECT_TRUE(b_passes->ok()) << b_passes->status().ToString();
  const auto creates = server_->creates(kube::BatchJobs());
  ASSERT_TRUE(creates.count("prod/" + held_job));
  EXPECT_EQ(creates.at("prod/" + held_job).created, 1);
  EXPECT_EQ(creates.at("prod/" + held_job).already_exists, 1);
  ExpectEveryJobOnce(names, {kStart + 300});
  int b_job_posts = 0;
  for (const auto& r : server_->requests()) {
    b_job_posts += r.method == "POST" && r.path.find("/jobs") != std::string::npos &&
                           r.user_agent.rfind("replica-b/", 0) == 0
                       ? 1
                       : 0;
  }
  EXPECT_EQ(b_job_posts, 1) << "B acted for CronJobs it no longer owns";
  std::vector<model::ActionOutcome> b_creates;
  ASSERT_TRUE(b_->ledger
                  ->ScanInputs(1, false,
                               [&](const store::LogRecord& rec) {
                                 const auto* o = std::get_if<model::ActionOutcome>(&rec.input);
                                 if (o != nullptr && o->verb == "create") b_creates.push_back(*o);
                                 return true;
                               })
                  .ok());
  ASSERT_EQ(b_creates.size(), 1u);
  EXPECT_EQ(b_creates[0].name, held_job);
  EXPECT_EQ(b_creates[0].result, "AlreadyExists");
  ExpectNoRepeatedInputs(*a_);
}

}  // namespace
}  // namespace cronledger
