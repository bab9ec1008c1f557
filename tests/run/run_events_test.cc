// The events.k8s.io/v1 recorder against the fixture: repeats within the window become a series on
// one Event, a different message or an expired window makes a new Event, memory stays bounded,
// and recording never waits for the API server (a bounded queue, one sender).
#include <algorithm>
#include <thread>

#include "emit/event_recorder.h"
#include "tests/run/run_fixture.h"

namespace cronledger::app::testing {
namespace {

class EventRecorderTest : public RunFixture {
 protected:
  // The Events on the server now.
  std::vector<Json> Events() {
    auto list = client_->List(kube::Events(), "prod", {});
    EXPECT_TRUE(list.ok());
    return list.ok() ? list->items : std::vector<Json>{};
  }
  // The Events on the server once `recorder` has sent what it was given.
  std::vector<Json> Events(emit::EventRecorder& recorder) {
    EXPECT_TRUE(recorder.Flush(std::chrono::seconds(30)));
    return Events();
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
  std::vector<Json> events = Events(recorder);
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
  EXPECT_EQ(Events(recorder).size(), 3u);

  // After the 6-minute window the same event starts a new Event.
  clock_.Advance(std::chrono::minutes(7));
  recorder.Record(Regarding("a"), "Warning", "FailedCreate", "Error creating job: boom");
  EXPECT_EQ(Events(recorder).size(), 4u);
  EXPECT_EQ(recorder.cached_series(), 1u);  // the stale ones were dropped
}

TEST_F(EventRecorderTest, MemoryIsBoundedAndADeletedEventStartsOver) {
  emit::EventRecorderOptions options;
  options.max_series = 2;
  emit::EventRecorder recorder(*client_, clock_, options);
  for (const char* name : {"a", "b", "c"}) {
    recorder.Record(Regarding(name), "Normal", "SuccessfulCreate", "Created job x");
  }
  ASSERT_TRUE(recorder.Flush(std::chrono::seconds(30)));
  EXPECT_EQ(recorder.cached_series(), 2u);
  // "a" was forgotten: its repeat is a new Event, not a series.
  recorder.Record(Regarding("a"), "Normal", "SuccessfulCreate", "Created job x");
  EXPECT_EQ(Events(recorder).size(), 4u);

  // The Event of a series is deleted (TTL): the next repeat creates a new one.
  std::vector<Json> events = Events(recorder);
  for (const Json& e : events) {
    ASSERT_TRUE(server_->Delete(kube::Events(), "prod", e["metadata"]["name"]).ok());
  }
  recorder.Record(Regarding("a"), "Normal", "SuccessfulCreate", "Created job x");
  events = Events(recorder);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_FALSE(events[0].contains("series"));
  EXPECT_EQ(recorder.stats().failed, 0u);
}

TEST_F(EventRecorderTest, RecordingNeverWaitsForTheApiServerAndTheQueueIsBounded) {
  std::unique_ptr<kube::PocoKubeClient> events_client = NewClient("events/1");
  emit::EventRecorderOptions options;
  options.max_queued = 3;
  emit::EventRecorder recorder(*events_client, clock_, options);
  // The API server stops answering the recorder's POSTs: the first Event waits in the server...
  server_->HoldRequests("POST", "events/");
  recorder.Record(Regarding("a"), "Normal", "SuccessfulCreate", "Created job a");
  ASSERT_TRUE(Eventually([&] { return server_->held_requests() == 1; }));
  // ...and Record() still returns at once: three more wait in the queue, the fifth is dropped.
  for (const char* name : {"b", "c", "d", "e"}) {
    recorder.Record(Regarding(name), "Normal", "SuccessfulCreate",
                    std::string("Created job ") + name);
  }
  EXPECT_EQ(recorder.queued(), 3u);
  EXPECT_EQ(recorder.stats().dropped, 1u);
  EXPECT_FALSE(recorder.Flush(std::chrono::milliseconds(50)));
  EXPECT_TRUE(Events().empty());

  // Answered again: the four are sent in the order they were recorded.
  server_->ReleaseHeld();
  std::vector<Json> events = Events(recorder);
  ASSERT_EQ(events.size(), 4u);
  std::vector<std::string> names;
  for (const Json& e : events) names.push_back(e["regarding"]["name"]);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(recorder.stats().created, 4u);
  EXPECT_EQ(recorder.queued(), 0u);
}

TEST_F(EventRecorderTest, StopSendsWhatIsQueuedWithinItsDrainTimeAndDropsTheRest) {
  std::unique_ptr<kube::PocoKubeClient> events_client = NewClient("events/1");
  emit::EventRecorder recorder(*events_client, clock_, {});
  recorder.Record(Regarding("a"), "Normal", "SuccessfulCreate", "Created job a");
  recorder.Record(Regarding("b"), "Normal", "SuccessfulCreate", "Created job b");
  recorder.Stop(std::chrono::seconds(30));
  EXPECT_EQ(Events().size(), 2u);
  EXPECT_EQ(recorder.stats().dropped, 0u);

  // After Stop nothing more is sent.
  recorder.Record(Regarding("c"), "Normal", "SuccessfulCreate", "Created job c");
  EXPECT_EQ(recorder.stats().dropped, 1u);
  EXPECT_EQ(Events().size(), 2u);

  // A server that does not answer: Stop gives up after its drain time and counts the rest.
  emit::EventRecorder stuck(*events_client, clock_, {});
  server_->HoldRequests("POST", "events/");
  stuck.Record(Regarding("d"), "Normal", "SuccessfulCreate", "Created job d");
  ASSERT_TRUE(Eventually([&] { return server_->held_requests() == 1; }));
  stuck.Record(Regarding("e"), "Normal", "SuccessfulCreate", "Created job e");
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    server_->ReleaseHeld();
  });
  stuck.Stop(std::chrono::milliseconds(50));
  release.join();
  EXPECT_EQ(stuck.stats().dropped, 1u);  // "e"; "d" was in flight and is sent
  EXPECT_EQ(stuck.stats().created, 1u);
}

}  // namespace
}  // namespace cronledger::app::testing
