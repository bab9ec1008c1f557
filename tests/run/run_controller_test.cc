// Controller mode end to end: a CronJob of the CRD resource and of batch/v1 gets its Jobs with
// the upstream name, labels, annotations and owner reference, its status through the status
// subresource, events.k8s.io/v1 Events, and the creation-skew histogram.
#include "kube/testing/wire_json.h"
#include "tests/run/run_fixture.h"

namespace cronledger::app::testing {
namespace {

class RunControllerTest : public RunFixture,
                          public ::testing::WithParamInterface<kube::ResourceType> {};

TEST_P(RunControllerTest, CreatesTheUpstreamJobStatusAndEvent) {
  const kube::ResourceType type = GetParam();
  auto cj = server_->Create(type, CronJobObject(type, "prod", "backup", "*/5 * * * *"));
  ASSERT_TRUE(cj.ok()) << cj.status().ToString();
  const std::string uid = (*cj)["metadata"]["uid"];
  StartAssembly(Config(type));
  Settle(type);
  EXPECT_EQ(ViewJobCount(), 0u);

  clock_.AdvanceTo(Time::FromUnix(kStart + 5 * 60 + 1));
  Settle(type);

  const std::string name = JobName("backup", kStart + 5 * 60);
  std::optional<Json> job = server_->Get(kube::BatchJobs(), "prod", name);
  ASSERT_TRUE(job.has_value()) << "no job " << name;
  const Json& meta = (*job)["metadata"];
  EXPECT_EQ(meta["labels"]["app"], "backup");
  EXPECT_EQ(meta["annotations"]["team"], "ops");
  EXPECT_EQ(meta["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
            "2024-01-01T00:05:00Z");
  Json owner = {{"apiVersion", type.ApiVersion()},
                {"kind", "CronJob"},
                {"name", "backup"},
                {"uid", uid},
                {"controller", true},
                {"blockOwnerDeletion", true}};
  EXPECT_EQ(meta["ownerReferences"], Json::array({owner}));
  EXPECT_EQ(ViewJobCount(), 1u);

  std::optional<Json> live = server_->Get(type, "prod", "backup");
  ASSERT_TRUE(live.has_value());
  EXPECT_EQ((*live)["status"]["lastScheduleTime"], "2024-01-01T00:05:00Z");
  ASSERT_EQ((*live)["status"]["active"].size(), 1u);
  EXPECT_EQ((*live)["status"]["active"][0]["name"], name);
  EXPECT_EQ((*live)["status"]["active"][0]["uid"], meta["uid"]);
  bool status_put = false;
  for (const auto& r : server_->requests()) {
    if (r.method == "PUT" && r.path == kube::ObjectPath(type, "prod", "backup", "status")) {
      status_put = true;
    }
  }
  EXPECT_TRUE(status_put) << "status not written through the status subresource";

  auto events = client_->List(kube::Events(), "prod", {});
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->items.size(), 1u);
  const Json& ev = events->items[0];
  EXPECT_EQ(ev["reason"], "SuccessfulCreate");
  EXPECT_EQ(ev["note"], "Created job " + name);
  EXPECT_EQ(ev["type"], "Normal");
  EXPECT_EQ(ev["reportingController"], "cronjob-controller");
  EXPECT_EQ(ev["regarding"]["name"], "backup");
  EXPECT_EQ(ev["regarding"]["uid"], uid);
  EXPECT_EQ(ev["regarding"]["apiVersion"], type.ApiVersion());

  // Created at 00:05:01 for the 00:05:00 slot: one observation of 1 s (bucket le=1).
  const emit::HistogramSnapshot skew = assembly_->metrics().CreationSkew();
  EXPECT_EQ(skew.count, 1u);
  EXPECT_EQ(skew.cumulative[0], 1u);
  EXPECT_DOUBLE_EQ(skew.sum, 1.0);
  EXPECT_NE(assembly_->metrics().RenderPrometheus().find(
                "cronjob_controller_job_creation_skew_duration_seconds_bucket{le=\"1\"} 1"),
            std::string::npos);

  // The next slot: a second Job, the first stays (history limits are not reached).
  clock_.AdvanceTo(Time::FromUnix(kStart + 10 * 60 + 1));
  Settle(type);
  EXPECT_TRUE(server_->Get(kube::BatchJobs(), "prod", JobName("backup", kStart + 600)));
  EXPECT_EQ(ViewJobCount(), 2u);
}

// The ledger keeps each object as the API server sent it: the bytes of the watch event's object,
// and for a listed item its bytes with the list's kind and apiVersion in front (which is where
// the server writes them on a single object, so the two agree). The fixture writes the real
// server's field order, which no re-serialization by cronledger would reproduce.
TEST_P(RunControllerTest, TheLedgerHoldsTheBytesTheServerSent) {
  const kube::ResourceType type = GetParam();
  // One CronJob the start-up list delivers, one a watch event delivers.
  ASSERT_TRUE(server_->Create(type, CronJobObject(type, "prod", "listed", "*/5 * * * *")).ok());
  StartAssembly(Config(type));
  Settle(type);
  ASSERT_TRUE(server_->Create(type, CronJobObject(type, "prod", "watched", "*/5 * * * *")).ok());
  clock_.AdvanceTo(Time::FromUnix(kStart + 5 * 60 + 1));
  Settle(type);

  int compared = 0;
  for (const auto* t : {&type, &kube::BatchJobs()}) {
    const auto kind = t == &type ? model::ObjectKind::kCronJob : model::ObjectKind::kJob;
    auto listed = client_->List(*t, "prod", {});
    ASSERT_TRUE(listed.ok());
    for (const Json& item : listed->items) {
      const std::string name = item["metadata"]["name"];
      std::optional<Json> live = server_->Get(*t, "prod", name);
      ASSERT_TRUE(live.has_value()) << name;
      auto stored = ledger_->GetObject(kind, "prod", name);
      ASSERT_TRUE(stored.ok()) << name << ": " << stored.status().ToString();
      EXPECT_EQ(stored->raw, kube::testing::WireJson(*live)) << name;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 4);  // two CronJobs (their status written) and their two Jobs
}

std::string ResourceName(const ::testing::TestParamInfo<kube::ResourceType>& p) {
  return p.param.group == "batch" ? "Batch" : "Crd";
}

INSTANTIATE_TEST_SUITE_P(Resources, RunControllerTest,
                         ::testing::Values(kube::CronledgerCronJobs(), kube::BatchCronJobs()),
                         ResourceName);

}  // namespace
}  // namespace cronledger::app::testing
