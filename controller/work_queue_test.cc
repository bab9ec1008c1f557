#include "controller/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <set>
#include <string>
#include <thread>

namespace cronledger::controller {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

int64_t Ns(Duration d) { return d.count(); }

class WorkQueueTest : public ::testing::Test {
 protected:
  ManualClock clock_{Time::FromUnix(1'700'000'000)};
  WorkQueue queue_{clock_, RateLimiterOptions{}};
};

TEST_F(WorkQueueTest, DeduplicatesWaitingKeys) {
  queue_.Add("ns/a");
  queue_.Add("ns/b");
  queue_.Add("ns/a");
  EXPECT_EQ(queue_.ReadyLen(), 2u);
  EXPECT_EQ(queue_.Get(), "ns/a");
  EXPECT_EQ(queue_.Get(), "ns/b");
  EXPECT_EQ(queue_.Get(), std::nullopt);
}

TEST_F(WorkQueueTest, KeyBeingProcessedIsNotHandedOutTwice) {
  queue_.Add("ns/a");
  ASSERT_EQ(queue_.Get(), "ns/a");
  queue_.Add("ns/a");  // an event arrives while a worker holds the key
  EXPECT_EQ(queue_.Get(), std::nullopt);
  queue_.Done("ns/a");  // re-queued now
  EXPECT_EQ(queue_.Get(), "ns/a");
  queue_.Done("ns/a");
  EXPECT_EQ(queue_.Get(), std::nullopt);
}

TEST_F(WorkQueueTest, AddAfterKeepsEarliestDueTime) {
  queue_.AddAfter("ns/a", seconds(60));
  queue_.AddAfter("ns/a", seconds(10));
  queue_.AddAfter("ns/a", seconds(30));
  EXPECT_EQ(queue_.DelayedLen(), 1u);
  EXPECT_EQ(queue_.NextDueNanos(), clock_.NowNanos() + Ns(seconds(10)));
  clock_.Advance(seconds(9));
  EXPECT_EQ(queue_.Get(), std::nullopt);
  clock_.Advance(seconds(1));
  EXPECT_EQ(queue_.Get(), "ns/a");
  queue_.Done("ns/a");
  // The superseded 30 s and 60 s timers are dead: nothing fires later.
  EXPECT_EQ(queue_.NextDueNanos(), std::nullopt);
  clock_.Advance(seconds(100));
  EXPECT_EQ(queue_.Get(), std::nullopt);
}

TEST_F(WorkQueueTest, TimersFireInDueOrderThenFifo) {
  queue_.AddAfter("ns/late", seconds(5));
  queue_.AddAfter("ns/x", seconds(1));
  queue_.AddAfter("ns/y", seconds(1));
  clock_.Advance(seconds(5));
  EXPECT_EQ(queue_.Get(), "ns/x");
  EXPECT_EQ(queue_.Get(), "ns/y");
  EXPECT_EQ(queue_.Get(), "ns/late");
}

TEST_F(WorkQueueTest, RateLimitedBacksOffExponentiallyAndForgetResets) {
  // 5 ms, 10 ms, 20 ms, 40 ms ... like client-go's default item limiter.
  const int64_t expected_ms[] = {5, 10, 20, 40, 80};
  for (int64_t want : expected_ms) {
    const int64_t before = clock_.NowNanos();
    queue_.AddRateLimited("ns/a");
    EXPECT_EQ(*queue_.NextDueNanos() - before, Ns(milliseconds(want)));
    clock_.Advance(milliseconds(want));
    ASSERT_EQ(queue_.Get(), "ns/a");
    queue_.Done("ns/a");
  }
  EXPECT_EQ(queue_.NumRequeues("ns/a"), 5);
  queue_.Forget("ns/a");
  EXPECT_EQ(queue_.NumRequeues("ns/a"), 0);
  const int64_t before = clock_.NowNanos();
  queue_.AddRateLimited("ns/a");
  EXPECT_EQ(*queue_.NextDueNanos() - before, Ns(milliseconds(5)));
}

TEST_F(WorkQueueTest, BackOffIsCappedAtMaxDelay) {
  for (int i = 0; i < 40; ++i) {
    queue_.AddRateLimited("ns/a");
    clock_.Advance(seconds(2000));
    ASSERT_EQ(queue_.Get(), "ns/a");
    queue_.Done("ns/a");
  }
  const int64_t before = clock_.NowNanos();
  queue_.AddRateLimited("ns/a");
  EXPECT_EQ(*queue_.NextDueNanos() - before, Ns(seconds(1000)));
}

TEST_F(WorkQueueTest, OverallBucketLimitsBurstsAcrossKeys) {
  // 100 distinct keys fail at once: the first 100 are covered by the burst, the 101st waits for a
  // token at 10 qps (100 ms).
  for (int i = 0; i < 100; ++i) queue_.AddRateLimited("ns/k" + std::to_string(i));
  const int64_t before = clock_.NowNanos();
  queue_.AddRateLimited("ns/extra");
  clock_.Advance(milliseconds(99));
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(queue_.Get().has_value());
  EXPECT_EQ(queue_.Get(), std::nullopt);
  clock_.Advance(milliseconds(1));
  EXPECT_EQ(queue_.Get(), "ns/extra");
  EXPECT_EQ(clock_.NowNanos() - before, Ns(milliseconds(100)));
}

TEST_F(WorkQueueTest, HandsOutTheReasonThatMadeTheKeyReady) {
  queue_.Add("ns/a", "cronjob-add");
  queue_.Add("ns/a", "job-update");  // deduplicated: the first reason stays
  queue_.AddAfter("ns/b", seconds(1), "timer");
  queue_.AddAfter("ns/b", seconds(2), "later");  // the earlier timer and its reason win
  auto a = queue_.GetItem();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->key, "ns/a");
  EXPECT_EQ(a->reason, "cronjob-add");
  queue_.Add("ns/a", "job-delete");  // while processing: re-queued with this reason at Done
  queue_.Done("ns/a");
  a = queue_.GetItem();
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->reason, "job-delete");
  queue_.Done("ns/a");
  clock_.Advance(seconds(1));
  auto b = queue_.GetItem();
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->key, "ns/b");
  EXPECT_EQ(b->reason, "timer");
}

