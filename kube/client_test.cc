#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include "kube/testing/client_fixture.h"
#include "kube/testing/wire_json.h"

namespace cronledger::kube {
namespace {

using std::chrono::seconds;
using testing::FakeApiServerOptions;
using testing::KubeClientFixture;

class ClientTest : public KubeClientFixture {};

TEST_F(ClientTest, CreateGetAndServerFilledMetadata) {
  auto created = client_->Create(BatchJobs(), "default", JobObject("default", "hello"));
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  const Json& meta = created.value()["metadata"];
  EXPECT_EQ(meta["name"], "hello");
  EXPECT_EQ(meta["namespace"], "default");
  EXPECT_FALSE(meta["uid"].get<std::string>().empty());
  EXPECT_EQ(meta["resourceVersion"], "1001");
  EXPECT_EQ(meta["generation"], 1);
  EXPECT_TRUE(meta["creationTimestamp"].is_string());
  ASSERT_EQ(meta["managedFields"].size(), 1u);
  EXPECT_EQ(meta["managedFields"][0]["manager"], "cronledger");  // from the User-Agent
  EXPECT_EQ(meta["managedFields"][0]["operation"], "Update");
  const Json& spec = created.value()["spec"];
  EXPECT_EQ(spec["backoffLimit"], 6);
  EXPECT_EQ(spec["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"], meta["uid"]);
  EXPECT_EQ(spec["template"]["metadata"]["labels"]["job-name"], "hello");
  EXPECT_EQ(created.value()["status"], Json::object());

  auto got = client_->Get(BatchJobs(), "default", "hello");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got.value(), created.value());
}

TEST_F(ClientTest, GenerateName) {
  Json job = JobObject("default", "");
  job["metadata"].erase("name");
  job["metadata"]["generateName"] = "run-";
  auto created = client_->Create(BatchJobs(), "default", job);
  ASSERT_TRUE(created.ok());
  const std::string name = created.value()["metadata"]["name"];
  EXPECT_EQ(name.rfind("run-", 0), 0u);
  EXPECT_EQ(name.size(), 9u);
}

TEST_F(ClientTest, ErrorsCarryStatusReasons) {
  ASSERT_TRUE(client_->Create(BatchJobs(), "default", JobObject("default", "a")).ok());
  auto dup = client_->Create(BatchJobs(), "default", JobObject("default", "a"));
  ASSERT_FALSE(dup.ok());
  EXPECT_TRUE(dup.error().IsAlreadyExists());
  EXPECT_EQ(dup.error().code, 409);
  EXPECT_EQ(dup.error().message, "jobs.batch \"a\" already exists");
  EXPECT_EQ(dup.status().code(), Status::Code::kAlreadyExists);

  auto missing = client_->Get(BatchJobs(), "default", "nope");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.error().IsNotFound());
  EXPECT_EQ(missing.error().message, "jobs.batch \"nope\" not found");

  auto invalid = client_->Create(BatchJobs(), "default", JobObject("default", "Bad_Name"));
  ASSERT_FALSE(invalid.ok());
  EXPECT_EQ(invalid.error().code, 422);
  EXPECT_EQ(invalid.error().reason, "Invalid");
  ASSERT_EQ(invalid.error().causes.size(), 1u);
  EXPECT_EQ(invalid.error().causes[0].field, "metadata.name");

  server_->SetNamespaceTerminating("doomed", true);
  auto terminating = client_->Create(BatchJobs(), "doomed", JobObject("doomed", "x"));
  ASSERT_FALSE(terminating.ok());
  EXPECT_EQ(terminating.error().code, 403);
  EXPECT_EQ(terminating.error().OutcomeReason(), "NamespaceTerminating");
}

