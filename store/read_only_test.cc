// LedgerOptions::read_only: a RocksDB secondary instance that reads a ledger a writer holds open.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <future>

#include "store/ledger.h"
#include "store/test_util.h"

namespace cronledger::store {
namespace {

using model::WatchEventType;
using testing::CronJobEvent;
using testing::JobEvent;
using testing::TempDir;

Result<std::unique_ptr<Ledger>> OpenReadOnly(const std::string& path,
                                             Duration refresh = Duration::zero()) {
  LedgerOptions o;
  o.path = path;
  o.read_only = true;
  o.read_only_refresh = refresh;
  return Ledger::Open(o);
}

std::unique_ptr<Ledger> OpenWriter(const std::string& path) {
  LedgerOptions o;
  o.path = path;
  o.sync = SyncMode::kAlways;
  auto l = Ledger::Open(o);
  EXPECT_TRUE(l.ok()) << l.status().ToString();
  return l.ok() ? std::move(l).value() : nullptr;
}

UnitOfWork CronJobUnit(const std::string& name, const std::string& rv) {
  UnitOfWork u;
  u.inputs.push_back(CronJobEvent(WatchEventType::kAdded, "ns", name, name + "-uid", rv));
  u.inputs.push_back(JobEvent(WatchEventType::kAdded, "ns", name + "-1", name + "-j1", rv, name));
  u.positions.push_back({"file:/events", "line=" + rv});
  return u;
}

size_t CountInputs(Ledger* l) {
  size_t n = 0;
  EXPECT_TRUE(l->ScanInputs(0, true, [&](const LogRecord& r) {
                 if (const auto* ev = std::get_if<model::WatchEvent>(&r.input)) {
                   EXPECT_FALSE(ev->raw.empty()) << r.seq;
                 }
                 ++n;
                 return true;
               }).ok());
  return n;
}

TEST(ReadOnlyLedgerTest, ReadsWhatAnOpenWriterCommittedAndFollowsIt) {
  TempDir dir;
  auto writer = OpenWriter(dir.path());
  ASSERT_TRUE(writer->Commit(CronJobUnit("a", "1")).ok());

  auto ro = OpenReadOnly(dir.path());
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  Ledger* reader = ro->get();
  auto cj = reader->GetCronJob("ns", "a");
  ASSERT_TRUE(cj.ok()) << cj.status().ToString();
  EXPECT_EQ(cj->metadata.uid, "a-uid");
  EXPECT_EQ(reader->Meta()->last_input_seq, 2u);
  EXPECT_EQ(reader->ListJobsByOwner("ns", "a")->size(), 1u);
  EXPECT_EQ(*reader->GetSourcePosition("file:/events"), "line=1");
  EXPECT_EQ(CountInputs(reader), 2u);

  // Later commits are seen by the next read (refresh interval zero: every read catches up).
  ASSERT_TRUE(writer->Commit(CronJobUnit("b", "2")).ok());
  EXPECT_EQ(reader->GetCronJob("ns", "b")->metadata.uid, "b-uid");
  EXPECT_EQ(reader->Meta()->last_input_seq, 4u);
  auto view = reader->ReadCronJobView("ns", "b");
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->jobs.size(), 1u);
  EXPECT_EQ(*reader->GetResourceVersion("batch/v1/Job"), "2");

  // A flush on the writer (a checkpoint flushes the memtables and switches the WAL) is followed.
  ASSERT_TRUE(writer->Backup(dir.Sub("backup")).ok());
  ASSERT_TRUE(writer->Commit(CronJobUnit("c", "3")).ok());
  EXPECT_EQ(CountInputs(reader), 6u);
  EXPECT_EQ(reader->ListCronJobs()->size(), 3u);
  auto rebuilt = reader->Rebuild(false);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().ToString();
  EXPECT_TRUE(rebuilt->differences.empty());
  EXPECT_EQ(rebuilt->records_folded, 6u);

