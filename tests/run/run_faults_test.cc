// Faults survived end to end: dropped and stalled watches, 410 Expired with a relist, 409 on the
// status subresource, 429 and 5xx, slow responses beyond the client's timeout, and a restart that
// resumes from the stored resourceVersion.
#include "emit/kube_actuator.h"
#include "ingest/kube_source.h"
#include "tests/run/run_fixture.h"

namespace cronledger::app::testing {
namespace {

const kube::ResourceType& Crd() { return kube::CronledgerCronJobs(); }

// Watch events of the input log for (kind, name): "ADDED", "DELETED", ...
std::vector<std::string> LoggedTypes(store::Ledger& ledger, model::ObjectKind kind,
                                     const std::string& name) {
  std::vector<std::string> out;
  EXPECT_TRUE(ledger
                  .ScanInputs(1, false,
                              [&](const store::LogRecord& r) {
                                const auto* ev = std::get_if<model::WatchEvent>(&r.input);
                                if (ev && ev->kind == kind && ev->name == name) {
                                  out.emplace_back(model::WatchEventTypeName(ev->type));
                                }
                                return true;
                              })
                  .ok());
  return out;
}

TEST_F(RunFixture, DroppedWatchAndExpiryLoseNothingAndDuplicateNothing) {
  ASSERT_TRUE(server_->Create(Crd(), CronJobObject(Crd(), "ns", "a", "*/5 * * * *")).ok());
  StartAssembly(Config(Crd()));
  Settle(Crd());
  ASSERT_TRUE(server_->WaitForWatches(2, std::chrono::seconds(10)));

  // Cut mid-stream: the reflectors resume from their last version, nothing is listed again.
  server_->DropWatches();
  ASSERT_TRUE(server_->Create(Crd(), CronJobObject(Crd(), "ns", "b", "*/5 * * * *")).ok());
  Settle(Crd());
  EXPECT_EQ(LoggedTypes(*ledger_, model::ObjectKind::kCronJob, "b"),
            std::vector<std::string>{"ADDED"});

  // Compacted history: the watches get 410 Expired and relist; b's deletion and c's creation
  // reach the ledger whether they arrive as watch events or as the relist's difference.
  ASSERT_TRUE(server_->WaitForWatches(2, std::chrono::seconds(10)));
  const uint64_t relists_before = assembly_->IngestStats()[0].relists;
  server_->SetWatchesStalled(true);
  ASSERT_TRUE(server_->Delete(Crd(), "ns", "b").ok());
  ASSERT_TRUE(server_->Create(Crd(), CronJobObject(Crd(), "ns", "c", "*/5 * * * *")).ok());
  server_->Compact();
  server_->SetWatchesStalled(false);
  server_->ExpireWatches();
  Settle(Crd());
  EXPECT_TRUE(Eventually([&] { return assembly_->IngestStats()[0].relists > relists_before; }));
  EXPECT_EQ(LoggedTypes(*ledger_, model::ObjectKind::kCronJob, "b"),
            (std::vector<std::string>{"ADDED", "DELETED"}));
  EXPECT_EQ(LoggedTypes(*ledger_, model::ObjectKind::kCronJob, "c"),
            std::vector<std::string>{"ADDED"});

  // One Job per CronJob and slot, after all of it.
  clock_.AdvanceTo(Time::FromUnix(kStart + 5 * 60 + 1));
  Settle(Crd());
  server_->DropWatches();
  Settle(Crd());
  EXPECT_TRUE(server_->Get(kube::BatchJobs(), "ns", JobName("a", kStart + 300)));
  EXPECT_TRUE(server_->Get(kube::BatchJobs(), "ns", JobName("c", kStart + 300)));
  EXPECT_EQ(ViewJobCount(), 2u);
  int creates = 0;
  for (const auto& r : server_->requests()) {
    if (r.method == "POST" && r.path == kube::CollectionPath(kube::BatchJobs(), "ns")) ++creates;
  }
  EXPECT_EQ(creates, 2);
}

TEST_F(RunFixture, RestartResumesFromTheStoredResourceVersion) {
  ASSERT_TRUE(server_->Create(Crd(), CronJobObject(Crd(), "ns", "a", "*/5 * * * *")).ok());
  StartAssembly(Config(Crd()));
  Settle(Crd());
  assembly_.reset();
  auto stored =
      ingest::StoredResourceVersion(*ledger_, "cronledger.io/v1", model::ObjectKind::kCronJob);
  ASSERT_TRUE(stored.ok());
  ASSERT_FALSE(stored->empty());
  ledger_.reset();
  OpenLedger();

  // Changes while stopped: a new CronJob, and one deleted.
  ASSERT_TRUE(server_->Create(Crd(), CronJobObject(Crd(), "ns", "b", "*/5 * * * *")).ok());
  ASSERT_TRUE(server_->Delete(Crd(), "ns", "a").ok());
  server_->ClearRequests();
  StartAssembly(Config(Crd()));
  Settle(Crd());
  EXPECT_EQ(LoggedTypes(*ledger_, model::ObjectKind::kCronJob, "a"),
            (std::vector<std::string>{"ADDED", "DELETED"}));
  EXPECT_EQ(LoggedTypes(*ledger_, model::ObjectKind::kCronJob, "b"),
            std::vector<std::string>{"ADDED"});
  // The assembly never listed the resource again: it watched from the stored version.
  const std::string path = kube::CollectionPath(Crd(), "");
  int watches = 0;
  for (const auto& r : server_->requests()) {
    if (r.path != path || r.method != "GET" || r.user_agent != kAssemblyAgent) continue;
    EXPECT_NE(r.query.find("watch=1"), std::string::npos) << "listed: " << r.query;
    if (watches++ == 0) {
      EXPECT_NE(r.query.find("resourceVersion=" + *stored), std::string::npos) << r.query;
    }
  }
  EXPECT_GE(watches, 1);
}

TEST_F(RunFixture, StatusConflictIsRetriedWithAFreshReadAndTheSameStatus) {
  auto cj = server_->Create(Crd(), CronJobObject(Crd(), "ns", "a", "*/5 * * * *"));
  ASSERT_TRUE(cj.ok());
  Json stale = *cj;
  // Someone else writes first: our resourceVersion is stale now.
  Json other = *cj;
  other["spec"]["suspend"] = true;
  ASSERT_TRUE(server_->Update(Crd(), other).ok());
  stale["status"] = {{"lastScheduleTime", "2024-01-01T00:05:00Z"}};

  emit::ControllerMetrics metrics;
  emit::EventRecorder events(*client_, clock_, {});
  emit::KubeActuator actuator(*client_, events, metrics, {});
  server_->ClearRequests();
  model::ApiOutcome out =
      actuator.Perform({model::ApiVerb::kUpdateStatus, model::ApiKind::kCronJob, "ns", "a", stale});
  ASSERT_TRUE(out.ok()) << out.reason << ": " << out.message;
  EXPECT_EQ(out.object["status"]["lastScheduleTime"], "2024-01-01T00:05:00Z");
  EXPECT_EQ(out.object["spec"]["suspend"], true);  // the other writer's spec is kept
  std::vector<int> puts;
  for (const auto& r : server_->requests()) {
    if (r.method == "PUT") puts.push_back(r.status);
  }
  EXPECT_EQ(puts, (std::vector<int>{409, 200}));

  // A different incarnation is not overwritten.
  ASSERT_TRUE(server_->Delete(Crd(), "ns", "a").ok());
  ASSERT_TRUE(server_->Create(Crd(), CronJobObject(Crd(), "ns", "a", "*/5 * * * *")).ok());
  out =
      actuator.Perform({model::ApiVerb::kUpdateStatus, model::ApiKind::kCronJob, "ns", "a", stale});
  EXPECT_EQ(out.reason, "Conflict");
}

TEST_F(RunFixture, TooManyRequestsAndServerErrorsAreBackedOff) {
  ASSERT_TRUE(server_->Create(Crd(), CronJobObject(Crd(), "ns", "a", "*/5 * * * *")).ok());
  StartAssembly(Config(Crd()));
  Settle(Crd());
  // 429 on the create: the client waits Retry-After and repeats the POST.
  sleeper_.Clear();
  server_->FailNext(1, 429, 3, "POST");
  clock_.AdvanceTo(Time::FromUnix(kStart + 5 * 60 + 1));
  Settle(Crd());
  EXPECT_TRUE(server_->Get(kube::BatchJobs(), "ns", JobName("a", kStart + 300)));
  const auto waits = sleeper_.waits();
  EXPECT_NE(std::find(waits.begin(), waits.end(), Duration(std::chrono::seconds(3))), waits.end());

  // 500 on the next create: a POST is not repeated by the client; the pass fails (FailedCreate)
  // and the controller retries with back-off, creating the Job once.
  server_->FailNext(1, 500, std::nullopt, "POST");
  clock_.AdvanceTo(Time::FromUnix(kStart + 10 * 60 + 1));
  Settle(Crd());
  EXPECT_TRUE(server_->Get(kube::BatchJobs(), "ns", JobName("a", kStart + 600)));
  EXPECT_EQ(ViewJobCount(), 2u);
  auto events = client_->List(kube::Events(), "ns", {});
  ASSERT_TRUE(events.ok());
  std::vector<std::string> reasons;
  for (const Json& e : events->items) reasons.push_back(e["reason"]);
  EXPECT_NE(std::find(reasons.begin(), reasons.end(), "FailedCreate"), reasons.end());
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "SuccessfulCreate"), 2);
  EXPECT_GE(assembly_->controller().Stats().errors, 1u);
}

