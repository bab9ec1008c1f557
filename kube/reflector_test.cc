#include "kube/reflector.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <thread>

#include "kube/testing/client_fixture.h"

namespace cronledger::kube {
namespace {

using testing::KubeClientFixture;

constexpr auto kWait = std::chrono::seconds(10);  // upper bound only

// An object the caller knows (ReflectorOptions::known_objects), decoded as the ledger holds it.
model::WatchEvent Known(const Json& object) {
  model::WatchDecoder decoder;
  model::DecodedDocument d = decoder.DecodeCopy(object.dump());
  EXPECT_EQ(d.events.size(), 1u);
  return d.events.empty() ? model::WatchEvent{} : d.events.front();
}

// Records what the reflector delivers, as the ingest adapter would append it to the ledger.
class RecordingSink : public ReflectorSink {
 public:
  struct Entry {
    std::string type;  // ADDED/MODIFIED/DELETED, or CHECKPOINT
    std::string name;
    bool synthetic = false;
    std::string checkpoint;
  };

  Status OnEvent(const ReflectorEvent& event) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (fail_after_ >= 0 && events_ >= fail_after_) return Status::IoError("ledger full");
    ++events_;
    entries_.push_back({std::string(model::WatchEventTypeName(event.event.type)), event.event.name,
                        event.synthetic, event.checkpoint});
    cv_.notify_all();
    return Status::Ok();
  }
  Status OnCheckpoint(const std::string& rv) override {
    std::lock_guard<std::mutex> lock(mu_);
    entries_.push_back({"CHECKPOINT", "", false, rv});
    cv_.notify_all();
    return Status::Ok();
  }
  void OnNotice(const ReflectorNotice& notice) override {
    std::lock_guard<std::mutex> lock(mu_);
    notices_.push_back(notice);
    cv_.notify_all();
  }

  bool WaitFor(const std::function<bool()>& pred) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kWait, pred);
  }
  // Waits until an entry of `type` for `name` has arrived.
  bool WaitForEntry(const std::string& type, const std::string& name) {
    return WaitFor([&] {
      for (const Entry& e : entries_) {
        if (e.type == type && e.name == name) return true;
      }
      return false;
    });
  }
  bool WaitForNotice(ReflectorNotice::Kind kind, int count = 1) {
    return WaitFor([&] {
      int n = 0;
      for (const auto& x : notices_) n += x.kind == kind;
      return n >= count;
    });
  }
  std::vector<Entry> entries() {
    std::lock_guard<std::mutex> lock(mu_);
    return entries_;
  }
  std::vector<ReflectorNotice> notices() {
    std::lock_guard<std::mutex> lock(mu_);
    return notices_;
  }
  void FailAfter(int n) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_after_ = n;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Entry> entries_;
  std::vector<ReflectorNotice> notices_;
  int events_ = 0;
  int fail_after_ = -1;
};

class ReflectorTest : public KubeClientFixture {
 protected:
  // Tests that care assert Stop()'s status themselves; here it only joins the thread.
  void TearDown() override { (void)Stop(); }

  void StartReflector(ReflectorOptions options) {
    options.type = BatchJobs();
    options.namespace_ = "default";
    options.page_size = 2;
    reflector_ = std::make_unique<Reflector>(*client_, sleeper_, sink_, std::move(options));
    thread_ = std::thread([this] { run_status_ = reflector_->Run(cancel_); });
  }
  Status Stop() {
    cancel_.Cancel();
    if (thread_.joinable()) thread_.join();
    return run_status_;
  }
  void Create(const std::string& name) {
    ASSERT_TRUE(server_->Create(BatchJobs(), JobObject("default", name)).ok());
  }
  int Requests(const std::string& needle) {
    int n = 0;
    for (const auto& r : server_->requests()) {
      n += (r.path + "?" + r.query).find(needle) != std::string::npos;
    }
    return n;
  }
  int CountEntries(const std::string& type, const std::string& name) {
    int n = 0;
    for (const auto& e : sink_.entries()) n += e.type == type && e.name == name;
    return n;
  }

  RecordingSink sink_;
  Cancellation cancel_;
  std::unique_ptr<Reflector> reflector_;
  std::thread thread_;
  Status run_status_;
};

