#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include "store/ledger.h"
#include "store/test_util.h"

namespace cronledger::store {
namespace {

using testing::TempDir;

UnitOfWork ConfigUnit(int writer, int i) {
  UnitOfWork u;
  u.inputs.push_back(
      model::ConfigChange{Time::FromUnix(i), "w" + std::to_string(writer), std::to_string(i)});
  u.inputs.push_back(model::ConfigChange{Time::FromUnix(i), "w" + std::to_string(writer),
                                         std::to_string(i) + "b"});
  return u;
}

// Followers that queue while a leader writes are written together by the next leader, in one
// WriteBatch with one fsync.
TEST(GroupCommitTest, QueuedFollowersShareOneWriteAndOneSync) {
  TempDir dir;
  constexpr size_t kFollowers = 6;
  std::atomic<bool> first{true};
  std::shared_ptr<Ledger> ledger;
  LedgerOptions o;
  o.path = dir.path();
  o.sync = SyncMode::kAlways;
  o.before_group_write = [&] {
    if (!first.exchange(false)) return;
    // Hold the first leader until every follower is queued behind it.
    while (ledger->Stats().queued < kFollowers + 1) std::this_thread::yield();
  };
  auto opened = Ledger::Open(o);
  ASSERT_TRUE(opened.ok());
  ledger = std::move(opened).value();

  std::thread leader([&] { ASSERT_TRUE(ledger->Commit(ConfigUnit(0, 0)).ok()); });
  while (first.load() && ledger->Stats().queued == 0) std::this_thread::yield();
  std::vector<std::thread> followers;
  std::vector<CommitResult> results(kFollowers);
  for (size_t i = 0; i < kFollowers; ++i) {
    followers.emplace_back([&, i] {
      auto r = ledger->Commit(ConfigUnit(static_cast<int>(i) + 1, 1));
      ASSERT_TRUE(r.ok());
      results[i] = *r;
    });
  }
  leader.join();
  for (auto& t : followers) t.join();
  const CommitStats stats = ledger->Stats();
  EXPECT_EQ(stats.units, kFollowers + 1);
  EXPECT_EQ(stats.groups, 2u);
  EXPECT_EQ(stats.syncs, 2u);
  // Every unit got two contiguous seqs; together they cover 1..2(n+1) exactly once.
  std::set<uint64_t> seqs = {1, 2};
  for (const auto& r : results) {
    EXPECT_EQ(r.last_input_seq, r.first_input_seq + 1);
    seqs.insert(r.first_input_seq);
    seqs.insert(r.last_input_seq);
  }
  EXPECT_EQ(seqs.size(), 2 * (kFollowers + 1));
  EXPECT_EQ(*seqs.rbegin(), 2 * (kFollowers + 1));
  ledger.reset();
}

TEST(GroupCommitTest, ConcurrentAppendersLoseNothingAndKeepUnitsContiguous) {
  TempDir dir;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100;
  {
    LedgerOptions o;
    o.path = dir.path();
    o.sync = SyncMode::kAlways;
    auto ledger = std::move(Ledger::Open(o)).value();
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) ASSERT_TRUE(ledger->Commit(ConfigUnit(t, i)).ok());
      });
    }
    for (auto& t : threads) t.join();
    const CommitStats stats = ledger->Stats();
    EXPECT_EQ(stats.units, static_cast<uint64_t>(kThreads * kPerThread));
    EXPECT_LE(stats.groups, stats.units);
    EXPECT_EQ(stats.syncs, stats.groups);
  }
  LedgerOptions o;
  o.path = dir.path();
  auto ledger = std::move(Ledger::Open(o)).value();
  std::vector<std::string> last(kThreads, "-1");
  uint64_t expect_seq = 1;
  model::ConfigChange prev;
  ASSERT_TRUE(ledger
                  ->ScanInputs(0, false,
                               [&](const LogRecord& r) {
                                 EXPECT_EQ(r.seq, expect_seq++);
                                 const auto& c = std::get<model::ConfigChange>(r.input);
                                 if (r.seq % 2 == 0) {
                                   // The second record of a unit directly follows its first.
                                   EXPECT_EQ(c.key, prev.key);
                                   EXPECT_EQ(c.value, prev.value + "b");
                                 } else {
                                   const int w = std::stoi(c.key.substr(1));
                                   EXPECT_EQ(std::stoi(c.value),
                                             std::stoi(last[w]) + 1);  // per-writer order kept
                                   last[w] = c.value;
                                 }
                                 prev = c;
                                 return true;
                               })
                  .ok());
  EXPECT_EQ(expect_seq, static_cast<uint64_t>(2 * kThreads * kPerThread + 1));
}

}  // namespace
}  // namespace cronledger::store