// Watch requests of the assembly for `type`: their queries, in order.
std::vector<std::string> AssemblyQueries(const kube::testing::FakeApiServer& server,
                                         const kube::ResourceType& type, const char* agent) {
  std::vector<std::string> out;
  for (const auto& r : server.requests()) {
    if (r.method == "GET" && r.path == kube::CollectionPath(type, "") && r.user_agent == agent) {
      out.push_back(r.query);
    }
  }
  return out;
}

TEST_F(RunFixture, StalledWatchIsDetectedAndResumedFromTheLastVersion) {
  ASSERT_TRUE(server_->Create(Crd(), CronJobObject(Crd(), "ns", "a", "*/5 * * * *")).ok());
  RunConfig config = Config(Crd());
  // Short, so the test is fast; idle watches (no bookmarks from the fixture) also end this way
  // and resume, which is harmless.
  config.reflector.stall_timeout = std::chrono::milliseconds(300);
  StartAssembly(config);
  Settle(Crd());
  ASSERT_TRUE(server_->WaitForWatches(2, std::chrono::seconds(10)));
  const std::string before = std::to_string(server_->resource_version());
  const uint64_t stalls_before = assembly_->IngestStats()[0].watch_stalls;
  server_->ClearRequests();

  // The open streams go silent for good (no event, no bookmark, no terminating chunk); the
  // creation of b is only ever seen if the silence is detected and the watch resumed.
  server_->StallOpenWatches();
  ASSERT_TRUE(server_->Create(Crd(), CronJobObject(Crd(), "ns", "b", "*/5 * * * *")).ok());
  Settle(Crd());
  EXPECT_EQ(LoggedTypes(*ledger_, model::ObjectKind::kCronJob, "b"),
            std::vector<std::string>{"ADDED"});
  EXPECT_GT(assembly_->IngestStats()[0].watch_stalls, stalls_before);
  // Resumed with a watch from the version before b, never a list.
  const std::vector<std::string> queries = AssemblyQueries(*server_, Crd(), kAssemblyAgent);
  ASSERT_FALSE(queries.empty());
  EXPECT_NE(queries[0].find("resourceVersion=" + before), std::string::npos) << queries[0];
  for (const std::string& q : queries) EXPECT_NE(q.find("watch=1"), std::string::npos) << q;

  // And the controller acts on b: one Job each at the next slot.
  clock_.AdvanceTo(Time::FromUnix(kStart + 5 * 60 + 1));
  Settle(Crd());
  EXPECT_TRUE(server_->Get(kube::BatchJobs(), "ns", JobName("a", kStart + 300)));
  EXPECT_TRUE(server_->Get(kube::BatchJobs(), "ns", JobName("b", kStart + 300)));
  EXPECT_EQ(ViewJobCount(), 2u);
}

