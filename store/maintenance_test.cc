#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <stdexcept>

#include "store/keys.h"
#include "store/ledger.h"
#include "store/test_util.h"
#include "store/view.h"

namespace cronledger::store {
namespace {

using model::WatchEventType;
using testing::CronJobEvent;
using testing::JobEvent;
using testing::ManualClock;
using testing::TempDir;

std::unique_ptr<Ledger> OpenLedger(const std::string& path, const WallClock* clock = nullptr) {
  LedgerOptions o;
  o.path = path;
  o.sync = SyncMode::kNone;
  o.clock = clock;
  return testing::OpenTestLedger(o);
}

void CommitEvents(Ledger* ledger, std::vector<model::WatchEvent> events) {
  UnitOfWork u;
  for (auto& e : events) u.inputs.push_back(std::move(e));
  auto r = ledger->Commit(std::move(u));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

void Populate(Ledger* ledger) {
  CommitEvents(ledger, {CronJobEvent(WatchEventType::kAdded, "ns", "a", "ua", "1"),
                        CronJobEvent(WatchEventType::kAdded, "ns", "b", "ub", "2"),
                        JobEvent(WatchEventType::kAdded, "ns", "a-1", "uj1", "3", "a")});
  CommitEvents(ledger, {CronJobEvent(WatchEventType::kModified, "ns", "a", "ua", "4"),
                        CronJobEvent(WatchEventType::kDeleted, "ns", "b", "ub", "5"),
                        JobEvent(WatchEventType::kModified, "ns", "a-1", "uj1", "6", "a")});
}

// Edits the stored view behind the ledger's back, as a bug or a bad disk would.
void TamperWithView(const std::string& path) {
  rocksdb::DBOptions o;
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(o, path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(o, path, cfs, &handles, &db).ok());
  rocksdb::ColumnFamilyHandle* view = nullptr;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "view") view = handles[i];
  }
  ASSERT_NE(view, nullptr);
  const std::string ghost = view_key::Object(model::ObjectKind::kCronJob, "ns", "ghost");
  ObjectEntry e{model::ObjectKind::kCronJob, "batch/v1", "ns", "ghost", "ug", "9", "", "", 1};
  EXPECT_TRUE(db->Put(rocksdb::WriteOptions(), view, ghost, EncodeObjectEntry(e)).ok());
  EXPECT_TRUE(
      db->Delete(rocksdb::WriteOptions(), view, view_key::OwnerIndex("ns", "a", "a-1")).ok());
  for (auto* h : handles) EXPECT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
  EXPECT_TRUE(db->Close().ok());
  delete db;
}

TEST(RebuildTest, RebuildOfAnIntactLedgerEqualsTheView) {
  TempDir dir;
  auto ledger = OpenLedger(dir.path());
  Populate(ledger.get());
  auto report = ledger->Rebuild(false);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->records_folded, 6u);
  EXPECT_TRUE(report->differences.empty());
  // cronjob a, job a-1, owner index, two resourceVersions.
  EXPECT_EQ(report->view_entries, 5u);
  // Rebuild sizes its scratch view from RocksDB's estimate of the view's keys (memtable included).
  EXPECT_GT(ledger->EstimatedViewKeys(), 0u);
  EXPECT_LE(ledger->EstimatedViewKeys(), 64u);
}