  // The writer still holds the lock: a second read-write open fails, the read-only one did not.
  LedgerOptions rw;
  rw.path = dir.path();
  EXPECT_FALSE(Ledger::Open(rw).ok());
}

TEST(ReadOnlyLedgerTest, RefreshIntervalAndExplicitRefresh) {
  TempDir dir;
  auto writer = OpenWriter(dir.path());
  ASSERT_TRUE(writer->Commit(CronJobUnit("a", "1")).ok());
  auto ro = OpenReadOnly(dir.path(), std::chrono::hours(1));
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  ASSERT_TRUE(writer->Commit(CronJobUnit("b", "2")).ok());
  // Within the interval the reader serves the state of its last catch-up, whole units only.
  EXPECT_TRUE((*ro)->GetCronJob("ns", "b").status().IsNotFound());
  EXPECT_EQ((*ro)->Meta()->last_input_seq, 2u);
  ASSERT_TRUE((*ro)->Refresh().ok());
  EXPECT_TRUE((*ro)->GetCronJob("ns", "b").ok());
  EXPECT_EQ((*ro)->Meta()->last_input_seq, 4u);
  EXPECT_EQ(CountInputs(ro->get()), 4u);
  EXPECT_TRUE(writer->Refresh().ok());  // a writer is always current
}

TEST(ReadOnlyLedgerTest, DecisionCronJobNamesFollowTheWriter) {
  TempDir dir;
  auto writer = OpenWriter(dir.path());
  auto decide = [&](const std::string& name) {
    UnitOfWork u;
    model::Decision d;
    d.time = Time::FromUnix(100);
    d.cron_job = {"ns", name, name + "-uid"};
    d.action = model::DecisionAction::kRequeue;
    u.decisions.push_back(d);
    ASSERT_TRUE(writer->Commit(std::move(u)).ok());
  };
  decide("b");
  auto ro = OpenReadOnly(dir.path());
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  auto names = (*ro)->DecisionCronJobNames("ns");
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, std::vector<std::string>{"b"});
  // Names committed after the open are seen by the next call (it catches up first).
  decide("a");
  decide("c");
  names = (*ro)->DecisionCronJobNames("ns");
  ASSERT_TRUE(names.ok()) << names.status().ToString();
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE((*ro)->DecisionCronJobNames("other")->empty());
}

TEST(ReadOnlyLedgerTest, EveryWritePathIsRefused) {
  TempDir dir;
  {
    auto writer = OpenWriter(dir.path());
    ASSERT_TRUE(writer->Commit(CronJobUnit("a", "1")).ok());
  }
  auto ro = OpenReadOnly(dir.path());  // no writer open: works all the same
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  auto expect_refused = [](const Status& s) {
    EXPECT_EQ(s.code(), Status::Code::kFailedPrecondition) << s.ToString();
    EXPECT_NE(s.message().find("ledger opened read-only"), std::string::npos) << s.ToString();
  };
  expect_refused((*ro)->Commit(CronJobUnit("b", "2")).status());
  expect_refused((*ro)->Commit(UnitOfWork{}).status());
  expect_refused((*ro)->Rebuild(true).status());
  RetentionOptions keep_all;
  expect_refused((*ro)->ApplyRetention(keep_all, Time::FromUnix(1)).status());
  RetentionOptions prune;
  prune.log_max_age = std::chrono::seconds(1);
  expect_refused((*ro)->ApplyRetention(prune, Time::FromUnix(4000000000)).status());
  expect_refused((*ro)->Backup(dir.Sub("backup")));
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("backup")));
  EXPECT_EQ((*ro)->Meta()->last_input_seq, 2u);
  ro->reset();
  // Nothing was written: a writer reopening sees the one unit.
  EXPECT_EQ(OpenWriter(dir.path())->Meta()->last_input_seq, 2u);
}

TEST(ReadOnlyLedgerTest, MissingOrEmptyDirectoryIsAClearErrorAndNothingIsCreated) {
  TempDir dir;
  auto missing = OpenReadOnly(dir.Sub("nope"));
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
  EXPECT_NE(missing.status().message().find("does not exist"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.Sub("nope")));

  std::filesystem::create_directory(dir.Sub("empty"));
  auto empty = OpenReadOnly(dir.Sub("empty"));
  ASSERT_FALSE(empty.ok());
  EXPECT_TRUE(empty.status().IsNotFound()) << empty.status().ToString();
  EXPECT_NE(empty.status().message().find("holds no ledger"), std::string::npos);
  EXPECT_TRUE(std::filesystem::is_empty(dir.Sub("empty")));
}

TEST(ReadOnlyLedgerTest, ReadsInsideAScanCallbackShareTheScan) {
  TempDir dir;
  auto writer = OpenWriter(dir.path());
  ASSERT_TRUE(writer->Commit(CronJobUnit("a", "1")).ok());
  auto ro = OpenReadOnly(dir.path());
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  size_t seen = 0;
  Status inner;
  ASSERT_TRUE((*ro)
                  ->ScanInputs(0, false,
                               [&](const LogRecord&) {
                                 // A nested read must not wait for its own scan to end.
                                 if (!(*ro)->GetCronJob("ns", "a").ok()) return false;
                                 inner = (*ro)->Refresh();
                                 ++seen;
                                 return true;
                               })
                  .ok());
  EXPECT_EQ(seen, 2u);
  EXPECT_EQ(inner.code(), Status::Code::kFailedPrecondition);
}

