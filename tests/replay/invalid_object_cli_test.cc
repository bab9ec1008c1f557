// A stored CronJob that does not decode, and a CronJob with a stored Job that does not, on a store
// recorded by the real controller loop: the
// controller's record of why it did not act on it is in `audit` and `why`, `state` answers with
// the object's error, and `replay --verify` reproduces the record byte for byte.

#include <gtest/gtest.h>

#include <string>

#include "controller/watch_events.h"
#include "model/json.h"
#include "reconciler/job_builder.h"
#include "tests/replay/sim_world.h"
#include "tests/testing/cli.h"

namespace cronledger::replay {
namespace {

using cli_test::Cli;
using cli_test::CliResult;
using testing::At;

constexpr const char* kError =
    "stored CronJob: spec.startingDeadlineSeconds: expected integer, got number";

model::Json Json(const CliResult& r) {
  auto j = model::ParseJson(r.out);
  EXPECT_TRUE(j.ok()) << r.out.substr(0, 400);
  return j.ok() ? *j : model::Json::object();
}

class InvalidObjectCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    world_ = new testing::SimWorld(At(9, 59, 30), std::chrono::minutes(2));
    world_->Apply(testing::Manifest("good", "*/5 * * * *"));
    // What a ledger written before ingest validated CronJobs can hold: 1e20 is not an int64.
    model::Json poison = model::EncodeCronJob(testing::Manifest("poison", "*/5 * * * *"));
    poison["metadata"]["uid"] = "uid-poison";
    poison["metadata"]["resourceVersion"] = "1";
    poison["metadata"]["creationTimestamp"] = "2024-01-01T09:00:00Z";
    poison["spec"]["startingDeadlineSeconds"] = 1e20;
    auto ev = controller::MakeWatchEvent(model::WatchEventType::kAdded, poison);
    CL_CHECK(ev.ok());
    // A decodable CronJob with a Job whose status the model cannot hold.
    model::Json owner = model::EncodeCronJob(testing::Manifest("jobowner", "*/5 * * * *"));
    owner["metadata"]["uid"] = "uid-jobowner";
    owner["metadata"]["resourceVersion"] = "2";
    owner["metadata"]["creationTimestamp"] = "2024-01-01T09:00:00Z";
    auto owner_ev = controller::MakeWatchEvent(model::WatchEventType::kAdded, owner);
    CL_CHECK(owner_ev.ok());
    const model::Json bad_job = {{"apiVersion", "batch/v1"},
                                 {"kind", "Job"},
                                 {"metadata",
                                  {{"name", "jobowner-bad"},
                                   {"namespace", "default"},
                                   {"uid", "uid-jobowner-bad"},
                                   {"resourceVersion", "3"},
                                   {"ownerReferences",
                                    {{{"apiVersion", "batch/v1"},
                                      {"kind", "CronJob"},
                                      {"name", "jobowner"},
                                      {"uid", "uid-jobowner"},
                                      {"controller", true}}}}}},
                                 {"status", {{"conditions", "Complete"}}}};
    auto job_ev = controller::MakeWatchEvent(model::WatchEventType::kAdded, bad_job);
    CL_CHECK(job_ev.ok());
    world_->Ingest({*ev, *owner_ev, *job_ev});
    world_->RunUntil(At(10, 12));
    world_->CloseLedger();
    data_ = " --data-dir " + world_->data_dir();
  }
  static void TearDownTestSuite() {
    delete world_;
    world_ = nullptr;
  }
  static testing::SimWorld* world_;
  static std::string data_;
};
testing::SimWorld* InvalidObjectCli::world_ = nullptr;
std::string InvalidObjectCli::data_;

