// Whole records from the covering CronJob index (v2 values: Json members in the index, Job
// objects as references to their CronJob's Job template) print exactly what the decision log
// prints. A store is recorded by the real controller loop (controller::Controller against the
// SimCluster in virtual time) with CronJobs whose Job template and schedule change mid-window, one
// of them back to an earlier template, an outage and a deleted CronJob; copies of it are rewritten
// to the older index layouts (v1: values without Json members, read from the log; v0: empty
// values, every decision read from the log), and every output is compared byte for byte:
// `audit -o json|yaml|csv|table` (CronJob, namespace, filters, pages, counts), `report adherence`
// in every format, and the API's /v1/decisions, /v1/cronjobs/{ns}/{name}, .../timeline and
// /v1/reports/adherence.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "audit/api.h"
#include "store/cronjob_index.h"
#include "store/keys.h"
#include "tests/replay/sim_world.h"
#include "tests/testing/cli.h"

namespace cronledger::audit {
namespace {

using cli_test::Cli;
using replay::testing::At;
using replay::testing::Manifest;
using replay::testing::SimWorld;

// A CronJob whose Job template has labels, annotations and a container running `image`.
model::CronJob WithTemplate(const std::string& name, const std::string& schedule,
                            const std::string& image, const model::Json& extra_spec = {}) {
  model::Json spec = {
      {"timeZone", "Asia/Kolkata"},  // the scheduled-timestamp annotation at +05:30
      {"jobTemplate",
       {{"metadata", {{"labels", {{"app", name}}}, {"annotations", {{"team", "audit"}}}}},
        {"spec",
         {{"backoffLimit", 2},
          {"template",
           {{"spec",
             {{"restartPolicy", "Never"},
              {"containers",
               {{{"name", "main"},
                 {"image", image},
                 {"args", {"--run", name}},
                 {"env", {{{"name", "MODE"}, {"value", "full"}}}}}}}}}}}}}}}};
  if (extra_spec.is_object()) spec.update(extra_spec);
  return Manifest(name, schedule, spec);
}

// Rewrites every CronJob index value of the store at `path` (closed) to what `rewrite` makes of
// the decision it indexes; returns how many it rewrote.
size_t RewriteIndex(const std::string& path,
                    const std::function<std::string(model::Decision)>& rewrite) {
  std::map<uint64_t, model::Decision> by_seq;
  {
    store::LedgerOptions o;
    o.path = path;
    o.sync = store::SyncMode::kNone;
    auto l = store::Ledger::Open(o);
    EXPECT_TRUE(l.ok());
    EXPECT_TRUE((*l)->ScanDecisions(0,
                                    [&](const model::Decision& d) {
                                      by_seq[d.seq] = d;
                                      return true;
                                    })
                    .ok());
  }
  std::vector<std::string> names;
  EXPECT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  EXPECT_TRUE(rocksdb::DB::Open(rocksdb::DBOptions(), path, cfs, &handles, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::ColumnFamilyHandle* audit = nullptr;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == "audit") audit = handles[i];
  }
  size_t n = 0;
  {
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), audit));
    for (it->Seek("c"); it->Valid() && it->key().starts_with("c"); it->Next()) {
      uint64_t seq = 0;
      EXPECT_TRUE(store::keys::SeqOfIndexKey(it->key().ToStringView(), &seq));
      EXPECT_TRUE(db->Put(rocksdb::WriteOptions(), audit, it->key(), rewrite(by_seq.at(seq))).ok());
      ++n;
    }
  }
  for (auto* h : handles) EXPECT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
  EXPECT_TRUE(db->Close().ok());
  return n;
}