TEST_F(WorkQueueTest, WaitGetReturnsReadyKeysAndShutDownReleasesWaiters) {
  std::optional<WorkItem> got;
  std::thread worker([&] { got = queue_.WaitGet(); });
  queue_.Add("ns/a", "cronjob-add");
  worker.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->key, "ns/a");

  bool returned_empty = false;
  std::thread idle([&] { returned_empty = !queue_.WaitGet().has_value(); });
  queue_.ShutDown();
  idle.join();
  EXPECT_TRUE(returned_empty);
  queue_.Add("ns/b");
  EXPECT_EQ(queue_.WaitGet(), std::nullopt);  // shut down: keys stay, waiters return
  queue_.Reopen();
  EXPECT_EQ(queue_.WaitGet()->key, "ns/b");
}

TEST_F(WorkQueueTest, WaitGetPicksUpATimerWhenAManualClockMoves) {
  queue_.AddAfter("ns/a", seconds(3600), "timer");
  std::optional<WorkItem> got;
  std::thread worker([&] { got = queue_.WaitGet(); });
  clock_.Advance(seconds(3600));
  queue_.Wake();
  worker.join();
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->reason, "timer");
}

// A waiter asleep until a far timer wakes for an earlier one added meanwhile (timers that are not
// earlier than every other do not wake it).
TEST_F(WorkQueueTest, WaitGetWakesForATimerEarlierThanTheOneItWaitsFor) {
  queue_.AddAfter("ns/late", seconds(3600), "timer");
  std::atomic<bool> returned{false};
  std::optional<WorkItem> got;
  std::thread worker([&] {
    got = queue_.WaitGet();
    returned = true;
  });
  std::this_thread::sleep_for(milliseconds(20));  // asleep until ns/late, an hour away
  queue_.AddAfter("ns/later", seconds(7200), "timer");
  queue_.AddAfter("ns/soon", milliseconds(1), "timer");
  clock_.Advance(milliseconds(1));
  const auto deadline = std::chrono::steady_clock::now() + seconds(10);
  while (!returned && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(1));
  }
  if (!returned) queue_.ShutDown();  // releases the worker: the test fails below
  worker.join();
  ASSERT_TRUE(got.has_value()) << "the waiter slept through the earlier timer";
  EXPECT_EQ(got->key, "ns/soon");
}

TEST_F(WorkQueueTest, HugeDelaysSaturateInsteadOfWrapping) {
  queue_.AddAfter("ns/a", Duration::max(), "timer");
  EXPECT_EQ(queue_.NextDueNanos(), INT64_MAX);
  EXPECT_EQ(queue_.Get(), std::nullopt);
}

TEST_F(WorkQueueTest, KeysTheFilterRejectsAreDroppedWhenHandedOut) {
  std::set<std::string> owned = {"ns/a", "ns/c"};
  queue_.SetFilter([&owned](const std::string& key) { return owned.count(key) != 0; });
  queue_.Add("ns/a", "cronjob-add");
  queue_.Add("ns/b", "cronjob-add");
  queue_.AddAfter("ns/c", seconds(10), "timer");
  queue_.AddAfter("ns/d", seconds(10), "timer");
  auto first = queue_.GetItem();
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->key, "ns/a");
  EXPECT_EQ(queue_.Get(), std::nullopt) << "ns/b is not owned";
  EXPECT_EQ(queue_.ReadyLen(), 0u) << "a rejected key does not stay queued";
  // Ownership changes: the timer of a key owned when it was added is dropped when due.
  owned = {"ns/a", "ns/b", "ns/d"};
  clock_.Advance(seconds(10));
  EXPECT_EQ(queue_.Get(), "ns/d");
  EXPECT_EQ(queue_.Get(), std::nullopt) << "ns/c was given up";
  // A rejected key can be added again once owned.
  queue_.Add("ns/b", "startup");
  EXPECT_EQ(queue_.Get(), "ns/b");
  queue_.SetFilter(nullptr);  // every key again
  queue_.Add("ns/x");
  EXPECT_EQ(queue_.Get(), "ns/x");
}

}  // namespace
}  // namespace cronledger::controller