TEST_F(ClientTest, UpdateConflictAndStatusSubresource) {
  auto created = client_->Create(BatchCronJobs(), "default",
                                 {{"metadata", {{"name", "cj"}}},
                                  {"spec", {{"schedule", "*/5 * * * *"}, {"jobTemplate", {}}}}});
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  EXPECT_EQ(created.value()["spec"]["concurrencyPolicy"], "Allow");
  Json stale = created.value();

  Json status_update = created.value();
  status_update["status"] = {{"lastScheduleTime", "2024-01-01T00:05:00Z"}};
  status_update["spec"]["schedule"] = "ignored by the status subresource";
  auto updated = client_->UpdateStatus(BatchCronJobs(), "default", status_update);
  ASSERT_TRUE(updated.ok()) << updated.error().ToString();
  EXPECT_EQ(updated.value()["status"]["lastScheduleTime"], "2024-01-01T00:05:00Z");
  EXPECT_EQ(updated.value()["spec"]["schedule"], "*/5 * * * *");
  EXPECT_EQ(updated.value()["metadata"]["generation"], 1);
  EXPECT_NE(updated.value()["metadata"]["resourceVersion"], stale["metadata"]["resourceVersion"]);

  // The old resourceVersion is now stale: optimistic concurrency says Conflict.
  stale["status"] = {{"lastScheduleTime", "2024-01-01T00:10:00Z"}};
  auto conflict = client_->UpdateStatus(BatchCronJobs(), "default", stale);
  ASSERT_FALSE(conflict.ok());
  EXPECT_TRUE(conflict.error().IsConflict());

  // A main-resource update ignores status and bumps generation on a spec change.
  Json spec_update = updated.value();
  spec_update["spec"]["suspend"] = true;
  spec_update["status"] = Json::object();
  auto main = client_->Update(BatchCronJobs(), "default", spec_update);
  ASSERT_TRUE(main.ok());
  EXPECT_EQ(main.value()["metadata"]["generation"], 2);
  EXPECT_EQ(main.value()["status"]["lastScheduleTime"], "2024-01-01T00:05:00Z");

  // A no-op update keeps the resourceVersion.
  auto noop = client_->Update(BatchCronJobs(), "default", main.value());
  ASSERT_TRUE(noop.ok());
  EXPECT_EQ(noop.value()["metadata"]["resourceVersion"],
            main.value()["metadata"]["resourceVersion"]);
}

TEST_F(ClientTest, PatchMergeAndJson) {
  ASSERT_TRUE(client_
                  ->Create(Leases(), "kube-system",
                           {{"metadata", {{"name", "cronledger"}}},
                            {"spec", {{"holderIdentity", "a"}, {"leaseDurationSeconds", 15}}}})
                  .ok());
  auto merged = client_->Patch(Leases(), "kube-system", "cronledger", PatchType::kMerge,
                               {{"spec", {{"holderIdentity", "b"}}}}, "");
  ASSERT_TRUE(merged.ok()) << merged.error().ToString();
  EXPECT_EQ(merged.value()["spec"]["holderIdentity"], "b");
  EXPECT_EQ(merged.value()["spec"]["leaseDurationSeconds"], 15);
  auto json_patch = client_->Patch(
      Leases(), "kube-system", "cronledger", PatchType::kJson,
      Json::array({{{"op", "replace"}, {"path", "/spec/leaseDurationSeconds"}, {"value", 30}}}),
      "");
  ASSERT_TRUE(json_patch.ok());
  EXPECT_EQ(json_patch.value()["spec"]["leaseDurationSeconds"], 30);
  auto bad = client_->Patch(Leases(), "kube-system", "cronledger", PatchType::kJson,
                            Json::array({{{"op", "test"}, {"path", "/spec/x"}, {"value", 1}}}), "");
  EXPECT_FALSE(bad.ok());
}

TEST_F(ClientTest, DeleteBackgroundAndPreconditions) {
  auto created = client_->Create(BatchJobs(), "default", JobObject("default", "gone"));
  ASSERT_TRUE(created.ok());
  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "not-the-uid";
  auto refused = client_->Delete(BatchJobs(), "default", "gone", wrong_uid);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(refused.error().IsConflict());

  auto deleted = client_->Delete(BatchJobs(), "default", "gone", DeleteOptions{});
  ASSERT_TRUE(deleted.ok()) << deleted.error().ToString();
  EXPECT_EQ(deleted.value()["kind"], "Status");
  EXPECT_EQ(deleted.value()["status"], "Success");
  EXPECT_EQ(deleted.value()["details"]["uid"], created.value()["metadata"]["uid"]);
  const auto requests = server_->requests();
  EXPECT_NE(requests.back().body.find("\"propagationPolicy\":\"Background\""), std::string::npos);
  EXPECT_FALSE(server_->Get(BatchJobs(), "default", "gone").has_value());
  auto again = client_->Delete(BatchJobs(), "default", "gone", DeleteOptions{});
  EXPECT_TRUE(!again.ok() && again.error().IsNotFound());
}

