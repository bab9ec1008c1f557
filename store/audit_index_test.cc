// The covering CronJob index (store/keys.h, docs/ledger.md "Column families and keys"): its values
// hold each decision without its Json members, so a CronJob's decisions are read from the index
// alone; values written before that (empty) and of an unknown version are read from the log.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <memory>
#include <string>
#include <vector>

#include "store/keys.h"
#include "store/ledger.h"
#include "store/test_util.h"
#include "store/testing/forwarding_ledger.h"

namespace cronledger::store {
namespace {

using model::DecisionAction;
using testing::TempDir;

constexpr Time kT0 = Time::FromUnix(1767225600);  // 2026-01-01T00:00:00Z

Time At(int minutes) { return kT0.Add(std::chrono::minutes(minutes)); }

std::unique_ptr<Ledger> Open(const std::string& path, bool read_only = false) {
  LedgerOptions o;
  o.path = path;
  o.sync = SyncMode::kNone;
  o.read_only = read_only;
  return testing::OpenTestLedger(o);
}

// Every member set that the action allows: createJob with a Job object, updateStatus with a
// status, a TooManyMissed range, an event with type and message, a requeue.
std::vector<model::Decision> Decisions(const std::string& name) {
  std::vector<model::Decision> out;
  for (int i = 0; i < 5; ++i) {
    model::Decision d;
    d.time = At(i * 10).Add(std::chrono::milliseconds(7));
    d.cron_job = {"ns", name, "uid-" + name};
    d.cause = {0, 0, "timer"};
    d.policy.schedule = "*/10 * * * *";
    d.policy.time_zone = "Europe/Berlin";
    d.policy.concurrency_policy = "Forbid";
    d.policy.starting_deadline_seconds = 30;
    d.policy.suspend = i == 4;
    switch (i) {
      case 0:
        d.action = DecisionAction::kCreateJob;
        d.scheduled_time = At(0);
        d.job_name = name + "-0";
        d.job_object = model::Json{{"kind", "Job"}, {"metadata", {{"name", *d.job_name}}}};
        d.message = "created";
        break;
      case 1:
        d.action = DecisionAction::kUpdateStatus;
        d.status = model::Json{{"lastScheduleTime", "2026-01-01T00:00:00Z"}};
        break;
      case 2:
        d.action = DecisionAction::kSkipped;
        d.scheduled_time = At(10);
        d.range_end = At(20);
        d.reason = "TooManyMissed";
        break;
      case 3:
        d.action = DecisionAction::kEvent;
        d.reason = "SawCompletedJob";
        d.event_type = "Normal";
        d.message = "Saw completed job";
        break;
      default:
        d.action = DecisionAction::kRequeue;
        d.requeue_after = std::chrono::seconds(42);
        break;
    }
    out.push_back(std::move(d));
  }
  return out;
}

model::Decision WithoutJson(model::Decision d) {
  d.job_object = nullptr;
  d.status = nullptr;
  return d;
}

std::vector<model::Decision> Logged(Ledger& l) {
  std::vector<model::Decision> out;
  EXPECT_TRUE(l.ScanDecisions(0, [&](const model::Decision& d) {
                 out.push_back(d);
                 return true;
               }).ok());
  return out;
}

// Commits two CronJobs' decisions, interleaved in time (one unit each pass).
void Fill(Ledger& l) {
  std::vector<model::Decision> a = Decisions("a"), b = Decisions("b");
  for (size_t i = 0; i < a.size(); ++i) {
    UnitOfWork u;
    u.decisions = {a[i], b[i]};
    ASSERT_TRUE(l.Commit(std::move(u)).ok());
  }
}

// Rewrites every CronJob index value of the store at `path` (closed) to `value`, as a build from
// before index values (empty) or a future build (another version) would have written it.
void RewriteCronJobIndexValues(const std::string& path, const std::string& value) {
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(rocksdb::DBOptions(), path, cfs, &handles, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::ColumnFamilyHandle* audit = nullptr;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "audit") audit = handles[i];
  }
  ASSERT_NE(audit, nullptr);
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), audit));
  int rewritten = 0;
  for (it->Seek("c"); it->Valid() && it->key().starts_with("c"); it->Next()) {
    EXPECT_EQ(static_cast<uint8_t>(it->value()[0]), keys::kCronJobIndexV1);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), audit, it->key(), value).ok());
    ++rewritten;
  }
  EXPECT_EQ(rewritten, 10);
  it.reset();
  for (auto* h : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
  ASSERT_TRUE(db->Close().ok());
}

std::vector<model::Decision> Of(const std::vector<model::Decision>& all, const std::string& name,
                                bool summary) {
  std::vector<model::Decision> out;
  for (const auto& d : all) {
    if (d.cron_job.name == name) out.push_back(summary ? WithoutJson(d) : d);
  }
  return out;
}

TEST(AuditIndexTest, CronJobIndexValueHoldsTheDecisionWithoutItsJsonMembers) {
  for (model::Decision d : Decisions("a")) {
    d.seq = 17;
    const model::Decision before = d;
    std::string value;
    keys::EncodeCronJobIndexValue(d, &value);
    EXPECT_EQ(d, before);  // the Json members are moved back
    model::Decision got;
    uint8_t omitted = 0xff;
    auto covered = keys::DecodeCronJobIndexValue(value, &got, &omitted);
    ASSERT_TRUE(covered.ok()) << covered.status().ToString();
    EXPECT_TRUE(*covered);
    EXPECT_EQ(got, WithoutJson(before));
    EXPECT_EQ(omitted, (before.job_object.is_null() ? 0 : keys::kOmittedJobObject) |
                           (before.status.is_null() ? 0 : keys::kOmittedStatus));
  }
  model::Decision d;
  uint8_t omitted = 0;
  EXPECT_FALSE(*keys::DecodeCronJobIndexValue("", &d, &omitted));        // v0
  EXPECT_FALSE(*keys::DecodeCronJobIndexValue("\x07zz", &d, &omitted));  // a later version
  EXPECT_TRUE(keys::DecodeCronJobIndexValue("\x01", &d, &omitted).status().IsCorruption());
  EXPECT_TRUE(keys::DecodeCronJobIndexValue("\x01\x00junk", &d, &omitted).status().IsCorruption());
}