TEST_F(InvalidObjectCli, AuditShowsTheRecordAndTheOtherCronJobActs) {
  const CliResult poison = Cli("audit --cronjob default/poison -o json" + data_);
  ASSERT_EQ(poison.exit_code, 0) << poison.out;
  const model::Json items = Json(poison)["items"];
  ASSERT_EQ(items.size(), 1u) << poison.out;
  EXPECT_EQ(items[0]["action"], "skipped");
  EXPECT_EQ(items[0]["reason"], "InvalidObject");
  EXPECT_EQ(items[0]["message"], kError);
  EXPECT_EQ(items[0]["cronJob"]["uid"], "uid-poison");
  EXPECT_FALSE(items[0].contains("scheduledTime"));

  const CliResult by_reason = Cli("audit --reason InvalidObject -o json" + data_);
  ASSERT_EQ(by_reason.exit_code, 0) << by_reason.out;
  EXPECT_EQ(Json(by_reason)["items"].size(), 2u);

  const CliResult job = Cli("audit --cronjob default/jobowner -o json" + data_);
  ASSERT_EQ(job.exit_code, 0) << job.out;
  const model::Json job_items = Json(job)["items"];
  ASSERT_EQ(job_items.size(), 1u) << job.out;
  EXPECT_EQ(job_items[0]["reason"], "InvalidObject");
  EXPECT_EQ(job_items[0]["message"], "stored Job jobowner-bad: status.conditions: expected array");
  EXPECT_EQ(job_items[0]["cronJob"]["uid"], "uid-jobowner");

  const CliResult good = Cli("audit --cronjob default/good --action createJob -o json" + data_);
  ASSERT_EQ(good.exit_code, 0) << good.out;
  EXPECT_EQ(Json(good)["items"].size(), 3u) << good.out;  // 10:00, 10:05 and 10:10
}

TEST_F(InvalidObjectCli, WhyShowsTheRecord) {
  const CliResult text = Cli("why default/poison --scheduled 2024-01-01T10:05:00Z" + data_);
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_NE(text.out.find(std::string("cannot be read: ") + kError), std::string::npos) << text.out;
  EXPECT_NE(text.out.find(std::string("skipped, InvalidObject: ") + kError), std::string::npos)
      << text.out;
  const CliResult j = Cli("why default/poison --scheduled 2024-01-01T10:05:00Z -o json" + data_);
  ASSERT_EQ(j.exit_code, 0) << j.out;
  EXPECT_EQ(Json(j)["items"][0]["verdict"], "no record") << j.out;
}

TEST_F(InvalidObjectCli, ReplayVerifyReproducesTheRecord) {
  const CliResult r = Cli("replay --verify -o json" + data_);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  const model::Json j = Json(r);
  EXPECT_EQ(j["match"], true);
  EXPECT_EQ(j["items"][0]["sha256"], j["items"][1]["sha256"]);
  const CliResult one = Cli("replay --verify -o json --cronjob default/poison" + data_);
  ASSERT_EQ(one.exit_code, 0) << one.out;
  EXPECT_EQ(Json(one)["items"][1]["decisions"], 1);
  const CliResult job = Cli("replay --verify -o json --cronjob default/jobowner" + data_);
  ASSERT_EQ(job.exit_code, 0) << job.out;
  EXPECT_EQ(Json(job)["match"], true) << job.out;
  EXPECT_EQ(Json(job)["items"][1]["decisions"], 1);
}

TEST_F(InvalidObjectCli, StateAnswersWithTheObjectsError) {
  const CliResult j = Cli("state default/poison --at 2024-01-01T10:11:00Z -o json" + data_);
  ASSERT_EQ(j.exit_code, 0) << j.out;
  const model::Json item = Json(j)["items"][0];
  EXPECT_EQ(item["exists"], true);
  EXPECT_EQ(item["error"], kError);
  EXPECT_EQ(item["cronJobObject"]["uid"], "uid-poison");
  EXPECT_EQ(item["accounting"]["blockedReason"], "InvalidObject") << item.dump();
  EXPECT_TRUE(item.contains("lastPass")) << item.dump();

  const CliResult table = Cli("state default/poison --at 2024-01-01T10:11:00Z" + data_);
  ASSERT_EQ(table.exit_code, 0) << table.out;
  EXPECT_NE(table.out.find(std::string("cannot be read: ") + kError), std::string::npos)
      << table.out;

  const CliResult good = Cli("state default/good --at 2024-01-01T10:11:00Z -o json" + data_);
  ASSERT_EQ(good.exit_code, 0) << good.out;
  EXPECT_FALSE(Json(good)["items"][0].contains("error"));
}

}  // namespace
}  // namespace cronledger::replay