class CoveredRecords : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    world_ = new SimWorld(At(10, 0), std::chrono::minutes(12));
    SimWorld& w = *world_;
    w.Apply(WithTemplate("web", "*/10 * * * *", "nginx:1.25"));
    w.Apply(WithTemplate("batch", "*/5 * * * *", "batch:7", {{"concurrencyPolicy", "Forbid"}}));
    w.Apply(WithTemplate("nightly", "5 * * * *", "tools:1"));
    w.Apply(Manifest("bare", "*/20 * * * *"));  // the default template: an empty container list
    w.RunUntil(At(10, 35));
    // Spec changes: a new image and label (a second template), a new schedule and env var.
    model::CronJob web2 = WithTemplate("web", "*/10 * * * *", "nginx:1.26");
    web2.spec.job_template.labels["track"] = "canary";
    w.Apply(web2);
    w.RunUntil(At(11, 5));
    w.Apply(WithTemplate("batch", "*/20 * * * *", "batch:8", {{"concurrencyPolicy", "Forbid"}}));
    w.RunUntil(At(11, 40));
    w.Apply(WithTemplate("web", "*/10 * * * *", "nginx:1.25"));  // back to the first template
    w.RunUntil(At(11, 50));
    w.Outage(At(12, 20));
    w.RunUntil(At(12, 25));
    CL_CHECK(w.cluster().DeleteCronJob("default", "nightly").ok());
    w.RunUntil(At(12, 40));
    w.CloseLedger();

    // The recorded store (v2), and copies rewritten to v1 and v0.
    const std::string v2 = w.data_dir();
    for (const auto& [dir, version] : {std::pair{V1(), 1}, std::pair{V0(), 0}}) {
      std::filesystem::copy(v2, dir, std::filesystem::copy_options::recursive);
      const size_t n = RewriteIndex(dir, [v = version](model::Decision d) {
        std::string value;
        if (v == 1) store::cronjob_index::EncodeV1(d, &value);
        return value;
      });
      CL_CHECK(n > 100);
    }
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    std::filesystem::remove_all(V1(), ec);
    std::filesystem::remove_all(V0(), ec);
    delete world_;
    world_ = nullptr;
  }
  static std::string V2() { return world_->data_dir(); }
  static std::string V1() { return world_->dir().Sub("v1"); }
  static std::string V0() { return world_->dir().Sub("v0"); }

  static SimWorld* world_;
};
SimWorld* CoveredRecords::world_ = nullptr;

constexpr const char* kWindow = " --since 2024-01-01T10:00:00Z --until 2024-01-01T12:40:00Z";

TEST_F(CoveredRecords, TheV2StoreReadsWholeRecordsFromTheIndexAndItsTemplatesAlone) {
  store::LedgerOptions o;
  o.path = V2();
  o.read_only = true;
  auto l = store::Ledger::Open(o);
  ASSERT_TRUE(l.ok());
  size_t jobs = 0;
  for (const std::string name : {"web", "batch", "nightly", "bare"}) {
    SCOPED_TRACE(name);
    const store::DecisionReadStats before = (*l)->DecisionReads();
    auto full = (*l)->DecisionsByCronJob("default", name, At(0, 0), At(23, 0), 0);
    ASSERT_TRUE(full.ok());
    for (const auto& d : *full) jobs += d.job_object.is_null() ? 0 : 1;
    const store::DecisionReadStats after = (*l)->DecisionReads();
    EXPECT_EQ(after.log_reads - before.log_reads, 0u);
    EXPECT_EQ(after.from_index - before.from_index, full->size());
    // web: nginx:1.25, then 1.26 with the canary label, then 1.25 again (the first template).
    // batch: two templates (batch:7, batch:8).
    const uint64_t templates = name == "web" || name == "batch" ? 2 : 1;
    EXPECT_EQ(after.template_reads - before.template_reads, templates);
  }
  EXPECT_GT(jobs, 20u);
  // The variety the comparison covers.
  const auto counts = Cli("audit --count -n default -o json --data-dir " + V2());
  for (const char* what :
       {"createJob", "updateStatus", "ConcurrencyForbid", "Superseded", "deleteJob"}) {
    EXPECT_NE(counts.out.find(what), std::string::npos) << what << "\n" << counts.out;
  }
}

