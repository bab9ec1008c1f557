#pragma once

// Test helpers for the Kafka paths: an in-process librdkafka mock cluster (real Kafka protocol on
// real sockets, ephemeral ports), a reader that returns everything a topic holds, ledger fixtures
// and the consumer rule of docs/kafka.md. Test code only; it uses librdkafka directly.

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "emit/ledger_record.h"
#include "model/decision.h"
#include "model/json.h"
#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::kafka_testing {

// librdkafka log lines are dropped: the tests assert outcomes, and broker outages are expected.
inline void Quiet(int, std::string_view, std::string_view) {}

class MockCluster {
 public:
  explicit MockCluster(int brokers = 3);
  ~MockCluster();
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  std::string bootstraps() const { return rd_kafka_mock_cluster_bootstraps(mock_); }
  rd_kafka_mock_cluster_t* mock() { return mock_; }
  void CreateTopic(const std::string& topic, int partitions);
  // Brokers are numbered from 1.
  void SetAllBrokersDown(bool down);

 private:
  int brokers_;
  rd_kafka_t* rk_ = nullptr;
  rd_kafka_mock_cluster_t* mock_ = nullptr;
};

struct Message {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string key;
  std::string value;
  std::map<std::string, std::string> headers;
};

// Everything the topic holds, in (partition, offset) order: reads each of `partitions` from its
// low to its high watermark. Fails the current test (ADD_FAILURE) when that takes longer than
// `timeout`.
std::vector<Message> ReadTopic(const std::string& bootstraps, const std::string& topic,
                               int partitions,
                               std::chrono::milliseconds timeout = std::chrono::seconds(30));

// A plain producer kept open across calls (a new client per call costs a metadata round trip).
class SyncProducer {
 public:
  explicit SyncProducer(const std::string& bootstraps);
  ~SyncProducer();
  SyncProducer(const SyncProducer&) = delete;
  SyncProducer& operator=(const SyncProducer&) = delete;
  // Produces each (key, value) and waits for the acknowledgements. Returns the partition and
  // offset of each, in order.
  std::vector<std::pair<int32_t, int64_t>> Produce(
      const std::string& topic, const std::vector<std::pair<std::string, std::string>>& records);

 private:
  rd_kafka_t* rk_ = nullptr;
  std::vector<std::pair<int32_t, int64_t>> result_;
};

// Produces each (key, value) with one plain producer and waits for the acknowledgements.
// Returns the partition and offset the broker assigned to each, in order.
std::vector<std::pair<int32_t, int64_t>> ProduceSync(
    const std::string& bootstraps, const std::string& topic,
    const std::vector<std::pair<std::string, std::string>>& records);

// A scheduled-decision fixture for CronJob ns/name.
model::Decision MakeDecision(const std::string& ns, const std::string& name, int i);
// Commits `units` units, each a Tick and `per_unit` decisions of one CronJob (round robin over
// `cronjobs`, "ns/name" each). Returns the decisions as the ledger assigned them.
std::vector<model::Decision> CommitDecisions(store::Ledger& ledger,
                                             const std::vector<std::string>& cronjobs, int units,
                                             int per_unit, int first = 0);

// The consumer rule of docs/kafka.md: per key, drop a record whose `cronledger-seq` is not greater
// than the last one applied. Returns key -> the seqs applied, in stream order. With several
// ledgers on one topic the rule is per (key, cronledger-source): the key is then "source|key".
std::map<std::string, std::vector<uint64_t>> ApplyDedupe(const std::vector<Message>& messages);
// key -> seqs of the decision log, in log order.
std::map<std::string, std::vector<uint64_t>> DecisionSeqsByKey(store::Ledger& ledger);

// A batch/v1 CronJob for the fixture API server: one busybox container, restartPolicy Never;
// `concurrencyPolicy` only when one is given.
model::Json CronJobManifest(const std::string& ns, const std::string& name,
                            const std::string& schedule,
                            const std::string& concurrency_policy = "");

// Polls `done` until it is true or `timeout` passes; returns its last value. Most predicates
// block in a consumer poll themselves; for those that do not, a millisecond between checks keeps
// the loop from taking a core from the threads it waits for.
template <typename Fn>
bool PollUntil(Fn done, std::chrono::milliseconds timeout = std::chrono::seconds(30)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// seq -> the record's P.ledger value, for every input of the ledger.
inline std::map<uint64_t, std::string> LedgerValues(store::Ledger& ledger) {
  std::map<uint64_t, std::string> out;
  CL_CHECK(ledger
               .ScanInputs(1, /*with_raw=*/true,
                           [&](const store::LogRecord& r) {
                             out[r.seq] = model::DumpJson(emit::EncodeLedgerRecord(r));
                             return true;
                           })
               .ok());
  return out;
}

}  // namespace cronledger::kafka_testing
