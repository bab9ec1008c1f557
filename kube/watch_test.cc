#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "kube/testing/client_fixture.h"

namespace cronledger::kube {
namespace {

using testing::FakeApiServerOptions;
using testing::KubeClientFixture;

constexpr auto kWait = std::chrono::seconds(10);  // upper bound only; never reached when passing

class WatchTest : public KubeClientFixture {
 protected:
  // Runs a watch on another thread, collecting events.
  struct Running {
    std::future<KubeResult<WatchResult>> result;
    std::shared_ptr<std::vector<model::WatchEvent>> events =
        std::make_shared<std::vector<model::WatchEvent>>();
    std::shared_ptr<std::mutex> mu = std::make_shared<std::mutex>();
    std::vector<model::WatchEvent> Events() const {
      std::lock_guard<std::mutex> lock(*mu);
      return *events;
    }
  };

  Running StartWatch(WatchOptions options, int stop_after = -1) {
    Running run;
    auto events = run.events;
    auto mu = run.mu;
    run.result = std::async(std::launch::async, [this, options, events, mu, stop_after] {
      return client_->Watch(BatchJobs(), "default", options, [&](model::DecodedDocument& d) {
        EXPECT_TRUE(d.rejections.empty());
        std::lock_guard<std::mutex> lock(*mu);
        for (model::WatchEvent& e : d.events) events->push_back(std::move(e));
        return stop_after < 0 || static_cast<int>(events->size()) < stop_after;
      });
    });
    return run;
  }

  int64_t Seed(int n) {
    for (int i = 0; i < n; ++i) {
      const std::string name = "seed-" + std::to_string(seeded_++);
      EXPECT_TRUE(server_->Create(BatchJobs(), JobObject("default", name)).ok());
    }
    return server_->resource_version();
  }

  int seeded_ = 0;

  WatchResult Finish(Running& run) {
    EXPECT_EQ(run.result.wait_for(kWait), std::future_status::ready);
    auto r = run.result.get();
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().ToString());
    return r.ok() ? r.value() : WatchResult{};
  }
};

TEST_F(WatchTest, StreamsChangesFromAResourceVersionAndBookmarks) {
  const int64_t rv = Seed(2);
  WatchOptions options;
  options.resource_version = std::to_string(rv);
  Running run = StartWatch(options);
  ASSERT_TRUE(server_->WaitForWatches(1, kWait));
  ASSERT_TRUE(server_->Create(BatchJobs(), JobObject("default", "new")).ok());
  ASSERT_TRUE(server_->Create(BatchJobs(), JobObject("other-ns", "ignored")).ok());
  ASSERT_TRUE(server_->Delete(BatchJobs(), "default", "seed-0").ok());
  server_->SendBookmarks();
  server_->CloseWatches();
  const WatchResult result = Finish(run);
  EXPECT_EQ(result.end, WatchEnd::kClosed);
  const auto events = run.Events();
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].type, model::WatchEventType::kAdded);
  EXPECT_EQ(events[0].name, "new");
  EXPECT_EQ(events[0].kind, model::ObjectKind::kJob);  // watch objects carry their type
  EXPECT_EQ(events[1].type, model::WatchEventType::kDeleted);
  EXPECT_EQ(events[1].name, "seed-0");
  EXPECT_EQ(events[1].resource_version, std::to_string(server_->resource_version()));
  EXPECT_EQ(events[2].type, model::WatchEventType::kBookmark);
  EXPECT_EQ(events[2].resource_version, std::to_string(server_->resource_version()));
  EXPECT_NE(server_->requests().back().query.find("allowWatchBookmarks=true"), std::string::npos);
}

TEST_F(WatchTest, EmptyResourceVersionStartsWithTheCurrentState) {
  Seed(3);
  Running run = StartWatch(WatchOptions{}, /*stop_after=*/3);
  const WatchResult result = Finish(run);
  EXPECT_EQ(result.end, WatchEnd::kStopped);
  EXPECT_EQ(result.events, 3);
  for (const model::WatchEvent& e : run.Events()) EXPECT_EQ(e.type, model::WatchEventType::kAdded);
}

