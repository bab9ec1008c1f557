#include "model/decision.h"

#include <gtest/gtest.h>

#include "model/objects.h"

namespace cronledger::model {
namespace {

Decision Sample(DecisionAction action) {
  Decision d;
  d.seq = 42;
  d.time = Time::FromUnix(1463652000, 123000000);
  d.cron_job = {"default", "hello", "uid-1"};
  d.action = action;
  d.cause = {7, 41, "timer"};
  d.policy = {"*/5 * * * *", "Europe/Rome", "Forbid", 200, false};
  return d;
}

TEST(DecisionCodec, EveryActionRoundTrips) {
  std::vector<Decision> all;
  Decision skipped = Sample(DecisionAction::kSkipped);
  skipped.scheduled_time = Time::FromUnix(1463651700);
  skipped.reason = std::string(skip_reason::kConcurrencyForbid);
  all.push_back(skipped);
  Decision create = Sample(DecisionAction::kCreateJob);
  create.scheduled_time = Time::FromUnix(1463652000);
  create.job_name = "hello-24394200";
  create.job_object = Json{{"kind", "Job"}, {"metadata", {{"name", "hello-24394200"}}}};
  all.push_back(create);
  Decision event = Sample(DecisionAction::kEvent);
  event.reason = "SuccessfulCreate";
  event.event_type = "Normal";
  event.message = "Created job hello-24394200";
  all.push_back(event);
  Decision requeue = Sample(DecisionAction::kRequeue);
  requeue.requeue_after = std::chrono::milliseconds(299'100);
  requeue.policy.time_zone.reset();
  requeue.policy.starting_deadline_seconds.reset();
  all.push_back(requeue);
  Decision status = Sample(DecisionAction::kUpdateStatus);
  status.status = Json{{"lastScheduleTime", "2016-05-19T10:00:00Z"}};
  all.push_back(status);
  all.push_back(Sample(DecisionAction::kScheduled));
  Decision del = Sample(DecisionAction::kDeleteJob);
  del.job_name = "hello-1";
  all.push_back(del);

  for (const auto& d : all) {
    const std::string bytes = CanonicalDecisionBytes(d);
    auto back = DecodeDecision(*ParseJson(bytes));
    ASSERT_TRUE(back.ok()) << bytes << ": " << back.status().ToString();
    EXPECT_EQ(*back, d) << bytes;
    EXPECT_EQ(CanonicalDecisionBytes(*back), bytes);
  }
}

TEST(DecisionCodec, ShapeMatchesDesign) {
  Decision d = Sample(DecisionAction::kRequeue);
  d.requeue_after = std::chrono::milliseconds(1500);
  const Json j = EncodeDecision(d);
  EXPECT_EQ(j["action"], "requeue");
  EXPECT_EQ(j["time"], "2016-05-19T10:00:00.123Z");
  EXPECT_EQ(j["cronJob"]["uid"], "uid-1");
  EXPECT_EQ(j["cause"]["tickSeq"], 7);
  EXPECT_EQ(j["policy"]["startingDeadlineSeconds"], 200);
  EXPECT_DOUBLE_EQ(j["requeueAfterSeconds"].get<double>(), 1.5);
  EXPECT_FALSE(j.contains("scheduledTime"));
}

TEST(DecisionCodec, RejectsUnknownAction) {
  Json j = EncodeDecision(Sample(DecisionAction::kEvent));
  j["action"] = "launchMissiles";
  EXPECT_FALSE(DecodeDecision(j).ok());
}

}  // namespace
}  // namespace cronledger::model
