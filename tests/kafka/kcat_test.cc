// kcat (Debian's Kafka client, an independent implementation of the consumer side) reads the
// decision stream the outbox produced; what it prints must decode to the RocksDB decision log.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "emit/outbox_emitter.h"
#include "model/json.h"
#include "store/test_util.h"
#include "tests/kafka/kafka_testing.h"

namespace cronledger {
namespace {

using namespace std::chrono_literals;

constexpr const char* kKcat = "/usr/bin/kcat";

// Runs a command and returns its stdout.
std::string RunCommand(const std::string& command, int* exit_status) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  *exit_status = ::pclose(pipe);
  return out;
}

TEST(Kcat, ReadsTheDecisionStreamAsTheLedgerHoldsIt) {
  if (!std::filesystem::exists(kKcat)) GTEST_SKIP() << "kcat is not installed";
  store::testing::TempDir dir;
  kafka_testing::MockCluster cluster;
  const std::string topic = "audit.decisions";  // --kafka-topic-prefix audit
  cluster.CreateTopic(topic, 3);
  store::LedgerOptions lo;
  lo.path = dir.Sub("ledger");
  lo.sync = store::SyncMode::kNone;
  auto ledger = store::Ledger::Open(lo).value();
  const auto log =
      kafka_testing::CommitDecisions(*ledger, {"prod/backup", "prod/report", "dev/sync"}, 20, 2);

  emit::OutboxEmitterOptions o;
  o.producer.brokers = cluster.bootstraps();
  o.producer.log = kafka_testing::Quiet;
  o.topic = topic;
  auto emitter = emit::OutboxEmitter::Open(*ledger, o).value();
  ASSERT_TRUE(kafka_testing::PollUntil([&] {
    auto p = emitter->Step(50ms);
    return !p.ok() || p->position >= log.size();
  }));
  ASSERT_EQ(emitter->progress().position, log.size());

  int status = -1;
  const std::string out = RunCommand(std::string(kKcat) + " -C -q -e -J -b " +
                                         cluster.bootstraps() + " -t " + topic + " -X log_level=0",
                                     &status);
  ASSERT_EQ(status, 0) << out;
  std::map<std::string, std::vector<uint64_t>> seqs_by_key;
  size_t lines = 0;
  size_t start = 0;
  while (start < out.size()) {
    const size_t nl = out.find('\n', start);
    const std::string line = out.substr(start, nl - start);
    start = nl == std::string::npos ? out.size() : nl + 1;
    if (line.empty()) continue;
    ++lines;
    auto j = model::ParseJson(line);
    ASSERT_TRUE(j.ok()) << line;
    ASSERT_TRUE((*j)["payload"].is_string()) << line;
    auto payload = model::ParseJson((*j)["payload"].get<std::string>());
    ASSERT_TRUE(payload.ok()) << line;
    auto d = model::DecodeDecision(*payload);
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    ASSERT_GE(d->seq, 1u);
    ASSERT_LE(d->seq, log.size());
    EXPECT_EQ(*d, log[d->seq - 1]);
    EXPECT_EQ((*j)["key"], d->cron_job.namespace_ + "/" + d->cron_job.name);
    // kcat prints headers as a flat [name, value, ...] array.
    const model::Json want_headers = {"cronledger-schema", "cronledger.decision/v1",
                                      "cronledger-seq", std::to_string(d->seq)};
    EXPECT_EQ((*j)["headers"], want_headers) << line;
    seqs_by_key[(*j)["key"].get<std::string>()].push_back(d->seq);
  }
  EXPECT_EQ(lines, log.size());
  // kcat reads partitions in parallel, so order is only comparable per key.
  EXPECT_EQ(seqs_by_key, kafka_testing::DecisionSeqsByKey(*ledger));
}

}  // namespace
}  // namespace cronledger