TEST_F(ClientTest, JobsWithoutPolicyAreOrphanedThroughAFinalizer) {
  ASSERT_TRUE(client_->Create(BatchJobs(), "default", JobObject("default", "old")).ok());
  DeleteOptions legacy;
  legacy.propagation = PropagationPolicy::kServerDefault;
  auto deleted = client_->Delete(BatchJobs(), "default", "old", legacy);
  ASSERT_TRUE(deleted.ok());
  EXPECT_EQ(deleted.value()["metadata"]["finalizers"], Json::array({"orphan"}));
  EXPECT_TRUE(deleted.value()["metadata"]["deletionTimestamp"].is_string());
}

TEST_F(ClientTest, PaginatedListReadsOneSnapshot) {
  for (int i = 0; i < 7; ++i) {
    ASSERT_TRUE(server_
                    ->Create(BatchJobs(),
                             JobObject("ns" + std::to_string(i % 2), "job-" + std::to_string(i)))
                    .ok());
  }
  ListOptions options;
  options.limit = 3;
  auto first = client_->List(BatchJobs(), "", options);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->items.size(), 3u);
  EXPECT_FALSE(first->continue_token.empty());
  EXPECT_EQ(first->remaining_item_count, 4);
  EXPECT_FALSE(first->items[0].contains("kind"));  // built-in list items carry no TypeMeta
  // A change after the first page is not visible in later pages.
  ASSERT_TRUE(server_->Create(BatchJobs(), JobObject("ns1", "job-zz")).ok());
  model::WatchDecoder decoder;
  model::DecodedDocument all;
  auto snapshot = ListAllDecoded(*client_, BatchJobs(), "", options, decoder, &all);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot.value(), std::to_string(server_->resource_version()));
  EXPECT_EQ(all.events.size(), 8u);  // a fresh list sees the new one
  EXPECT_TRUE(all.rejections.empty());
  // Each item keeps the bytes the server sent, with the list's type in front of them: the bytes
  // the server sends for the object on its own.
  for (size_t i = 0; i < all.events.size(); ++i) {
    std::optional<Json> one =
        server_->Get(BatchJobs(), all.events[i].namespace_, all.events[i].name);
    ASSERT_TRUE(one.has_value());
    EXPECT_EQ(all.events[i].raw, testing::WireJson(*one));
    EXPECT_EQ(all.events[i].kind, model::ObjectKind::kJob);
  }
  ListOptions next = options;
  next.continue_token = first->continue_token;
  auto second = client_->List(BatchJobs(), "", next);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->resource_version, first->resource_version);
  auto third_opts = next;
  third_opts.continue_token = second->continue_token;
  auto third = client_->List(BatchJobs(), "", third_opts);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(first->items.size() + second->items.size() + third->items.size(), 7u);
  EXPECT_TRUE(third->continue_token.empty());

  // Once compacted, the continue token is too old: 410, and ListAll falls back to a full list.
  server_->Compact();
  auto expired = client_->List(BatchJobs(), "", next);
  ASSERT_FALSE(expired.ok());
  EXPECT_TRUE(expired.error().IsExpired());
  EXPECT_EQ(expired.error().reason, "Expired");

  ListOptions selected;
  selected.label_selector = "app=demo";
  auto in_ns = client_->List(BatchJobs(), "ns0", selected);
  ASSERT_TRUE(in_ns.ok());
  EXPECT_EQ(in_ns->items.size(), 4u);
}

TEST_F(ClientTest, RetriesTooManyRequestsHonouringRetryAfter) {
  server_->FailNext(3, 429, /*retry_after_seconds=*/2);
  server_->ClearRequests();
  auto created = client_->Create(BatchJobs(), "default", JobObject("default", "after-429"));
  ASSERT_TRUE(created.ok()) << created.error().ToString();
  EXPECT_EQ(server_->request_count(), 4u);
  EXPECT_EQ(sleeper_.waits(), (std::vector<Duration>{seconds(2), seconds(2), seconds(2)}));
}

