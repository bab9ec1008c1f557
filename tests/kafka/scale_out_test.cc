// Scale-out (docs/kafka.md "Operating model"): consumer-group members with ONE LEDGER EACH share
// the watch topic's partitions with the cooperative-sticky assignor (each member here is a full
// client with its own RocksDB ledger, as a separate process would be). A member that is assigned a
// partition its ledger never read reads it from the beginning (rebuilding the view of that
// partition's CronJobs); one that gets a partition back resumes at its stored offset. While the
// producer keeps writing, one member leaves (with CRONLEDGER_LONG=1 a third joins first); at the
// end every partition's owner holds all of that partition's events, once each, in per-key order,
// and no ledger holds any event twice or out of order.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <set>
#include <thread>

#include "ingest/kafka_source.h"
#include "store/test_util.h"
#include "tests/kafka/kafka_testing.h"

namespace cronledger {
namespace {

using kafka_testing::MockCluster;
using namespace std::chrono_literals;

constexpr int kPartitions = 6;
constexpr int kCronJobs = 24;

struct Member {
  Member(const std::string& dir, const ingest::KafkaSourceOptions& options) {
    store::LedgerOptions o;
    o.path = dir;
    o.sync = store::SyncMode::kNone;
    ledger = store::Ledger::Open(o).value();
    source = ingest::KafkaEventSource::Open(*ledger, options).value();
  }
  void Poll() {
    auto p = source->Poll(10ms);
    EXPECT_TRUE(p.ok()) << p.status().ToString();
  }
  // Per CronJob, the resourceVersions of its events in log order.
  std::map<std::string, std::vector<int>> Events() const {
    std::map<std::string, std::vector<int>> out;
    EXPECT_TRUE(ledger
                    ->ScanInputs(1, false,
                                 [&](const store::LogRecord& r) {
                                   const auto& e = std::get<model::WatchEvent>(r.input);
                                   out[e.name].push_back(std::stoi(e.resource_version));
                                   return true;
                                 })
                    .ok());
    return out;
  }
  std::unique_ptr<store::Ledger> ledger;
  std::unique_ptr<ingest::KafkaEventSource> source;
};

std::string Event(const std::string& name, int rv) {
  return R"({"type":"MODIFIED","object":)" +
         store::testing::CronJobJson("prod", name, "uid-" + name, std::to_string(rv)) + "}";
}

TEST(KafkaScaleOut, MembersWithTheirOwnLedgersHandOverPartitionsWithoutLossOrRepeats) {
  MockCluster cluster;
  const std::string topic = "cronledger.watch";
  cluster.CreateTopic(topic, kPartitions);
  store::testing::TempDir dir;
  ingest::KafkaSourceOptions o;
  o.brokers = cluster.bootstraps();
  o.topic = topic;
  o.group_id = "cronledger-scale";
  o.log = kafka_testing::Quiet;
  o.batch_messages = 20;
  o.properties = {{"partition.assignment.strategy", "cooperative-sticky"},
                  {"session.timeout.ms", "6000"},
                  {"heartbeat.interval.ms", "100"}};

  // The producer writes while the group changes: 20 rounds of one event per CronJob, each
  // CronJob's resourceVersions increasing.
  // The test releases rounds in phases (so that the group changes while the stream is moving).
  std::atomic<int> produced_rounds{0};
  std::mutex gate_mu;
  std::condition_variable gate_cv;
  int allowed_rounds = 0;
  auto allow = [&](int rounds) {
    std::lock_guard lock(gate_mu);
    allowed_rounds = rounds;
    gate_cv.notify_all();
  };
  std::map<int32_t, std::map<std::string, std::vector<int>>> by_partition;  // what was written
  std::map<int32_t, int64_t> ends;
  std::thread producer([&] {
    kafka_testing::SyncProducer sync(cluster.bootstraps());
    for (int round = 0; round < 20; ++round) {
      {
        std::unique_lock lock(gate_mu);
        gate_cv.wait(lock, [&] { return round < allowed_rounds; });
      }
      std::vector<std::pair<std::string, std::string>> records;
      for (int c = 0; c < kCronJobs; ++c) {
        const std::string name = "cj" + std::to_string(c);
        records.emplace_back("prod/" + name, Event(name, 1 + round * kCronJobs + c));
      }
      const auto where = sync.Produce(topic, records);
      for (int c = 0; c < kCronJobs; ++c) {
        const auto [p, offset] = where[static_cast<size_t>(c)];
        by_partition[p]["cj" + std::to_string(c)].push_back(1 + round * kCronJobs + c);
        ends[p] = std::max(ends[p], offset + 1);
      }
      produced_rounds.store(round + 1);
    }
  });

  // Released and joined on every exit path (a failed ASSERT returns early).
  struct Joiner {
    std::thread& t;
    std::function<void()> release;
    ~Joiner() {
      release();
      if (t.joinable()) t.join();
    }
  } joiner{producer, [&] { allow(20); }};
  std::vector<std::unique_ptr<Member>> members;
  members.push_back(std::make_unique<Member>(dir.Sub("a"), o));
  members.push_back(std::make_unique<Member>(dir.Sub("b"), o));
  auto poll_all = [&] {
    for (auto& m : members) {
      if (m) m->Poll();
    }
  };
  auto owners = [&] {
    std::map<int32_t, int> owner;
    for (size_t i = 0; i < members.size(); ++i) {
      if (!members[i]) continue;
      for (const auto& [p, next] : members[i]->source->Assignment()) {
        EXPECT_FALSE(owner.count(p)) << "partition " << p << " owned twice";
        owner[p] = static_cast<int>(i);
      }
    }
    return owner;
  };
  auto sharing = [&](size_t n) {
    return [&, n] {
      poll_all();
      size_t live = 0;
      for (auto& m : members) live += m && !m->source->Assignment().empty() ? 1 : 0;
      return live == n && owners().size() == static_cast<size_t>(kPartitions);
    };
  };
  // Until `rounds` are produced and every member has ingested something.
  auto stream_until = [&](int rounds) {
    allow(rounds);
    return kafka_testing::PollUntil(
        [&] {
          poll_all();
          for (auto& m : members) {
            if (m && m->ledger->Meta().value().last_input_seq == 0) return false;
          }
          return produced_rounds.load() >= rounds;
        },
        60s);
  };
  ASSERT_TRUE(kafka_testing::PollUntil(sharing(2), 60s)) << "two members never shared";
  ASSERT_TRUE(stream_until(6));

  // CRONLEDGER_LONG=1: a third member joins mid-stream first, and partitions move to it
  // (cooperative: only those). The mock coordinator takes ~15 s for the two cooperative rounds,
  // so the default run covers a member leaving only.
  const char* long_run = std::getenv("CRONLEDGER_LONG");
  if (long_run != nullptr && std::string(long_run) == "1") {
    members.push_back(std::make_unique<Member>(dir.Sub("c"), o));
    ASSERT_TRUE(kafka_testing::PollUntil(sharing(3), 60s)) << "the third member got nothing";
    ASSERT_TRUE(stream_until(10));
  }

  // The first member leaves while the rest of the stream is being produced (its revocation
  // commits what it read).
  allow(20);
  members[0]->source.reset();
  const auto a_events = members[0]->Events();
  members[0].reset();
  ASSERT_TRUE(kafka_testing::PollUntil(sharing(members.size() - 1), 60s))
      << "the leaver's partitions stayed";
  producer.join();

  // Drain: every partition's owner reaches the end of it.
  ASSERT_TRUE(kafka_testing::PollUntil(
      [&] {
        poll_all();
        for (const auto& [p, owner] : owners()) {
          const auto assignment = members[static_cast<size_t>(owner)]->source->Assignment();
          auto end = ends.find(p);
          if (end != ends.end() && assignment.at(p) < end->second) return false;
        }
        return owners().size() == static_cast<size_t>(kPartitions);
      },
      60s));

  // Zero lost: each partition's owner holds every event of that partition's CronJobs, in order.
  // Zero repeated: no ledger holds an event twice or out of order (per CronJob strictly rising).
  const auto owner = owners();
  std::vector<std::map<std::string, std::vector<int>>> held(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i]) held[i] = members[i]->Events();
  }
  held[0] = a_events;
  size_t cronjobs_checked = 0;
  for (const auto& [p, cronjobs] : by_partition) {
    const auto& events = held[static_cast<size_t>(owner.at(p))];
    for (const auto& [name, rvs] : cronjobs) {
      ASSERT_TRUE(events.count(name)) << name << " missing from the owner of partition " << p;
      EXPECT_EQ(events.at(name), rvs) << name << " on partition " << p;
      ++cronjobs_checked;
    }
  }
  EXPECT_EQ(cronjobs_checked, static_cast<size_t>(kCronJobs));
  for (const auto& ledger_events : held) {
    for (const auto& [name, rvs] : ledger_events) {
      for (size_t k = 1; k < rvs.size(); ++k) EXPECT_LT(rvs[k - 1], rvs[k]) << name;
    }
  }
  // The handover was real: some partition was read by more than one member.
  size_t readers_total = 0;
  for (const auto& ledger_events : held) readers_total += ledger_events.size();
  EXPECT_GT(readers_total, static_cast<size_t>(kCronJobs));
}

}  // namespace
}  // namespace cronledger
