#pragma once

// A FakeApiServer, a PocoKubeClient on it, a RocksDB ledger in a temporary directory and a
// RunAssembly, with two manual clocks: `clock_` drives the controller (and stamps the fixture's
// creationTimestamps), `kube_clock_` absorbs the client's and reflectors' back-off waits (the
// RecordingSleeper advances it) so that retries never move the controller's time.
// Ingest runs on the reflectors' threads over real sockets; the controller's passes run on the
// test thread (Controller::RunReady), so tests wait for ingest with a bounded poll and drive time
// explicitly.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "app/support_run.h"
#include "kube/poco_client.h"
#include "kube/testing/fake_api_server.h"
#include "kube/testing/recording_sleeper.h"
#include "model/timezone.h"
#include "store/ledger.h"

namespace cronledger::app::testing {

using model::Json;

inline constexpr int64_t kStart = 1704067200;  // 2024-01-01T00:00:00Z

// "2024-01-01T00:05:00Z" → "<name>-28401125" (docs/semantics.md §8: Unix minutes).
inline std::string JobName(const std::string& cron_job, int64_t unix_seconds) {
  return cron_job + "-" + std::to_string(unix_seconds / 60);
}

inline Json CronJobObject(const kube::ResourceType& type, const std::string& ns,
                          const std::string& name, const std::string& schedule) {
  Json container = {{"name", "c"}, {"image", "busybox:1.36"}};
  Json tmpl;
  tmpl["metadata"] = {{"labels", {{"app", name}}}, {"annotations", {{"team", "ops"}}}};
  tmpl["spec"]["template"]["spec"] = {{"restartPolicy", "Never"},
                                      {"containers", Json::array({container})}};
  Json cj = {{"apiVersion", type.ApiVersion()}, {"kind", "CronJob"}};
  cj["metadata"] = {{"name", name}, {"namespace", ns}};
  cj["spec"] = {{"schedule", schedule},
                {"concurrencyPolicy", "Allow"},
                {"suspend", false},
                {"successfulJobsHistoryLimit", 3},
                {"failedJobsHistoryLimit", 1},
                {"jobTemplate", tmpl}};
  return cj;
}

class RunFixture : public ::testing::Test {
 protected:
  static constexpr const char* kAssemblyAgent = "assembly/1";

  void SetUp() override {
    kube::testing::FakeApiServerOptions server_options;
    server_options.now = [this] { return clock_.Now().TruncateToSecond(); };
    auto server = kube::testing::FakeApiServer::Start(server_options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    client_ = NewClient();
    ASSERT_NE(client_, nullptr);
    std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : test) {
      if (c == '/') c = '_';  // parameterized names
    }
    dir_ = std::filesystem::temp_directory_path() /
           ("cronledger-run-" + std::to_string(::getpid()) + "-" + test);
    std::filesystem::remove_all(dir_);
    OpenLedger();
    auto tzdb = model::OpenSystemTimeZoneDb({});
    ASSERT_TRUE(tzdb.ok()) << tzdb.status().ToString();
    tzdb_ = std::move(tzdb).value();
  }