TEST(RebuildTest, ReportsDifferencesAndRepairs) {
  TempDir dir;
  Populate(OpenLedger(dir.path()).get());
  TamperWithView(dir.path());
  auto ledger = OpenLedger(dir.path());
  EXPECT_EQ(ledger->ListJobsByOwner("ns", "a")->size(), 0u);  // the tampered index
  auto report = ledger->Rebuild(false);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->differences.size(), 2u);
  EXPECT_EQ(report->differences[0].key, "cronjob ns/ghost");
  EXPECT_EQ(report->differences[0].rebuilt, "");
  EXPECT_EQ(report->differences[1].key, "jobs-by-owner ns/a/a-1");
  EXPECT_EQ(report->differences[1].stored, "");
  EXPECT_FALSE(report->repaired);
  EXPECT_EQ(ledger->Rebuild(false)->differences.size(), 2u);  // a plain rebuild changes nothing

  auto repaired = ledger->Rebuild(true);
  ASSERT_TRUE(repaired.ok());
  EXPECT_TRUE(repaired->repaired);
  EXPECT_TRUE(ledger->Rebuild(false)->differences.empty());
  EXPECT_EQ(ledger->ListJobsByOwner("ns", "a")->size(), 1u);
  EXPECT_TRUE(ledger->GetCronJob("ns", "ghost").status().IsNotFound());
}

// A log long enough for the read-ahead scan to hand over many batches (~0.9 MB of watch event
// records), with ticks and config changes between the events. Returns the last seq.
uint64_t PopulateLongLog(Ledger* ledger) {
  uint64_t rv = 0;
  for (int unit = 0; unit < 60; ++unit) {
    UnitOfWork u;
    u.inputs.push_back(model::Tick{Time::FromUnix(unit), "ns", "cj", "timer"});
    for (int i = 0; i < 100; ++i) {
      const std::string cj = "cronjob-with-a-longer-name-" + std::to_string((unit * 100 + i) % 97);
      const std::string job = cj + "-" + std::to_string(unit * 100 + i);
      const auto type = i % 5 == 4 ? WatchEventType::kDeleted : WatchEventType::kAdded;
      if (i % 3 == 0) {
        u.inputs.push_back(CronJobEvent(type, "team-" + std::to_string(i % 7), cj, "u-" + cj,
                                        std::to_string(++rv)));
      } else {
        u.inputs.push_back(JobEvent(type, "team-" + std::to_string(i % 7), job, "u-" + job,
                                    std::to_string(++rv), cj, "u-" + cj));
      }
      if (i % 10 == 0) u.inputs.push_back(model::ConfigChange{Time::FromUnix(i), "k", "v"});
    }
    auto r = ledger->Commit(std::move(u));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return 0;
  }
  return ledger->Meta()->last_input_seq;
}

// (seq, the event's fields) of every call a scan makes, until `limit` calls (then it stops).
using Calls = std::vector<std::pair<uint64_t, model::WatchEvent>>;
Status Scan(Ledger* ledger, bool read_ahead, uint64_t from_seq, Calls* calls,
            size_t limit = SIZE_MAX) {
  calls->clear();
  auto fn = [&](uint64_t seq, const model::WatchEventRef& ev) {
    calls->emplace_back(
        seq, model::WatchEvent{ev.type, ev.kind, std::string(ev.api_version),
                               std::string(ev.namespace_), std::string(ev.name),
                               std::string(ev.uid), std::string(ev.resource_version),
                               std::string(ev.owner_name), std::string(ev.owner_uid), ""});
    return calls->size() < limit;
  };
  return read_ahead ? ledger->ScanWatchEventsReadAhead(from_seq, fn)
                    : ledger->ScanWatchEvents(from_seq, fn);
}

TEST(ReadAheadScanTest, MakesTheCallsTheScanMakes) {
  TempDir dir;
  auto ledger = OpenLedger(dir.path());
  const uint64_t last = PopulateLongLog(ledger.get());
  ASSERT_GT(last, 6000u);
  Calls want, got;
  for (const uint64_t from : {uint64_t{0}, uint64_t{1}, last / 3, last, last + 1}) {
    ASSERT_TRUE(Scan(ledger.get(), false, from, &want).ok());
    ASSERT_TRUE(Scan(ledger.get(), true, from, &got).ok());
    EXPECT_EQ(got, want) << "from " << from;
  }
  EXPECT_EQ(want.size(), 0u);  // from last + 1
  // Stopped by the callback, in the first batch, at its end and far behind the reader.
  for (const size_t limit : {size_t{1}, size_t{700}, size_t{701}, size_t{5000}}) {
    ASSERT_TRUE(Scan(ledger.get(), false, 0, &want, limit).ok());
    ASSERT_TRUE(Scan(ledger.get(), true, 0, &got, limit).ok());
    EXPECT_EQ(got.size(), limit);
    EXPECT_EQ(got, want) << "limit " << limit;
  }
  // Rebuild folds it with the read-ahead scan.
  auto report = ledger->Rebuild(false);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->records_folded, 6000u);
  EXPECT_TRUE(report->differences.empty());
}