TEST_F(ClientTest, ServerErrorsRetriedOnlyWhenIdempotent) {
  ASSERT_TRUE(server_->Create(BatchJobs(), JobObject("default", "x")).ok());
  server_->FailNext(2, 503);
  server_->ClearRequests();
  auto got = client_->Get(BatchJobs(), "default", "x");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(server_->request_count(), 3u);
  // No Retry-After: exponential back-off from 500 ms with deterministic jitter in [1, 1.5).
  const auto waits = sleeper_.waits();
  ASSERT_EQ(waits.size(), 2u);
  const std::string key = "GET /apis/batch/v1/namespaces/default/jobs/x";
  EXPECT_EQ(waits[0], JitteredBackoff(std::chrono::milliseconds(500), seconds(30), 0.5, key, 1));
  EXPECT_EQ(waits[1], JitteredBackoff(std::chrono::milliseconds(500), seconds(30), 0.5, key, 2));
  EXPECT_GE(waits[1], std::chrono::milliseconds(1000));

  sleeper_.Clear();
  server_->ClearRequests();
  server_->FailNext(1, 500);
  auto create = client_->Create(BatchJobs(), "default", JobObject("default", "y"));
  ASSERT_FALSE(create.ok());
  EXPECT_EQ(create.error().code, 500);
  EXPECT_EQ(server_->request_count(), 1u);  // a POST is never retried on 5xx
  EXPECT_TRUE(sleeper_.waits().empty());
}

TEST_F(ClientTest, GivesUpAfterMaxRetries) {
  server_->FailNext(100, 500);
  server_->ClearRequests();
  auto got = client_->Get(BatchJobs(), "default", "x");
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.error().reason, "InternalError");
  EXPECT_EQ(server_->request_count(), 6u);  // 1 + max_retries (5)
}