TEST(AuditIndexTest, SummariesAreReadFromTheIndexAloneAndFullRecordsOnlyReadTheirJson) {
  TempDir dir;
  auto l = Open(dir.path());
  Fill(*l);
  const std::vector<model::Decision> logged = Logged(*l);
  ASSERT_EQ(logged.size(), 10u);
  const Time end = At(1000);

  DecisionReadStats before = l->DecisionReads();
  auto summaries = l->DecisionSummariesByCronJob("ns", "a", kT0, end, 0);
  ASSERT_TRUE(summaries.ok()) << summaries.status().ToString();
  EXPECT_EQ(*summaries, Of(logged, "a", true));
  DecisionReadStats after = l->DecisionReads();
  EXPECT_EQ(after.log_reads - before.log_reads, 0u);
  EXPECT_EQ(after.from_index - before.from_index, 5u);
  EXPECT_EQ(after.index_entries - before.index_entries, 5u);

  // Whole records: only the createJob (Job object) and updateStatus (status) read the log.
  before = after;
  auto full = l->DecisionsByCronJob("ns", "b", kT0, end, 0);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(*full, Of(logged, "b", false));
  after = l->DecisionReads();
  EXPECT_EQ(after.log_reads - before.log_reads, 2u);
  EXPECT_EQ(after.from_index - before.from_index, 3u);

  // Window and limit as before: [10m, 40m) of a, at most 2.
  auto window = l->DecisionSummariesByCronJob("ns", "a", At(10), At(40), 2);
  ASSERT_TRUE(window.ok());
  const auto a = Of(logged, "a", true);
  EXPECT_EQ(*window, (std::vector<model::Decision>{a[1], a[2]}));
  auto none = l->DecisionSummariesByCronJob("ns", "c", kT0, end, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  // The default implementation (for wrappers) gives the same answer.
  struct Unforwarded : testing::ForwardingLedger {
    using ForwardingLedger::ForwardingLedger;
    Result<std::vector<model::Decision>> DecisionSummariesByCronJob(std::string_view ns,
                                                                    std::string_view name,
                                                                    Time from, Time to,
                                                                    size_t limit) override {
      return Ledger::DecisionSummariesByCronJob(ns, name, from, to, limit);
    }
  } wrapper(*l);
  auto fallback = wrapper.DecisionSummariesByCronJob("ns", "a", kT0, end, 0);
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(*fallback, *summaries);
}

// A store written before index values existed (every `c` value empty) answers the same, from the
// decision log; so does one whose values have a version this build does not know.
TEST(AuditIndexTest, OldAndUnknownIndexValuesAreReadFromTheDecisionLog) {
  for (const std::string& value : {std::string(), std::string("\x09\x00later", 7)}) {
    SCOPED_TRACE(value.empty() ? "v0 (empty)" : "unknown version");
    TempDir dir;
    std::vector<model::Decision> logged;
    {
      auto l = Open(dir.path());
      Fill(*l);
      logged = Logged(*l);
    }
    RewriteCronJobIndexValues(dir.path(), value);
    for (bool read_only : {false, true}) {
      auto l = Open(dir.path(), read_only);
      ASSERT_NE(l, nullptr);
      const DecisionReadStats before = l->DecisionReads();
      auto summaries = l->DecisionSummariesByCronJob("ns", "a", kT0, At(1000), 0);
      ASSERT_TRUE(summaries.ok()) << summaries.status().ToString();
      EXPECT_EQ(*summaries, Of(logged, "a", true));
      auto full = l->DecisionsByCronJob("ns", "b", kT0, At(1000), 0);
      ASSERT_TRUE(full.ok()) << full.status().ToString();
      EXPECT_EQ(*full, Of(logged, "b", false));
      const DecisionReadStats after = l->DecisionReads();
      EXPECT_EQ(after.log_reads - before.log_reads, 10u);
      EXPECT_EQ(after.from_index - before.from_index, 0u);
      auto names = l->DecisionCronJobNames("ns");
      ASSERT_TRUE(names.ok());
      EXPECT_EQ(*names, (std::vector<std::string>{"a", "b"}));
    }
    // A writer of this build adds covering entries beside the old ones; both read back.
    {
      auto l = Open(dir.path());
      UnitOfWork u;
      model::Decision d = Decisions("a")[0];
      d.time = At(100);
      u.decisions = {d};
      ASSERT_TRUE(l->Commit(std::move(u)).ok());
      logged = Logged(*l);
      const DecisionReadStats before = l->DecisionReads();
      auto summaries = l->DecisionSummariesByCronJob("ns", "a", kT0, At(1000), 0);
      ASSERT_TRUE(summaries.ok());
      EXPECT_EQ(*summaries, Of(logged, "a", true));
      const DecisionReadStats after = l->DecisionReads();
      EXPECT_EQ(after.log_reads - before.log_reads, 5u);
      EXPECT_EQ(after.from_index - before.from_index, 1u);
    }
  }
}

}  // namespace
}  // namespace cronledger::store