TEST_F(ReflectorTest, ListsThenWatches) {
  Create("a");
  Create("b");
  Create("c");
  StartReflector({});
  ASSERT_TRUE(sink_.WaitForNotice(ReflectorNotice::Kind::kListed));
  ASSERT_TRUE(server_->WaitForWatches(1, kWait));
  Create("d");
  ASSERT_TRUE(sink_.WaitForEntry("ADDED", "d"));
  EXPECT_TRUE(Stop().ok());
  const auto entries = sink_.entries();
  ASSERT_EQ(entries.size(), 5u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(entries[i].type, "ADDED");
    EXPECT_TRUE(entries[i].synthetic);
    EXPECT_TRUE(entries[i].checkpoint.empty());  // not a resume point until the list is done
  }
  EXPECT_EQ(entries[3].type, "CHECKPOINT");
  EXPECT_EQ(entries[4].name, "d");
  EXPECT_FALSE(entries[4].synthetic);
  EXPECT_EQ(entries[4].checkpoint, std::to_string(server_->resource_version()));
  EXPECT_EQ(reflector_->resource_version(), entries[4].checkpoint);
  EXPECT_EQ(reflector_->known_count(), 4u);
  EXPECT_EQ(Requests("limit=2"), 2);  // three objects in pages of two
}

TEST_F(ReflectorTest, ResumesFromLastVersionAfterADroppedConnection) {
  Create("a");
  StartReflector({});
  ASSERT_TRUE(server_->WaitForWatches(1, kWait));
  Create("b");
  ASSERT_TRUE(sink_.WaitForEntry("ADDED", "b"));
  const std::string rv_b = reflector_->resource_version();
  server_->DropWatches();
  ASSERT_TRUE(sink_.WaitForNotice(ReflectorNotice::Kind::kWatchEnded));
  Create("c");
  ASSERT_TRUE(sink_.WaitForEntry("ADDED", "c"));
  EXPECT_TRUE(Stop().ok());
  const auto notices = sink_.notices();
  bool saw_drop = false;
  for (const auto& n : notices) saw_drop = saw_drop || n.end == WatchEnd::kDropped;
  EXPECT_TRUE(saw_drop);
  EXPECT_EQ(Requests("limit="), 1);  // no relist
  EXPECT_EQ(Requests("watch=1&resourceVersion=" + rv_b), 1);
  EXPECT_EQ(CountEntries("ADDED", "b"), 1);  // nothing delivered twice
  EXPECT_EQ(CountEntries("ADDED", "c"), 1);
  ASSERT_FALSE(sleeper_.waits().empty());  // backed off before reconnecting
  EXPECT_GE(sleeper_.waits()[0], std::chrono::milliseconds(800));
}

TEST_F(ReflectorTest, ExpiredWatchRelistsAndSynthesizesTheDifference) {
  Create("keep");
  Create("vanish");
  Create("change");
  StartReflector({});
  ASSERT_TRUE(sink_.WaitForNotice(ReflectorNotice::Kind::kListed));
  ASSERT_TRUE(server_->WaitForWatches(1, kWait));
  // While the watch is wedged, the cluster moves on and compacts away what it missed.
  server_->SetWatchesStalled(true);
  ASSERT_TRUE(server_->Delete(BatchJobs(), "default", "vanish").ok());
  Create("appear");
  Json changed = *server_->Get(BatchJobs(), "default", "change");
  changed["metadata"]["labels"]["v"] = "2";
  ASSERT_TRUE(server_->Update(BatchJobs(), changed).ok());
  server_->Compact();
  server_->ExpireWatches();
  ASSERT_TRUE(sink_.WaitForNotice(ReflectorNotice::Kind::kListed, 2));
  server_->SetWatchesStalled(false);
  EXPECT_TRUE(Stop().ok());

  std::vector<RecordingSink::Entry> relist;
  bool after_expiry = false;
  int checkpoints = 0;
  for (const auto& e : sink_.entries()) {
    if (e.type == "CHECKPOINT" && ++checkpoints == 1) {
      after_expiry = true;
      continue;
    }
    if (after_expiry && e.type != "CHECKPOINT") relist.push_back(e);
  }
  ASSERT_EQ(relist.size(), 3u);
  EXPECT_EQ(relist[0].type, "ADDED");
  EXPECT_EQ(relist[0].name, "appear");
  EXPECT_EQ(relist[1].type, "MODIFIED");
  EXPECT_EQ(relist[1].name, "change");
  EXPECT_EQ(relist[2].type, "DELETED");
  EXPECT_EQ(relist[2].name, "vanish");
  for (const auto& e : relist) EXPECT_TRUE(e.synthetic);
  EXPECT_EQ(reflector_->known_count(), 3u);
  EXPECT_EQ(reflector_->resource_version(), std::to_string(server_->resource_version()));
}