TEST_F(CoveredRecords, EveryOutputIsByteIdenticalToTheDecisionLogs) {
  const std::vector<std::string> commands = {
      "audit --cronjob default/web -o json",
      "audit --cronjob default/web -o yaml",
      "audit --cronjob default/web -o csv",
      "audit --cronjob default/web -o table",
      "audit --cronjob default/batch -o json",
      "audit --cronjob default/batch -o yaml",
      "audit --cronjob default/nightly -o json",  // deleted since
      "audit --cronjob default/bare -o json",
      "audit --cronjob default/web --action createJob -o json",
      "audit --cronjob default/batch --reason ConcurrencyForbid -o yaml",
      "audit --cronjob default/web --since 2024-01-01T10:40:00Z --until 2024-01-01T11:45:00Z -o "
      "json",
      "audit --cronjob default/web --limit 7 -o json",
      "audit -n default -o json",
      "audit -n default -o yaml",
      "audit -n default -o table",
      "audit -n default --since 2024-01-01T11:00:00Z -o json",
      "audit -n default --limit 25 -o json",
      "audit -o json",
      "audit --count -n default -o json",
      std::string("report adherence -o json") + kWindow,
      std::string("report adherence -o yaml") + kWindow,
      std::string("report adherence -o table") + kWindow,
      std::string("report adherence -o csv") + kWindow,
      std::string("report adherence --slots -o json") + kWindow,
      std::string("report adherence --cronjob default/nightly --slots -o json") + kWindow,
  };
  for (const std::string& c : commands) {
    SCOPED_TRACE(c);
    // stdout and stderr (the continue token of a page) together.
    const auto v2 = Cli(c + " --data-dir " + V2(), true);
    ASSERT_EQ(v2.exit_code, 0) << v2.out;
    EXPECT_GT(v2.out.size(), 100u);
    for (const std::string& old : {V1(), V0()}) {
      const auto r = Cli(c + " --data-dir " + old, true);
      ASSERT_EQ(r.exit_code, 0) << r.out;
      EXPECT_EQ(r.out, v2.out) << old;
    }
  }
}

TEST_F(CoveredRecords, EveryApiAnswerIsByteIdenticalToTheDecisionLogs) {
  auto tzdb = model::OpenSystemTimeZoneDb({});
  ASSERT_TRUE(tzdb.ok());
  const std::string token = world_->dir().Sub("token");
  std::ofstream(token) << "t0ken\n";
  const std::vector<std::string> targets = {
      "/v1/decisions?cronjob=default/web&limit=1000",
      "/v1/decisions?cronjob=default/batch&limit=10",
      "/v1/decisions?cronjob=default/nightly&limit=1000",
      "/v1/decisions?namespace=default&limit=1000",
      "/v1/decisions?namespace=default&since=2024-01-01T11:00:00Z&limit=50",
      "/v1/decisions?cronjob=default/web&action=createJob&limit=1000",
      "/v1/decisions?cronjob=default/web&count=true",
      "/v1/cronjobs/default/web",
      "/v1/cronjobs/default/batch",
      "/v1/cronjobs/default/web/timeline?since=2024-01-01T10:00:00Z&until=2024-01-01T12:40:00Z",
      "/v1/cronjobs/default/batch/timeline?since=2024-01-01T10:00:00Z&until=2024-01-01T12:40:00Z",
      "/v1/reports/adherence?since=2024-01-01T10:00:00Z&until=2024-01-01T12:40:00Z",
  };
  std::map<std::string, std::vector<std::string>> bodies;  // target -> body per store
  for (const std::string& dir : {V2(), V1(), V0()}) {
    store::LedgerOptions o;
    o.path = dir;
    o.read_only = true;
    auto l = store::Ledger::Open(o);
    ASSERT_TRUE(l.ok());
    ApiOptions ao;
    ao.token_file = token;
    ao.rate_burst = 1000;
    Api api(**l, **tzdb, ao);
    for (const std::string& t : targets) {
      const ApiResponse r = api.Handle({"GET", t, "Bearer t0ken", "127.0.0.1"});
      EXPECT_EQ(r.status, 200) << t << ": " << r.body;
      bodies[t].push_back(r.body);
    }
  }
  for (const auto& [t, b] : bodies) {
    SCOPED_TRACE(t);
    EXPECT_GT(b[0].size(), 50u);
    EXPECT_EQ(b[1], b[0]) << "v1";
    EXPECT_EQ(b[2], b[0]) << "v0";
  }
}

}  // namespace
}  // namespace cronledger::audit
