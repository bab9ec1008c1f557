// --shadow: the cluster (played by the test, as the built-in controller) creates the Job of one
// slot and misses the next: one MissedRun divergence, none for the match, and nothing written.
#include <fstream>

#include "audit/adherence.h"
#include "audit/api.h"
#include "audit/divergences.h"
#include "model/clock.h"
#include "store/test_util.h"
#include "tests/run/run_fixture.h"

namespace cronledger::app::testing {
namespace {

const kube::ResourceType& Batch() { return kube::BatchCronJobs(); }

// The Job the built-in controller would create for `slot`.
Json ClusterJob(const Json& cron_job, int64_t slot) {
  const std::string name = cron_job["metadata"]["name"];
  Json container = {{"name", "c"}, {"image", "busybox:1.36"}};
  Json job = {{"apiVersion", "batch/v1"}, {"kind", "Job"}};
  job["metadata"] = {
      {"name", JobName(name, slot)},
      {"namespace", cron_job["metadata"]["namespace"]},
      {"labels", {{"app", name}}},
      {"annotations",
       {{"team", "ops"},
        {"batch.kubernetes.io/cronjob-scheduled-timestamp", FormatRfc3339(Time::FromUnix(slot))}}},
      {"ownerReferences", Json::array({{{"apiVersion", "batch/v1"},
                                        {"kind", "CronJob"},
                                        {"name", name},
                                        {"uid", cron_job["metadata"]["uid"]},
                                        {"controller", true},
                                        {"blockOwnerDeletion", true}}})}};
  job["spec"]["template"]["spec"] = {{"restartPolicy", "Never"},
                                     {"containers", Json::array({container})}};
  return job;
}

TEST_F(RunFixture, ShadowRecordsAMissedRunAndNothingForAMatch) {
  auto cj = server_->Create(Batch(), CronJobObject(Batch(), "prod", "report", "*/5 * * * *"));
  ASSERT_TRUE(cj.ok());
  RunConfig config = Config(Batch());
  config.shadow = true;
  config.shadow_grace = std::chrono::seconds(60);
  StartAssembly(config);
  Settle(Batch());
  ShadowAuditor& auditor = *assembly_->auditor();

  // 00:05: the cluster creates the Job on time.
  clock_.AdvanceTo(Time::FromUnix(kStart + 300));
  ASSERT_TRUE(server_->Create(kube::BatchJobs(), ClusterJob(*cj, kStart + 300)).ok());
  clock_.AdvanceTo(Time::FromUnix(kStart + 301));
  Settle(Batch());
  // 00:10: it does not.
  clock_.AdvanceTo(Time::FromUnix(kStart + 601));
  Settle(Batch());
  auto n = auditor.Check();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u) << "within the grace period";
  clock_.AdvanceTo(Time::FromUnix(kStart + 601 + 61));
  n = auditor.Check();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);
  n = auditor.Check();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u) << "recorded once";

  auto divergences = audit::ListDivergences(*ledger_, {});
  ASSERT_TRUE(divergences.ok());
  ASSERT_EQ(divergences->size(), 1u);
  const audit::Divergence& d = (*divergences)[0];
  EXPECT_EQ(d.kind, audit::kMissedRun);
  EXPECT_EQ(d.namespace_, "prod");
  EXPECT_EQ(d.cron_job, "report");
  EXPECT_EQ(d.job, JobName("report", kStart + 600));
  EXPECT_EQ(d.detail["scheduledTime"], "2024-01-01T00:10:00Z");

  // The shadow adopted the cluster's Job of 00:05 (its decision log says createJob for it).
  bool adopted = false;
  ASSERT_TRUE(ledger_
                  ->ScanDecisions(1,
                                  [&](const model::Decision& dec) {
                                    if (dec.action == model::DecisionAction::kCreateJob &&
                                        dec.job_name == JobName("report", kStart + 300)) {
                                      adopted = true;
                                    }
                                    return true;
                                  })
                  .ok());
  EXPECT_TRUE(adopted);

  // It acted on nothing: only reads reached the API server.
  for (const auto& r : server_->requests()) {
    EXPECT_EQ(r.method, "GET") << r.method << " " << r.path;
  }

  // The missed Job shows up late: a LateRun with its skew.
  clock_.AdvanceTo(Time::FromUnix(kStart + 700));
  ASSERT_TRUE(server_->Create(kube::BatchJobs(), ClusterJob(*cj, kStart + 600)).ok());
  Settle(Batch());
  n = auditor.Check();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);
  divergences = audit::ListDivergences(*ledger_, {});
  ASSERT_TRUE(divergences.ok());
  ASSERT_EQ(divergences->size(), 2u);
  EXPECT_EQ((*divergences)[1].kind, audit::kLateRun);
  EXPECT_DOUBLE_EQ((*divergences)[1].detail["skewSeconds"].get<double>(), 100.0);

  // Queryable: by kind, by CronJob, paged by seq; and counted on /metrics.
  audit::DivergenceQuery q;
  q.kind = audit::kLateRun;
  auto late = audit::ListDivergences(*ledger_, q);
  ASSERT_TRUE(late.ok());
  ASSERT_EQ(late->size(), 1u);
  const Json j = audit::DivergenceJson((*late)[0]);
  EXPECT_EQ(j["kind"], "LateRun");
  EXPECT_EQ(j["namespace"], "prod");
  EXPECT_EQ(j["cronJob"], "report");
  EXPECT_EQ(j["job"], JobName("report", kStart + 600));
  EXPECT_EQ(j["detail"]["skewSeconds"], 100.0);
  q = {};
  q.cron_job = "other";
  EXPECT_TRUE(audit::ListDivergences(*ledger_, q)->empty());
  q = {};
  q.limit = 1;
  auto first = audit::ListDivergences(*ledger_, q);
  ASSERT_EQ(first->size(), 1u);
  EXPECT_EQ((*first)[0].kind, audit::kMissedRun);
  q.after_seq = (*first)[0].seq;
  auto next = audit::ListDivergences(*ledger_, q);
  ASSERT_EQ(next->size(), 1u);
  EXPECT_EQ((*next)[0].kind, audit::kLateRun);
  const std::string metrics = assembly_->RenderMetrics();
  EXPECT_NE(metrics.find("cronledger_shadow_divergences_total{kind=\"MissedRun\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("cronledger_shadow_divergences_total{kind=\"LateRun\"} 1\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("cronledger_shadow_divergences_total{kind=\"UnexpectedJob\"} 0\n"),
            std::string::npos);
}

// The shadow auditor over one built-in CronJob, prod/report every five minutes, settled.
class ShadowFixture : public RunFixture {
 protected:
  auto StartShadowOnReport() {
    auto cj = server_->Create(Batch(), CronJobObject(Batch(), "prod", "report", "*/5 * * * *"));
    if (!cj.ok()) return cj;
    RunConfig config = Config(Batch());
    config.shadow = true;
    StartAssembly(config);
    Settle(Batch());
    return cj;
  }
};

TEST_F(ShadowFixture, ShadowRecordsAJobNobodyAskedFor) {
  auto cj = StartShadowOnReport();
  ASSERT_TRUE(cj.ok());
  // At 00:02 the cluster creates a Job for a slot the schedule does not have.
  clock_.AdvanceTo(Time::FromUnix(kStart + 120));
  ASSERT_TRUE(server_->Create(kube::BatchJobs(), ClusterJob(*cj, kStart + 120)).ok());
  Settle(Batch());
  clock_.AdvanceTo(Time::FromUnix(kStart + 240));
  auto n = assembly_->auditor()->Check();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 1u);
  auto divergences = audit::ListDivergences(*ledger_, {});
  ASSERT_TRUE(divergences.ok());
  ASSERT_EQ(divergences->size(), 1u);
  EXPECT_EQ((*divergences)[0].kind, audit::kUnexpectedJob);
  EXPECT_EQ((*divergences)[0].job, JobName("report", kStart + 120));
}