TEST_F(WatchTest, DroppedConnectionIsReported) {
  const int64_t rv = Seed(1);
  WatchOptions options;
  options.resource_version = std::to_string(rv);
  Running run = StartWatch(options);
  ASSERT_TRUE(server_->WaitForWatches(1, kWait));
  ASSERT_TRUE(server_->Create(BatchJobs(), JobObject("default", "before-drop")).ok());
  server_->DropWatches();
  const WatchResult result = Finish(run);
  EXPECT_EQ(result.end, WatchEnd::kDropped) << result.detail;
}

TEST_F(WatchTest, StalledStreamIsReported) {
  WatchOptions options;
  options.resource_version = std::to_string(Seed(1));
  options.stall_timeout = std::chrono::milliseconds(150);  // a tiny real socket wait
  server_->SetWatchesStalled(true);
  Running run = StartWatch(options);
  ASSERT_TRUE(server_->WaitForWatches(1, kWait));
  ASSERT_TRUE(server_->Create(BatchJobs(), JobObject("default", "never-sent")).ok());
  const WatchResult result = Finish(run);
  EXPECT_EQ(result.end, WatchEnd::kStalled);
  EXPECT_TRUE(run.Events().empty());
}

TEST_F(WatchTest, CompactedResourceVersionIsExpired) {
  const int64_t old_rv = Seed(1);
  Seed(2);
  server_->Compact();
  WatchOptions options;
  options.resource_version = std::to_string(old_rv);
  Running run = StartWatch(options);
  const WatchResult result = Finish(run);
  EXPECT_EQ(result.end, WatchEnd::kExpired);
  ASSERT_TRUE(result.error.has_value());
  EXPECT_EQ(result.error->code, 410);
  EXPECT_EQ(result.error->reason, "Expired");
}

TEST_F(WatchTest, ExpiryDuringTheStreamIsExpired) {
  WatchOptions options;
  options.resource_version = std::to_string(Seed(1));
  Running run = StartWatch(options);
  ASSERT_TRUE(server_->WaitForWatches(1, kWait));
  server_->ExpireWatches();
  EXPECT_EQ(Finish(run).end, WatchEnd::kExpired);
}

TEST_F(WatchTest, CancellationEndsABlockedWatch) {
  Cancellation cancel;
  WatchOptions options;
  options.resource_version = std::to_string(Seed(1));
  options.cancel = &cancel;
  Running run = StartWatch(options);
  ASSERT_TRUE(server_->WaitForWatches(1, kWait));
  cancel.Cancel();
  EXPECT_EQ(Finish(run).end, WatchEnd::kCancelled);
}

class SplitChunkWatchTest : public WatchTest {
  FakeApiServerOptions ServerOptions() override {
    FakeApiServerOptions o;
    o.watch_chunk_bytes = 7;  // every event spans many chunks
    o.watch_expired_as_http_error = true;
    return o;
  }
};

TEST_F(SplitChunkWatchTest, EventsSplitAcrossChunksDecode) {
  Seed(4);
  Running run = StartWatch(WatchOptions{}, /*stop_after=*/4);
  EXPECT_EQ(Finish(run).end, WatchEnd::kStopped);
  const auto events = run.Events();
  ASSERT_EQ(events.size(), 4u);
  EXPECT_EQ(events[3].name, "seed-3");
}

TEST_F(SplitChunkWatchTest, HttpGoneIsAnExpiredApiError) {
  const int64_t old_rv = Seed(1);
  Seed(1);
  server_->Compact();
  WatchOptions options;
  options.resource_version = std::to_string(old_rv);
  auto r =
      client_->Watch(BatchJobs(), "default", options, [](model::DecodedDocument&) { return true; });
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.error().IsExpired());
  EXPECT_EQ(r.error().code, 410);
}

}  // namespace
}  // namespace cronledger::kube
