// The events.k8s.io/v1 recorder against the fixture: repeats within the window become a series on
// one Event, a different message or an expired window makes a new Event, memory stays bounded.
#include "emit/event_recorder.h"
#include "tests/run/run_fixture.h"

namespace cronledger::app::testing {
namespace {

class EventRecorderTest : public RunFixture {
 protected:
  std::vector<Json> Events() {
    auto list = client_->List(kube::Events(), "prod", {});
    EXPECT_TRUE(list.ok());
    return list.ok() ? list->items : std::vector<Json>{};
  }
  emit::EventRegarding Regarding(const std::string& name) {
    return {"cronledger.io/v1", "CronJob", "prod", name, "uid-" + name};
  }
};

TEST_F(EventRecorderTest, RepeatsBecomeASeries) {
  emit::EventRecorder recorder(*client_, clock_, {});
  recorder.Record(Regarding("a"), "Warning", "FailedCreate", "Error creating job: boom");
  clock_.Advance(std::chrono::seconds(30));
  recorder.Record(Regarding("a"), "Warning", "FailedCreate", "Error creating job: boom");
  clock_.Advance(std::chrono::seconds(30));
  recorder.Record(Regarding("a"), "Warning", "FailedCreate", "Error creating job: boom");
  std::vector<Json> events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["series"]["count"], 3);
  EXPECT_EQ(events[0]["series"]["lastObservedTime"], "2024-01-01T00:01:00.000000Z");
  EXPECT_EQ(events[0]["eventTime"], "2024-01-01T00:00:00.000000Z");
  EXPECT_EQ(events[0]["reportingController"], "cronjob-controller");
  EXPECT_EQ(events[0]["action"], "Create");
  EXPECT_EQ(events[0]["regarding"]["kind"], "CronJob");
  EXPECT_EQ(recorder.stats().created, 1u);
  EXPECT_EQ(recorder.stats().aggregated, 2u);

  // Another message, another object: new Events.
  recorder.Record(Regarding("a"), "Warning", "FailedCreate", "Error creating job: other");
  recorder.Record(Regarding("b"), "Warning", "FailedCreate", "Error creating job: boom");
  EXPECT_EQ(Events().size(), 3u);

  // After the 6-minute window the same event starts a new Event.
  clock_.Advance(std::chrono::minutes(7));
  recorder.Record(Regarding("a"), "Warning", "FailedCreate", "Error creating job: boom");
  EXPECT_EQ(Events().size(), 4u);
  EXPECT_EQ(recorder.cached_series(), 1u);  // the stale ones were dropped
}

TEST_F(EventRecorderTest, MemoryIsBoundedAndADeletedEventStartsOver) {
  emit::EventRecorderOptions options;
  options.max_series = 2;
  emit::EventRecorder recorder(*client_, clock_, options);
  for (const char* name : {"a", "b", "c"}) {
    recorder.Record(Regarding(name), "Normal", "SuccessfulCreate", "Created job x");
  }
  EXPECT_EQ(recorder.cached_series(), 2u);
  // "a" was forgotten: its repeat is a new Event, not a series.
  recorder.Record(Regarding("a"), "Normal", "SuccessfulCreate", "Created job x");
  EXPECT_EQ(Events().size(), 4u);

  // The Event of a series is deleted (TTL): the next repeat creates a new one.
  std::vector<Json> events = Events();
  for (const Json& e : events) {
    ASSERT_TRUE(server_->Delete(kube::Events(), "prod", e["metadata"]["name"]).ok());
  }
  recorder.Record(Regarding("a"), "Normal", "SuccessfulCreate", "Created job x");
  events = Events();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].contains("series"));
  EXPECT_EQ(recorder.stats().failed, 0u);
}

}  // namespace
}  // namespace cronledger::app::testing