TEST_F(ShadowFixture, ShadowIgnoresJobsOfOtherControllers) {
  auto cj = StartShadowOnReport();
  ASSERT_TRUE(cj.ok());
  // A Job of the same name and namespace whose controller is a cronledger.io CronJob (the CRD):
  // not the built-in controller's work, so not a divergence of it.
  clock_.AdvanceTo(Time::FromUnix(kStart + 120));
  Json job = ClusterJob(*cj, kStart + 120);
  job["metadata"]["ownerReferences"][0]["apiVersion"] = "cronledger.io/v1";
  ASSERT_TRUE(server_->Create(kube::BatchJobs(), job).ok());
  Settle(Batch());
  clock_.AdvanceTo(Time::FromUnix(kStart + 240));
  auto n = assembly_->auditor()->Check();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u);
  auto divergences = audit::ListDivergences(*ledger_, {});
  ASSERT_TRUE(divergences.ok());
  EXPECT_TRUE(divergences->empty());
}

// What the auditor recorded is what `report adherence` counts and /v1/divergences lists.
TEST_F(ShadowFixture, TheReportAndTheApiShowWhatTheAuditorRecorded) {
  auto cj = StartShadowOnReport();
  ASSERT_TRUE(cj.ok());
  // 00:05: the cluster creates no Job; 00:07: it creates one nobody asked for.
  clock_.AdvanceTo(Time::FromUnix(kStart + 301));
  Settle(Batch());
  clock_.AdvanceTo(Time::FromUnix(kStart + 420));
  ASSERT_TRUE(server_->Create(kube::BatchJobs(), ClusterJob(*cj, kStart + 420)).ok());
  Settle(Batch());
  clock_.AdvanceTo(Time::FromUnix(kStart + 600));
  auto n = assembly_->auditor()->Check();
  ASSERT_TRUE(n.ok());
  ASSERT_EQ(*n, 2u);

  audit::AdherenceOptions o;
  o.since = Time::FromUnix(kStart);
  o.until = Time::FromUnix(kStart + 900);
  o.with_slots = true;
  auto report = audit::ComputeAdherence(*ledger_, *tzdb_, o);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  ASSERT_EQ(report->items.size(), 1u);
  const std::map<std::string, uint64_t> counts = {
      {"MissedRun", 1}, {"LateRun", 0}, {"UnexpectedJob", 1}};
  EXPECT_EQ(report->items[0].divergences_by_kind, counts);
  EXPECT_EQ(report->totals.divergences_by_kind, counts);
  ASSERT_EQ(report->items[0].divergences.size(), 2u);
  EXPECT_EQ(report->items[0].divergences[0].job, JobName("report", kStart + 300));
  EXPECT_EQ(report->items[0].divergences[1].job, JobName("report", kStart + 420));
  o.since = Time::FromUnix(kStart + 600);  // recorded at 00:10: outside [00:10, ...) is nothing
  o.until = Time::FromUnix(kStart + 601);
  report = audit::ComputeAdherence(*ledger_, *tzdb_, o);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(report->totals.divergences_by_kind, counts) << "recorded at 00:10, in the window";

  // /v1/divergences answers the same records, each as `cronledger divergences -o json` prints it.
  store::testing::TempDir api_dir;
  std::ofstream(api_dir.Sub("token")) << "t0ken\n";
  audit::ApiOptions api_options;
  api_options.token_file = api_dir.Sub("token");
  audit::Api api(*ledger_, *tzdb_, api_options);
  auto get = [&](const std::string& target) {
    audit::ApiResponse r = api.Handle({"GET", target, "Bearer t0ken", "127.0.0.1"});
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    auto j = model::ParseJson(r.body);
    return j.ok() ? (*j)["items"] : Json();
  };
  auto all = audit::ListDivergences(*ledger_, {});
  ASSERT_TRUE(all.ok());
  Json items = Json::array();
  for (const audit::Divergence& d : *all) items.push_back(audit::DivergenceJson(d));
  EXPECT_EQ(get("/v1/divergences?cronjob=prod/report"), items);
  const Json missed = get("/v1/divergences?kind=MissedRun");
  ASSERT_EQ(missed.size(), 1u);
  EXPECT_EQ(missed[0]["detail"]["scheduledTime"], "2024-01-01T00:05:00Z");
  EXPECT_EQ(get("/v1/divergences?namespace=dev"), Json::array());
}

