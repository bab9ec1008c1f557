#include <gtest/gtest.h>

#include <atomic>
#include <functional>
#include <set>
#include <thread>
#include <vector>

#include "store/ledger.h"
#include "store/test_util.h"

namespace cronledger::store {
namespace {

using model::WatchEventType;
using testing::JobEvent;
using testing::TempDir;

UnitOfWork EventUnit(model::WatchEvent ev) {
  UnitOfWork u;
  u.inputs.push_back(std::move(ev));
  return u;
}

// Keeps two commits in flight in separate groups: Commit(first) on one thread, and Commit(second)
// on another started by the first group's leader once it has formed its group (from
// before_group_write, which the test's options route to Launch()), so `second` queues behind it
// and forms the next group.
class TwoInFlight {
 public:
  explicit TwoInFlight(std::shared_ptr<Ledger>* ledger) : ledger_(ledger) {}
  // Called from LedgerOptions::before_group_write.
  void Launch() {
    if (!armed_.exchange(false)) return;
    second_thread_ =
        std::thread([this] { second_result_ = (*ledger_)->Commit(std::move(second_)); });
  }
  std::pair<Result<CommitResult>, Result<CommitResult>> Run(UnitOfWork first, UnitOfWork second) {
    second_ = std::move(second);
    armed_ = true;
    Result<CommitResult> r1 = (*ledger_)->Commit(std::move(first));
    second_thread_.join();
    return {std::move(r1), std::move(second_result_)};
  }