// The fixture's HoldRequests: a held write changes nothing until released, other methods and
// agents pass, and once released it is served as usual.
TEST_F(ClientTest, HeldRequestsTakeEffectOnlyOnceReleased) {
  server_->HoldRequests("POST", "cronledger");
  std::optional<KubeResult<Json>> created;
  std::thread poster([&] {
    created.emplace(client_->Create(BatchJobs(), "default", JobObject("default", "held")));
  });
  const auto deadline = std::chrono::steady_clock::now() + seconds(20);
  while (server_->held_requests() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  EXPECT_EQ(server_->held_requests(), 1);
  EXPECT_FALSE(server_->Get(BatchJobs(), "default", "held"));   // nothing took effect
  auto missing = client_->Get(BatchJobs(), "default", "held");  // GETs are not held
  EXPECT_TRUE(!missing.ok() && missing.error().IsNotFound());
  server_->ReleaseHeld();
  poster.join();
  ASSERT_TRUE(created.has_value());
  ASSERT_TRUE(created->ok()) << created->error().ToString();
  EXPECT_TRUE(server_->Get(BatchJobs(), "default", "held"));
  EXPECT_EQ(server_->held_requests(), 0);
  int held = 0;
  for (const auto& r : server_->requests()) held += r.held ? 1 : 0;
  EXPECT_EQ(held, 1);
}

class ThrottledClientTest : public KubeClientFixture {
  void Configure(PocoKubeClientOptions* options) override {
    options->qps = 5;
    options->burst = 2;
  }
};

TEST_F(ThrottledClientTest, QpsLimiterWaitsOnTheInjectedClock) {
  for (int i = 0; i < 5; ++i) {
    auto r = client_->Get(BatchJobs(), "default", "any");
    EXPECT_TRUE(!r.ok() && r.error().IsNotFound());
  }
  // Burst of 2, then one every 200 ms: each wait advances the manual clock it is measured on.
  using std::chrono::milliseconds;
  EXPECT_EQ(sleeper_.waits(),
            (std::vector<Duration>{milliseconds(200), milliseconds(200), milliseconds(200)}));
  EXPECT_EQ(server_->request_count(), 5u);
}

TEST_F(ThrottledClientTest, TheBackgroundClientSharesTheLimitAndOnlyTakesWholeTokens) {
  auto background = client_->Background();
  ASSERT_TRUE(background.ok()) << background.status().ToString();
  using std::chrono::milliseconds;
  // The background client spends the shared burst as the client would...
  for (int i = 0; i < 2; ++i) EXPECT_FALSE((*background)->Get(BatchJobs(), "default", "x").ok());
  EXPECT_TRUE(sleeper_.waits().empty());
  // ...so the client's next request waits for the refill: one bucket, not two.
  EXPECT_FALSE(client_->Get(BatchJobs(), "default", "x").ok());
  EXPECT_EQ(sleeper_.waits(), (std::vector<Duration>{milliseconds(200)}));
  // The bucket is empty again: the background request waits for a whole token (the order
  // against concurrent reservations is TokenBucketTest.TryTakeNeverGoesAheadOfAReservation).
  sleeper_.Clear();
  EXPECT_FALSE((*background)->Get(BatchJobs(), "default", "x").ok());
  EXPECT_EQ(sleeper_.waits(), (std::vector<Duration>{milliseconds(200)}));
  EXPECT_EQ(server_->request_count(), 4u);
}

class AuthClientTest : public KubeClientFixture {
 protected:
  FakeApiServerOptions ServerOptions() override {
    FakeApiServerOptions o;
    o.bearer_tokens = {"token-one", "token-two"};
    return o;
  }
  void Configure(PocoKubeClientOptions* options) override {
    options->config.token_file = token_path_;
  }
  void SetUp() override {
    token_path_ = ::testing::TempDir() + "/kube_client_token_" + std::to_string(::getpid());
    std::ofstream(token_path_) << "token-one\n";
    KubeClientFixture::SetUp();
  }
  void TearDown() override { std::remove(token_path_.c_str()); }
  std::string token_path_;
};

TEST_F(AuthClientTest, BearerTokenRotation) {
  EXPECT_TRUE(client_->List(BatchJobs(), "", {}).ok());
  {
    std::ofstream(token_path_ + ".new") << "token-two\n";
    std::rename((token_path_ + ".new").c_str(), token_path_.c_str());
  }
  EXPECT_TRUE(client_->List(BatchJobs(), "", {}).ok());
  {
    std::ofstream(token_path_ + ".new") << "revoked\n";
    std::rename((token_path_ + ".new").c_str(), token_path_.c_str());
  }
  auto denied = client_->List(BatchJobs(), "", {});
  ASSERT_FALSE(denied.ok());
  EXPECT_EQ(denied.error().code, 401);
  const auto requests = server_->requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].authorization, "Bearer token-one");
  EXPECT_EQ(requests[1].authorization, "Bearer token-two");
  EXPECT_EQ(requests[2].authorization, "Bearer revoked");
}

TEST(PocoKubeClientOpenTest, RejectsBadOptions) {
  ManualClock clock(Time::FromUnix(0));
  testing::RecordingSleeper sleeper(clock);
  PocoKubeClientOptions options;
  options.config.server = "http://127.0.0.1:1";
  EXPECT_FALSE(PocoKubeClient::Open(options).ok());  // no clock/sleeper
  options.clock = &clock;
  options.sleeper = &sleeper;
  options.config.server = "ftp://example";
  EXPECT_TRUE(PocoKubeClient::Open(options).status().IsInvalidArgument());
  options.config.server = "https://example:6443";
  options.config.ca_pem = "not a certificate";
  EXPECT_TRUE(PocoKubeClient::Open(options).status().IsInvalidArgument());
}

TEST(PocoKubeClientOpenTest, ConnectionRefusedIsATransportError) {
  ManualClock clock(Time::FromUnix(0));
  testing::RecordingSleeper sleeper(clock);
  PocoKubeClientOptions options;
  options.config.server = "http://127.0.0.1:1";
  options.clock = &clock;
  options.sleeper = &sleeper;
  options.retry.max_retries = 2;
  auto client = PocoKubeClient::Open(options);
  ASSERT_TRUE(client.ok());
  auto r = client.value()->Get(BatchJobs(), "default", "x");
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().IsTransport());
  EXPECT_EQ(sleeper.waits().size(), 2u);  // GET is idempotent: retried twice
}

}  // namespace
}  // namespace cronledger::kube

