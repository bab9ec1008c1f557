#pragma once

// Test scaffolding shared by kube tests and, later, ingest/emit tests: a FakeApiServer plus a
// PocoKubeClient pointed at it, on a ManualClock with a RecordingSleeper (no real waits).

#include <gtest/gtest.h>

#include <memory>

#include "kube/poco_client.h"
#include "kube/testing/fake_api_server.h"
#include "kube/testing/recording_sleeper.h"

namespace cronledger::kube::testing {

class KubeClientFixture : public ::testing::Test {
 protected:
  // Override to change the server or client options before SetUp.
  virtual FakeApiServerOptions ServerOptions() { return {}; }
  virtual void Configure(PocoKubeClientOptions* options) { (void)options; }

  void SetUp() override {
    auto server = FakeApiServer::Start(ServerOptions());
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(server).value();
    client_ = NewClient();
    ASSERT_NE(client_, nullptr);
  }

  std::unique_ptr<PocoKubeClient> NewClient() {
    PocoKubeClientOptions options;
    options.config.server = server_->url();
    options.clock = &clock_;
    options.sleeper = &sleeper_;
    options.request_timeout = std::chrono::seconds(10);
    options.qps = 0;  // unthrottled unless a test asks
    Configure(&options);
    auto client = PocoKubeClient::Open(options);
    EXPECT_TRUE(client.ok()) << client.status().ToString();
    return client.ok() ? std::move(client).value() : nullptr;
  }

  static Json JobObject(const std::string& ns, const std::string& name) {
    Json container = {{"name", "c"}, {"image", "busybox:1.36"}};
    Json pod_spec = {{"restartPolicy", "Never"}, {"containers", Json::array({container})}};
    Json job = {{"apiVersion", "batch/v1"}, {"kind", "Job"}};
    job["metadata"] = {{"name", name}, {"namespace", ns}, {"labels", {{"app", "demo"}}}};
    job["spec"]["template"]["spec"] = pod_spec;
    return job;
  }

  ManualClock clock_{Time::FromUnix(1700000000)};
  RecordingSleeper sleeper_{clock_};
  std::unique_ptr<FakeApiServer> server_;
  std::unique_ptr<PocoKubeClient> client_;
};

}  // namespace cronledger::kube::testing