// A callback that throws leaves through the scan like any exception, after the reading thread
// has been stopped and joined (else std::terminate), and the ledger goes on working.
TEST(ReadAheadScanTest, ACallbackThatThrowsStopsTheReader) {
  TempDir dir;
  auto ledger = OpenLedger(dir.path());
  PopulateLongLog(ledger.get());
  for (const size_t at : {size_t{0}, size_t{3000}}) {
    size_t calls = 0;
    EXPECT_THROW(
        (void)ledger->ScanWatchEventsReadAhead(0,
                                               [&](uint64_t, const model::WatchEventRef&) -> bool {
                                                 if (calls++ == at)
                                                   throw std::runtime_error("callback failed");
                                                 return true;
                                               }),
        std::runtime_error);
    EXPECT_EQ(calls, at + 1);
  }
  EXPECT_TRUE(ledger->Rebuild(false)->differences.empty());
}

// A record that does not decode ends both scans the same way: every event before it delivered,
// then Corruption.
TEST(ReadAheadScanTest, ACorruptRecordEndsItAsItEndsTheScan) {
  TempDir dir;
  uint64_t last = 0;
  {
    auto ledger = OpenLedger(dir.path());
    last = PopulateLongLog(ledger.get());
  }
  for (const std::string& bad :
       {std::string("\x07not an envelope"),
        keys::EncodeLogValue(Time::FromUnix(1), 0,
                             CronJobEvent(WatchEventType::kAdded, "n", "a", "u", "1"))
            .substr(0, 12)}) {
    {
      rocksdb::DBOptions o;
      std::vector<std::string> names;
      ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(o, dir.path(), &names).ok());
      std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
      for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
      std::vector<rocksdb::ColumnFamilyHandle*> handles;
      rocksdb::DB* db = nullptr;
      ASSERT_TRUE(rocksdb::DB::Open(o, dir.path(), cfs, &handles, &db).ok());
      for (size_t i = 0; i < names.size(); ++i) {
        if (names[i] == "inputs") {
          EXPECT_TRUE(db->Put(rocksdb::WriteOptions(), handles[i], keys::Be64(last / 2), bad).ok());
        }
      }
      for (auto* h : handles) EXPECT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
      EXPECT_TRUE(db->Close().ok());
      delete db;
    }
    auto ledger = OpenLedger(dir.path());
    Calls want, got;
    const Status scan = Scan(ledger.get(), false, 0, &want);
    const Status read_ahead = Scan(ledger.get(), true, 0, &got);
    EXPECT_TRUE(scan.IsCorruption()) << scan.ToString();
    EXPECT_EQ(read_ahead.ToString(), scan.ToString());
    EXPECT_GT(want.size(), 2000u);
    EXPECT_LT(want.back().first, last / 2);
    EXPECT_EQ(got, want);
    EXPECT_TRUE(ledger->Rebuild(false).status().IsCorruption());
  }
}