namespace cronledger::kube {
namespace {

// Answers ListBytes from a script, to drive ListAllDecoded's paging and its expired-token
// fallback.
class ScriptedListClient : public KubeClient {
 public:
  std::vector<KubeResult<std::string>> script;
  std::vector<ListOptions> calls;

  KubeResult<std::string> ListBytes(const ResourceType&, std::string_view,
                                    const ListOptions& options) override {
    calls.push_back(options);
    KubeResult<std::string> next = script.front();
    script.erase(script.begin());
    return next;
  }
  KubeResult<ObjectList> List(const ResourceType&, std::string_view, const ListOptions&) override {
    return TransportError("unused");
  }
  KubeResult<Json> Get(const ResourceType&, std::string_view, std::string_view) override {
    return TransportError("unused");
  }
  KubeResult<Json> Create(const ResourceType&, std::string_view, const Json&) override {
    return TransportError("unused");
  }
  KubeResult<Json> Update(const ResourceType&, std::string_view, const Json&) override {
    return TransportError("unused");
  }
  KubeResult<Json> UpdateStatus(const ResourceType&, std::string_view, const Json&) override {
    return TransportError("unused");
  }
  KubeResult<Json> Patch(const ResourceType&, std::string_view, std::string_view, PatchType,
                         const Json&, std::string_view) override {
    return TransportError("unused");
  }
  KubeResult<Json> Delete(const ResourceType&, std::string_view, std::string_view,
                          const DeleteOptions&) override {
    return TransportError("unused");
  }
  KubeResult<WatchResult> Watch(const ResourceType&, std::string_view, const WatchOptions&,
                                const WatchHandler&) override {
    return TransportError("unused");
  }
};

std::string Page(std::string rv, std::string token, std::vector<std::string> names) {
  Json list = {{"kind", "JobList"},
               {"apiVersion", "batch/v1"},
               {"metadata", {{"resourceVersion", rv}, {"continue", token}}},
               {"items", Json::array()}};
  for (const std::string& n : names) {
    list["items"].push_back({{"metadata", {{"name", n}, {"namespace", "ns"}, {"uid", "u-" + n}}}});
  }
  return list.dump();
}

TEST(ListAllTest, PagesThenFallsBackToAFullListWhenTheTokenExpires) {
  ScriptedListClient client;
  client.script = {Page("10", "t1", {"a", "b"}),
                   ApiErrorFromResponse(410, R"({"kind":"Status","reason":"Expired","code":410})"),
                   Page("12", "", {"a", "b", "c"})};
  ListOptions options;
  options.limit = 2;
  model::WatchDecoder decoder;
  model::DecodedDocument all;
  auto snapshot = ListAllDecoded(client, BatchJobs(), "", options, decoder, &all);
  ASSERT_TRUE(snapshot.ok());
  EXPECT_EQ(snapshot.value(), "12");
  EXPECT_EQ(all.events.size(), 3u);  // the first page's items are not kept twice
  ASSERT_EQ(client.calls.size(), 3u);
  EXPECT_EQ(client.calls[1].continue_token, "t1");
  EXPECT_EQ(client.calls[2].limit, 0);
  EXPECT_TRUE(client.calls[2].continue_token.empty());
}

TEST(ListAllTest, FirstPageErrorsAreReturned) {
  ScriptedListClient client;
  client.script = {ApiErrorFromResponse(403, R"({"kind":"Status","reason":"Forbidden"})")};
  model::WatchDecoder decoder;
  model::DecodedDocument all;
  auto snapshot = ListAllDecoded(client, BatchJobs(), "", ListOptions{}, decoder, &all);
  ASSERT_FALSE(snapshot.ok());
  EXPECT_EQ(snapshot.error().reason, "Forbidden");
}

TEST(ListAllTest, APageThatIsNotAListIsAnError) {
  ScriptedListClient client;
  client.script = {std::string("{not json")};
  model::WatchDecoder decoder;
  model::DecodedDocument all;
  auto snapshot = ListAllDecoded(client, BatchJobs(), "", ListOptions{}, decoder, &all);
  ASSERT_FALSE(snapshot.ok());
  EXPECT_NE(snapshot.error().message.find("list response: malformed JSON"), std::string::npos)
      << snapshot.error().ToString();
}

}  // namespace
}  // namespace cronledger::kube