  void TearDown() override {
    assembly_.reset();
    run_client_.reset();
    ledger_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::unique_ptr<kube::PocoKubeClient> NewClient(const std::string& user_agent = "test/1",
                                                  Duration timeout = std::chrono::seconds(10)) {
    kube::PocoKubeClientOptions options;
    options.user_agent = user_agent;
    options.config.server = server_->url();
    options.clock = &kube_clock_;
    options.sleeper = &sleeper_;
    options.request_timeout = timeout;
    options.qps = 0;
    auto client = kube::PocoKubeClient::Open(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(client).value() : nullptr;
  }

  void OpenLedger() {
    store::LedgerOptions options;
    options.path = dir_.string();
    options.sync = store::SyncMode::kNone;
    auto ledger = store::Ledger::Open(options);
    ASSERT_TRUE(ledger.ok()) << ledger.status().ToString();
    ledger_ = std::move(ledger).value();
  }

  RunConfig Config(const kube::ResourceType& resource) {
    RunConfig config;
    config.resource = resource;
    config.workers = 1;
    config.reflector.stall_timeout = std::chrono::seconds(20);
    return config;
  }

  void StartAssembly(const RunConfig& config) {
    // Its own client, so the fixture's request log tells its requests from the test's.
    run_client_ = NewClient(kAssemblyAgent, run_client_timeout_);
    ASSERT_NE(run_client_, nullptr);
    RunParts parts{ledger_.get(), run_client_.get(), &sleeper_, &clock_, &clock_, tzdb_.get(), {}};
    auto assembly = RunAssembly::Open(config, parts);
    ASSERT_TRUE(assembly.ok()) << assembly.status().ToString();
    assembly_ = std::move(assembly).value();
    ASSERT_TRUE(assembly_->StartIngest().ok());
  }

  // Polls `pred` (real time, bounded): ingest runs on other threads over sockets.
  static bool Eventually(const std::function<bool()>& pred,
                         std::chrono::seconds limit = std::chrono::seconds(20)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < deadline) {
      if (pred()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return pred();
  }

  // The ledger's view holds every CronJob (of `type`) and Job the fixture holds, at the same
  // resourceVersion, and nothing else.
  bool Synced(const kube::ResourceType& type) {
    for (const auto* t : {&type, &kube::BatchJobs()}) {
      auto list = client_->List(*t, "", {});
      if (!list.ok()) return false;
      const auto kind = t == &type ? model::ObjectKind::kCronJob : model::ObjectKind::kJob;
      for (const Json& item : list->items) {
        const Json& m = item["metadata"];
        auto obj = ledger_->GetObject(kind, m["namespace"].get<std::string>(),
                                      m["name"].get<std::string>());
        if (!obj.ok() || obj->entry.resource_version != m["resourceVersion"].get<std::string>()) {
          return false;
        }
      }
      if (kind == model::ObjectKind::kCronJob) {
        auto entries = ledger_->ListCronJobEntries();
        if (!entries.ok() || entries->size() != list->items.size()) return false;
      } else if (ViewJobCount() != list->items.size()) {
        return false;
      }
    }
    return true;
  }

  size_t ViewJobCount() {
    size_t n = 0;
    auto entries = ledger_->ListCronJobEntries();
    if (!entries.ok()) return 0;
    for (const auto& e : *entries) {
      auto jobs = ledger_->ListJobsByOwner(e.namespace_, e.name);
      if (jobs.ok()) n += jobs->size();
    }
    return n;
  }

  // Ingest catches up, ready passes run, until neither has anything left. Back-off retries due
  // within `horizon` of controller time are run too (the clock jumps to them).
  // Runs the passes due within `horizon`, then waits for the Events they recorded to be sent.
  void Settle(const kube::ResourceType& type, Duration horizon = std::chrono::seconds(2)) {
    RunPasses(type, horizon);
    if (assembly_) {
      ASSERT_TRUE(assembly_->FlushEvents(std::chrono::seconds(30))) << "Events unsent";
    }
  }

  void RunPasses(const kube::ResourceType& type, Duration horizon) {
    const Time limit = clock_.Now().Add(horizon);
    for (int round = 0; round < 200; ++round) {
      ASSERT_TRUE(Eventually([&] { return Synced(type); })) << "ingest did not catch up";
      auto passes = assembly_->controller().RunReady();
      ASSERT_TRUE(passes.ok()) << passes.status().ToString();
      if (*passes > 0) continue;
      auto due = assembly_->controller().NextDueNanos();
      if (!due) return;
      const Time at = clock_.Now().Add(Duration(*due - clock_.NowNanos()));
      if (at > limit) return;
      clock_.AdvanceTo(std::max(at, clock_.Now().Add(std::chrono::milliseconds(1))));
    }
    FAIL() << "did not settle";
  }

  ManualClock clock_{Time::FromUnix(kStart)};
  ManualClock kube_clock_{Time::FromUnix(kStart)};
  kube::testing::RecordingSleeper sleeper_{kube_clock_};
  std::unique_ptr<kube::testing::FakeApiServer> server_;
  std::unique_ptr<kube::PocoKubeClient> client_;
  std::unique_ptr<kube::PocoKubeClient> run_client_;
  Duration run_client_timeout_ = std::chrono::seconds(10);  // the assembly's request timeout
  std::filesystem::path dir_;
  std::unique_ptr<store::Ledger> ledger_;
  std::unique_ptr<model::TimeZoneDb> tzdb_;
  std::unique_ptr<RunAssembly> assembly_;
};

}  // namespace cronledger::app::testing