// Two scans on two threads that feed each other, as replay --verify's input and decision scans
// do: with read_only_refresh = Duration::max() no read catches up (so none waits for another
// thread's read to end), and the reader serves the state of its last catch-up until Refresh().
TEST(ReadOnlyLedgerTest, CatchingUpOnlyOnOpenLetsScansOnTwoThreadsWaitForEachOther) {
  using std::chrono::seconds;
  TempDir dir;
  auto writer = OpenWriter(dir.path());
  ASSERT_TRUE(writer->Commit(CronJobUnit("a", "1")).ok());
  auto ro = OpenReadOnly(dir.path(), Duration::max());
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  Ledger* reader = ro->get();
  ASSERT_TRUE(writer->Commit(CronJobUnit("b", "2")).ok());

  std::promise<void> inside, scanned;
  std::shared_future<void> main_scanned = scanned.get_future().share();
  size_t other_seen = 0;
  // The other thread's scan waits, inside its callback, for this thread's scan to end.
  std::future<Status> other = std::async(std::launch::async, [&] {
    return reader->ScanInputs(0, false, [&](const LogRecord&) {
      if (++other_seen == 1) inside.set_value();
      return main_scanned.wait_for(seconds(60)) == std::future_status::ready;
    });
  });
  ASSERT_EQ(inside.get_future().wait_for(seconds(60)), std::future_status::ready);
  EXPECT_EQ(CountInputs(reader), 2u);  // "b" came after the catch-up at open
  scanned.set_value();
  EXPECT_TRUE(other.get().ok());
  EXPECT_EQ(other_seen, 2u) << "the scans waited for each other";

  EXPECT_TRUE(reader->GetCronJob("ns", "b").status().IsNotFound());
  ASSERT_TRUE(reader->Refresh().ok());
  EXPECT_TRUE(reader->GetCronJob("ns", "b").ok());
  EXPECT_EQ(CountInputs(reader), 4u);
}

// The writer is another process, holding the RocksDB lock for the whole test.
TEST(ReadOnlyLedgerTest, FollowsAWriterInAnotherProcess) {
  TempDir dir;
  int to_parent[2];
  int to_child[2];
  ASSERT_EQ(pipe(to_parent), 0);
  ASSERT_EQ(pipe(to_child), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Child: commit, tell, wait, commit, tell, wait for the parent to finish.
    close(to_parent[0]);
    close(to_child[1]);
    int code = 0;
    {
      LedgerOptions o;
      o.path = dir.path();
      o.sync = SyncMode::kBatch;  // the write is in the WAL (page cache) at once; fsync follows
      auto writer = Ledger::Open(o);
      char c = 0;
      if (!writer.ok() || !(*writer)->Commit(CronJobUnit("a", "1")).ok()) code = 1;
      if (write(to_parent[1], "1", 1) != 1) code = 2;
      if (read(to_child[0], &c, 1) != 1) code = 3;
      if (writer.ok() && !(*writer)->Commit(CronJobUnit("b", "2")).ok()) code = 4;
      if (write(to_parent[1], "2", 1) != 1) code = 5;
      while (read(to_child[0], &c, 1) > 0) {
      }
    }
    _exit(code);
  }
  close(to_parent[1]);
  close(to_child[0]);
  char c = 0;
  ASSERT_EQ(read(to_parent[0], &c, 1), 1);
  {
    auto ro = OpenReadOnly(dir.path());
    ASSERT_TRUE(ro.ok()) << ro.status().ToString();
    EXPECT_TRUE((*ro)->GetCronJob("ns", "a").ok());
    EXPECT_TRUE((*ro)->GetCronJob("ns", "b").status().IsNotFound());
    ASSERT_EQ(write(to_child[1], "go", 1), 1);
    ASSERT_EQ(read(to_parent[0], &c, 1), 1);
    EXPECT_EQ((*ro)->GetCronJob("ns", "b")->metadata.uid, "b-uid");
    EXPECT_EQ((*ro)->Meta()->last_input_seq, 4u);
    EXPECT_EQ(*(*ro)->GetSourcePosition("file:/events"), "line=2");
    LedgerOptions rw;
    rw.path = dir.path();
    EXPECT_FALSE(Ledger::Open(rw).ok());  // the child holds the lock
  }
  close(to_child[1]);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  ASSERT_TRUE(WIFEXITED(wstatus));
  EXPECT_EQ(WEXITSTATUS(wstatus), 0);
  close(to_parent[0]);
}

}  // namespace
}  // namespace cronledger::store