TEST_F(ReflectorTest, RestartsFromAStoredResourceVersionWithoutListing) {
  Create("a");
  const std::string stored = std::to_string(server_->resource_version());
  Create("b");  // happened while the controller was down
  ReflectorOptions options;
  options.resource_version = stored;
  options.known_objects = {Known(*server_->Get(BatchJobs(), "default", "a"))};
  StartReflector(options);
  ASSERT_TRUE(sink_.WaitForEntry("ADDED", "b"));
  EXPECT_TRUE(Stop().ok());
  EXPECT_EQ(Requests("limit="), 0);
  EXPECT_EQ(CountEntries("ADDED", "a"), 0);
}

TEST_F(ReflectorTest, StoredVersionTooOldRelistsAgainstKnownObjects) {
  Create("a");
  Create("gone");
  const std::string stored = std::to_string(server_->resource_version());
  const Json known_a = *server_->Get(BatchJobs(), "default", "a");
  const Json known_gone = *server_->Get(BatchJobs(), "default", "gone");
  ASSERT_TRUE(server_->Delete(BatchJobs(), "default", "gone").ok());
  server_->Compact();
  ReflectorOptions options;
  options.resource_version = stored;
  options.known_objects = {Known(known_a), Known(known_gone)};
  StartReflector(options);
  ASSERT_TRUE(sink_.WaitForNotice(ReflectorNotice::Kind::kListed));
  EXPECT_TRUE(Stop().ok());
  const auto entries = sink_.entries();
  ASSERT_EQ(entries.size(), 2u);  // "a" is unchanged: only the deletion and the checkpoint
  EXPECT_EQ(entries[0].type, "DELETED");
  EXPECT_EQ(entries[0].name, "gone");
  EXPECT_TRUE(entries[0].synthetic);
  EXPECT_EQ(entries[1].type, "CHECKPOINT");
}

TEST_F(ReflectorTest, StalledStreamIsDetectedAndResumed) {
  Create("a");
  ReflectorOptions options;
  options.stall_timeout = std::chrono::milliseconds(150);
  StartReflector(options);
  ASSERT_TRUE(sink_.WaitForNotice(ReflectorNotice::Kind::kListed));
  server_->SetWatchesStalled(true);
  Create("b");
  ASSERT_TRUE(sink_.WaitForNotice(ReflectorNotice::Kind::kWatchEnded));
  server_->SetWatchesStalled(false);
  ASSERT_TRUE(sink_.WaitForEntry("ADDED", "b"));
  EXPECT_TRUE(Stop().ok());
  EXPECT_EQ(sink_.notices()[1].end, WatchEnd::kStalled);
  EXPECT_EQ(CountEntries("ADDED", "b"), 1);
}

TEST_F(ReflectorTest, SinkFailureStopsWithoutAdvancing) {
  Create("a");
  StartReflector({});
  ASSERT_TRUE(sink_.WaitForNotice(ReflectorNotice::Kind::kListed));
  ASSERT_TRUE(server_->WaitForWatches(1, kWait));
  const std::string before = reflector_->resource_version();
  sink_.FailAfter(1);
  Create("b");
  thread_.join();
  EXPECT_EQ(run_status_.code(), Status::Code::kIoError);
  EXPECT_EQ(reflector_->resource_version(), before);
  EXPECT_EQ(reflector_->known_count(), 1u);
}

}  // namespace
}  // namespace cronledger::kube