TEST(BackupTest, CheckpointOpensWithTheSameContent) {
  TempDir dir;
  auto ledger = OpenLedger(dir.Sub("live"));
  Populate(ledger.get());
  ASSERT_TRUE(ledger->Backup(dir.Sub("backup")).ok());
  EXPECT_FALSE(ledger->Backup(dir.Sub("backup")).ok());  // never overwrites
  CommitEvents(ledger.get(), {CronJobEvent(WatchEventType::kAdded, "ns", "c", "uc", "7")});
  auto copy = OpenLedger(dir.Sub("backup"));
  EXPECT_EQ(copy->Meta()->last_input_seq, 6u);
  EXPECT_EQ(copy->GetCronJob("ns", "a")->metadata.resource_version, "4");
  EXPECT_TRUE(copy->GetCronJob("ns", "c").status().IsNotFound());
  EXPECT_TRUE(copy->Rebuild(false)->differences.empty());
}

class RetentionTest : public ::testing::Test {
 protected:
  // Day 0: a (added), b (added), job a-1; day 10: b deleted, a modified; day 20: c added.
  void SetUp() override {
    ledger_ = OpenLedger(dir_.path(), &clock_);
    CommitEvents(ledger_.get(), {CronJobEvent(WatchEventType::kAdded, "ns", "a", "ua", "1"),
                                 CronJobEvent(WatchEventType::kAdded, "ns", "b", "ub", "2"),
                                 JobEvent(WatchEventType::kAdded, "ns", "a-1", "uj", "3", "a")});
    clock_.Advance(std::chrono::hours(24 * 10));
    CommitEvents(ledger_.get(), {CronJobEvent(WatchEventType::kDeleted, "ns", "b", "ub", "4"),
                                 CronJobEvent(WatchEventType::kModified, "ns", "a", "ua", "5")});
    clock_.Advance(std::chrono::hours(24 * 10));
    CommitEvents(ledger_.get(), {CronJobEvent(WatchEventType::kAdded, "ns", "c", "uc", "6")});
  }

  std::map<uint64_t, LogRecord> Log() {
    std::map<uint64_t, LogRecord> out;
    EXPECT_TRUE(ledger_
                    ->ScanInputs(0, true,
                                 [&](const LogRecord& r) {
                                   out[r.seq] = r;
                                   return true;
                                 })
                    .ok());
    return out;
  }

  TempDir dir_;
  ManualClock clock_{Time::FromUnix(1700000000)};
  std::unique_ptr<Ledger> ledger_;
};

TEST_F(RetentionTest, DefaultKeepsEverything) {
  auto report = ledger_->ApplyRetention(RetentionOptions{}, clock_.Now());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->inputs_deleted + report->raw_deleted, 0u);
  EXPECT_EQ(Log().size(), 6u);
}

TEST_F(RetentionTest, RawBytesExpireButWhatTheViewPointsAtStays) {
  RetentionOptions o;
  o.raw_max_age = std::chrono::hours(24 * 5);
  auto report = ledger_->ApplyRetention(o, clock_.Now());
  ASSERT_TRUE(report.ok());
  // Day-0 and day-10 records are older than 5 days. The view points at 3 (job a-1) and 5 (a's
  // latest) and 6; 1 (a superseded), 2 (b) and 4 (b's DELETED) lose their raw bytes.
  auto log = Log();
  ASSERT_EQ(log.size(), 6u);
  for (uint64_t seq : {1, 2, 4}) {
    EXPECT_TRUE(log[seq].raw_pruned) << seq;
    EXPECT_TRUE(std::get<model::WatchEvent>(log[seq].input).raw.empty()) << seq;
  }
  for (uint64_t seq : {3, 5, 6}) {
    EXPECT_FALSE(log[seq].raw_pruned) << seq;
    EXPECT_FALSE(std::get<model::WatchEvent>(log[seq].input).raw.empty()) << seq;
  }
  EXPECT_EQ(report->raw_deleted, 3u);
  EXPECT_EQ(report->pinned, 2u);
  // Applying it again finds nothing more to prune.
  EXPECT_EQ(ledger_->ApplyRetention(o, clock_.Now())->raw_deleted, 0u);
  EXPECT_EQ(ledger_->GetCronJob("ns", "a")->metadata.resource_version, "5");
  EXPECT_EQ(ledger_->ListJobsByOwner("ns", "a")->size(), 1u);
  EXPECT_TRUE(ledger_->Rebuild(false)->differences.empty());
}