 private:
  std::shared_ptr<Ledger>* ledger_;
  std::atomic<bool> armed_{false};
  UnitOfWork second_;
  std::thread second_thread_;
  Result<CommitResult> second_result_ = Status::Internal("not run");
};

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
// Options of the pipelined-commit tests: fsync on every group, each group's leader launches `two`'s
// pair before it writes, and `hook` runs at every group write.
LedgerOptions PipelineOptions(const TempDir& dir, TwoInFlight& two, std::function<Status()> hook) {
  LedgerOptions o;
  o.path = dir.path();
  o.sync = SyncMode::kAlways;
  o.before_group_write = [&two] { two.Launch(); };
  o.group_write_hook = std::move(hook);
  return o;
}

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

// SyncMode::kBatch: a commit after the last background fsync gets one of its own within the sync
// window, however the commits before it were synced; commits inside one window share it.
TEST(GroupCommitTest, BatchSyncFollowsEveryCommitWithinTheWindow) {
  TempDir dir;
  LedgerOptions o;
  o.path = dir.path();
  o.sync = SyncMode::kBatch;
  o.sync_window = std::chrono::milliseconds(50);
  auto ledger = testing::OpenTestLedger(o);
  auto synced_past = [&](uint64_t syncs) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (ledger->Stats().syncs <= syncs) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return true;
  };
  for (int round = 0; round < 5; ++round) {
    const uint64_t before = ledger->Stats().syncs;
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(ledger->Commit(ConfigUnit(round, i)).ok());
    ASSERT_TRUE(synced_past(before)) << "round " << round << ": no fsync followed the commits";
  }
  EXPECT_EQ(ledger->Stats().groups, 15u);
  EXPECT_LE(ledger->Stats().syncs, 10u);  // a window's commits share its fsync
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

// Pipelined commit: the second group prepares while the first has not been written yet (its write
// is held until the second one is prepared), reading the view through the first group's writes:
// the Job's move from owner A to owner B must drop A's owner index entry, which only the first
// group's (unwritten) view entry tells.
TEST(GroupCommitTest, TheNextGroupPreparesOnTopOfTheUnwrittenOne) {
  TempDir dir;
  std::shared_ptr<Ledger> ledger;
  TwoInFlight two(&ledger);
  std::atomic<int> writes{0};
  ledger = std::move(Ledger::Open(PipelineOptions(dir, two, [&] {
             if (writes.fetch_add(1) == 0) {
               while (ledger->Stats().prepared < 2) std::this_thread::yield();
             }
             return Status::Ok();
           }))).value();
  auto [r1, r2] =
      two.Run(EventUnit(JobEvent(WatchEventType::kAdded, "ns", "job", "u1", "1", "a")),
              EventUnit(JobEvent(WatchEventType::kModified, "ns", "job", "u1", "2", "b")));
  ASSERT_TRUE(r1.ok()) << r1.status().ToString();
  ASSERT_TRUE(r2.ok()) << r2.status().ToString();
  EXPECT_EQ(r1->first_input_seq, 1u);
  EXPECT_EQ(r2->first_input_seq, 2u);
  const CommitStats stats = ledger->Stats();
  EXPECT_EQ(stats.groups, 2u);
  EXPECT_EQ(stats.prepared, 2u);
  EXPECT_EQ(writes.load(), 2);
  EXPECT_TRUE(ledger->ListJobsByOwner("ns", "a")->empty());
  auto by_b = ledger->ListJobsByOwner("ns", "b");
  ASSERT_TRUE(by_b.ok());
  ASSERT_EQ(by_b->size(), 1u);
  auto rebuilt = ledger->Rebuild(false);
  ASSERT_TRUE(rebuilt.ok());
  EXPECT_TRUE(rebuilt->differences.empty());
  EXPECT_EQ(rebuilt->records_folded, 2u);
  ledger.reset();
}

// A failed write fails the group prepared on top of it (never written), and every later commit
// until the ledger is reopened; nothing of either is in the log or the view. After reopening,
// commits continue from the last written seq.
TEST(GroupCommitTest, AFailedWriteFailsTheGroupBehindItAndLaterCommitsUntilReopened) {
  TempDir dir;
  {
    std::shared_ptr<Ledger> ledger;
    TwoInFlight two(&ledger);
    std::atomic<int> writes{0};
    ledger = std::move(Ledger::Open(PipelineOptions(dir, two, [&]() -> Status {
               if (writes.fetch_add(1) == 0) return Status::Ok();  // the first unit
               while (ledger->Stats().prepared < 3) std::this_thread::yield();
               return Status::IoError("injected write failure");
             }))).value();
    ASSERT_TRUE(
        ledger->Commit(EventUnit(JobEvent(WatchEventType::kAdded, "ns", "j0", "u0", "1", "a")))
            .ok());
    auto [r1, r2] =
        two.Run(EventUnit(JobEvent(WatchEventType::kAdded, "ns", "j1", "u1", "2", "a")),
                EventUnit(JobEvent(WatchEventType::kAdded, "ns", "j2", "u2", "3", "a")));
    ASSERT_FALSE(r1.ok());
    EXPECT_NE(r1.status().message().find("injected write failure"), std::string::npos);
    ASSERT_FALSE(r2.ok());
    EXPECT_NE(r2.status().message().find("an earlier commit group failed"), std::string::npos);
    EXPECT_EQ(writes.load(), 2);  // the second one was not attempted
    auto later =
        ledger->Commit(EventUnit(JobEvent(WatchEventType::kAdded, "ns", "j3", "u3", "4", "a")));
    ASSERT_FALSE(later.ok());
    EXPECT_NE(later.status().message().find("an earlier commit group failed"), std::string::npos);
    ledger.reset();
  }
  LedgerOptions o;
  o.path = dir.path();
  auto ledger = std::move(Ledger::Open(o)).value();
  EXPECT_EQ(ledger->Meta()->last_input_seq, 1u);
  auto jobs = ledger->ListJobsByOwner("ns", "a");
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(jobs->size(), 1u);  // j0 only
  auto r = ledger->Commit(EventUnit(JobEvent(WatchEventType::kAdded, "ns", "j4", "u4", "5", "a")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->first_input_seq, 2u);
  auto rebuilt = ledger->Rebuild(false);
  ASSERT_TRUE(rebuilt.ok());
  EXPECT_TRUE(rebuilt->differences.empty());
}

}  // namespace
}  // namespace cronledger::store