TEST_F(RunFixture, SlowResponsesBeyondTheClientTimeoutLoseNothingAndDuplicateNothing) {
  ASSERT_TRUE(server_->Create(Crd(), CronJobObject(Crd(), "ns", "a", "*/5 * * * *")).ok());
  // The assembly's client gives up after 300 ms; the fixture holds answers back for 1.5 s.
  run_client_timeout_ = std::chrono::milliseconds(300);
  StartAssembly(Config(Crd()));
  Settle(Crd());

  // The create takes effect but its answer comes too late: the client times out, does not
  // repeat the POST (not idempotent), the pass fails (FailedCreate) and is retried; by then the
  // Job is in the view (or the retried POST gets AlreadyExists and adopts it). One Job.
  // The status PUT is slow too: the client times out and repeats it (idempotent); the repeat
  // meets a changed resourceVersion (409) and the actuator re-reads and writes the same status.
  server_->SlowNext(1, std::chrono::milliseconds(1500), "POST");
  server_->SlowNext(1, std::chrono::milliseconds(1500), "PUT");
  clock_.AdvanceTo(Time::FromUnix(kStart + 5 * 60 + 1));
  Settle(Crd(), std::chrono::minutes(1));
  const std::string name = JobName("a", kStart + 300);
  ASSERT_TRUE(server_->Get(kube::BatchJobs(), "ns", name));
  EXPECT_EQ(ViewJobCount(), 1u);
  const auto creates = server_->creates(kube::BatchJobs());
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_EQ(creates.at("ns/" + name).created, 1);
  const std::vector<std::string> job_events = LoggedTypes(*ledger_, model::ObjectKind::kJob, name);
  ASSERT_FALSE(job_events.empty());
  EXPECT_EQ(job_events.front(), "ADDED");
  EXPECT_EQ(std::count(job_events.begin(), job_events.end(), "ADDED"), 1);
  int slow = 0;
  for (const auto& r : server_->requests()) slow += r.delayed ? 1 : 0;
  EXPECT_EQ(slow, 2);
  EXPECT_GE(assembly_->controller().Stats().errors, 1u);
  std::optional<Json> live = server_->Get(Crd(), "ns", "a");
  ASSERT_TRUE(live.has_value());
  EXPECT_EQ((*live)["status"]["lastScheduleTime"], "2024-01-01T00:05:00Z");
  ASSERT_EQ((*live)["status"]["active"].size(), 1u);
  EXPECT_EQ((*live)["status"]["active"][0]["name"], name);

  // Slow GETs (the lists behind the next relist and the Job reads): retried by the client.
  server_->SlowNext(2, std::chrono::milliseconds(1500), "GET");
  server_->ExpireWatches();
  clock_.AdvanceTo(Time::FromUnix(kStart + 10 * 60 + 1));
  Settle(Crd(), std::chrono::minutes(1));
  EXPECT_TRUE(server_->Get(kube::BatchJobs(), "ns", JobName("a", kStart + 600)));
  EXPECT_EQ(ViewJobCount(), 2u);
  for (const auto& [key, tally] : server_->creates(kube::BatchJobs())) {
    EXPECT_EQ(tally.created, 1) << key;
  }
}

}  // namespace
}  // namespace cronledger::app::testing