TEST_F(RetentionTest, LogExpiresButRebuildStillEqualsTheView) {
  RetentionOptions o;
  o.log_max_age = std::chrono::hours(24 * 15);
  auto report = ledger_->ApplyRetention(o, clock_.Now());
  ASSERT_TRUE(report.ok());
  auto log = Log();
  // Day-0 records 1, 2 go; 3 (job a-1) is pinned; day-10 records are younger than 15 days.
  EXPECT_EQ(report->inputs_deleted, 2u);
  EXPECT_EQ(report->pinned, 1u);
  EXPECT_EQ(log.count(1), 0u);
  EXPECT_EQ(log.count(2), 0u);
  EXPECT_EQ(log.count(3), 1u);
  EXPECT_EQ(log.size(), 4u);
  auto rebuild = ledger_->Rebuild(false);
  ASSERT_TRUE(rebuild.ok());
  EXPECT_TRUE(rebuild->differences.empty());

  // Everything older than a day goes except what the view points at.
  o.log_max_age = std::chrono::hours(24);
  ASSERT_TRUE(ledger_->ApplyRetention(o, clock_.Now()).ok());
  log = Log();
  EXPECT_EQ(log.count(4), 0u);  // b's DELETED is nobody's source any more
  EXPECT_EQ(log.count(3), 1u);
  EXPECT_EQ(log.count(5), 1u);
  EXPECT_TRUE(ledger_->Rebuild(false)->differences.empty());
  EXPECT_EQ(ledger_->GetCronJob("ns", "c")->metadata.uid, "uc");
}

// A dry run reports exactly what the real run then deletes, and deletes nothing; it also runs
// on a read-only ledger next to the writer.
TEST_F(RetentionTest, DryRunReportsWhatARealRunDeletesAndDeletesNothing) {
  RetentionOptions o;
  o.raw_max_age = std::chrono::hours(24 * 5);
  o.log_max_age = std::chrono::hours(24 * 15);
  o.dry_run = true;
  auto dry = ledger_->ApplyRetention(o, clock_.Now());
  ASSERT_TRUE(dry.ok()) << dry.status().ToString();
  EXPECT_TRUE(dry->dry_run);
  EXPECT_EQ(Log().size(), 6u);
  for (const auto& [seq, rec] : Log()) EXPECT_FALSE(rec.raw_pruned) << seq;

  LedgerOptions ro;
  ro.path = dir_.path();
  ro.read_only = true;
  auto reader = Ledger::Open(ro);
  ASSERT_TRUE(reader.ok()) << reader.status().ToString();
  auto ro_dry = (*reader)->ApplyRetention(o, clock_.Now());
  ASSERT_TRUE(ro_dry.ok()) << ro_dry.status().ToString();
  o.dry_run = false;
  EXPECT_EQ((*reader)->ApplyRetention(o, clock_.Now()).status().code(),
            Status::Code::kFailedPrecondition);

  auto real = ledger_->ApplyRetention(o, clock_.Now());
  ASSERT_TRUE(real.ok());
  EXPECT_FALSE(real->dry_run);
  for (const auto* r : {&*dry, &*ro_dry}) {
    EXPECT_EQ(r->raw_deleted, real->raw_deleted);
    EXPECT_EQ(r->inputs_deleted, real->inputs_deleted);
    EXPECT_EQ(r->pinned, real->pinned);
  }
  EXPECT_EQ(real->inputs_deleted, 2u);
  EXPECT_EQ(Log().size(), 4u);
  EXPECT_TRUE(ledger_->Rebuild(false)->differences.empty());
}

}  // namespace
}  // namespace cronledger::store