TEST(ShadowAuditorTest, AJobMatchedFromTheViewBeforeItsEventIsExpected) {
  // The view (ledger) can hold the cluster's Job before the auditor sees its watch event: the
  // pass matches it there first, and the event that follows must not make it an UnexpectedJob.
  store::testing::TempDir dir;
  store::LedgerOptions options;
  options.path = dir.path() + "/ledger";
  auto ledger = store::testing::OpenTestLedger(options);
  ASSERT_NE(ledger, nullptr);
  ManualClock wall(Time::FromUnix(kStart));
  ShadowAuditor auditor(*ledger, wall, std::chrono::seconds(20), nullptr);
  Json cj = {{"metadata", {{"name", "report"}, {"namespace", "prod"}, {"uid", "u1"}}}};
  wall.AdvanceTo(Time::FromUnix(kStart + 300));
  Json job = ClusterJob(cj, kStart + 300);
  job["metadata"]["uid"] = "job-uid";
  job["metadata"]["creationTimestamp"] = FormatRfc3339(Time::FromUnix(kStart + 300));
  auditor.Matched("prod", JobName("report", kStart + 300));
  model::WatchEvent ev;
  ev.type = model::WatchEventType::kAdded;
  ev.kind = model::ObjectKind::kJob;
  ev.namespace_ = "prod";
  ev.name = JobName("report", kStart + 300);
  ev.owner_name = "report";
  ev.raw = model::DumpJson(job);
  auditor.Observe({ev});
  wall.AdvanceTo(Time::FromUnix(kStart + 400));
  auto n = auditor.Check();
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u);
}

TEST(RunConfigTest, ShadowNeedsTheBuiltInResource) {
  RunConfig config;
  config.shadow = true;
  EXPECT_FALSE(ValidateRunConfig(config).ok());
  config.resource = kube::BatchCronJobs();
  EXPECT_TRUE(ValidateRunConfig(config).ok());
  config.workers = 0;
  EXPECT_FALSE(ValidateRunConfig(config).ok());
}

}  // namespace
}  // namespace cronledger::app::testing
