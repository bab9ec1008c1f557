#include "ingest/kube_source.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/test_util.h"

namespace cronledger::ingest {
namespace {

using model::WatchEventType;
using store::testing::CronJobEvent;
using store::testing::JobEvent;

std::vector<std::string> Names(const std::vector<model::WatchEvent>& events) {
  std::vector<std::string> out;
  for (const model::WatchEvent& ev : events) out.push_back(ev.namespace_ + "/" + ev.name);
  return out;
}

// A relist compares the cluster with everything the view holds of the resource: the objects of
// that kind and apiVersion, Jobs with no CronJob in the view among them (an orphan, or one whose
// CronJob is gone), each with its stored bytes.
TEST(KubeSourceTest, KnownObjectsAreEveryObjectOfTheResourceTheViewHolds) {
  store::testing::TempDir dir;
  auto ledger = store::testing::OpenScratchLedger(dir);
  ASSERT_NE(ledger, nullptr);
  model::WatchEvent other = CronJobEvent(WatchEventType::kAdded, "ns", "b", "ub", "2");
  other.api_version = "cronledger.io/v1";
  store::UnitOfWork unit;
  unit.inputs.push_back(CronJobEvent(WatchEventType::kAdded, "ns", "a", "ua", "1"));
  unit.inputs.push_back(other);
  unit.inputs.push_back(JobEvent(WatchEventType::kAdded, "ns", "a-1", "j1", "3", "a", "ua"));
  unit.inputs.push_back(JobEvent(WatchEventType::kAdded, "ns", "gone-1", "j2", "4", "gone", "ug"));
  unit.inputs.push_back(JobEvent(WatchEventType::kAdded, "prod", "orphan", "j3", "5", "", ""));
  unit.inputs.push_back(JobEvent(WatchEventType::kAdded, "ns", "deleted", "j4", "6", "a", "ua"));
  unit.inputs.push_back(JobEvent(WatchEventType::kDeleted, "ns", "deleted", "j4", "7", "a", "ua"));
  ASSERT_TRUE(ledger->Commit(std::move(unit)).ok());

  auto cron_jobs = KnownObjects(*ledger, "batch/v1", model::ObjectKind::kCronJob);
  ASSERT_TRUE(cron_jobs.ok()) << cron_jobs.status().ToString();
  EXPECT_EQ(Names(*cron_jobs), std::vector<std::string>({"ns/a"}));
  EXPECT_EQ((*cron_jobs)[0].raw, store::testing::CronJobJson("ns", "a", "ua", "1"));
  EXPECT_EQ((*cron_jobs)[0].uid, "ua");

  auto ours = KnownObjects(*ledger, "cronledger.io/v1", model::ObjectKind::kCronJob);
  ASSERT_TRUE(ours.ok());
  EXPECT_EQ(Names(*ours), std::vector<std::string>({"ns/b"}));

  auto jobs = KnownObjects(*ledger, "batch/v1", model::ObjectKind::kJob);
  ASSERT_TRUE(jobs.ok());
  EXPECT_EQ(Names(*jobs), std::vector<std::string>({"ns/a-1", "ns/gone-1", "prod/orphan"}));
  EXPECT_EQ((*jobs)[1].owner_name, "gone");
  EXPECT_EQ((*jobs)[1].resource_version, "4");
}

}  // namespace
}  // namespace cronledger::ingest
