// Kafka throughput (goal: the outbox at >= 50% of a raw idempotent producer). One
// librdkafka mock cluster (3 brokers, real Kafka protocol on local sockets) serves every run:
//   emit:   the outbox (emit::OutboxEmitter: ledger scan, JSON encoding of each decision, keys,
//           headers, position commits to RocksDB) draining DECISIONS committed decisions, vs the
//           peer: a raw librdkafka producer with the same settings (enable.idempotence, acks=all,
//           linger.ms=5) producing the same keys, payloads and headers, pre-encoded in memory;
//   ingest: ingest::KafkaEventSource reading EVENTS watch events (decode, one RocksDB unit per
//           batch with the offsets, view fold) into a fresh ledger, vs the peer: a raw consumer
//           assigned to the same partitions reading them to the end, touching every byte;
//   audit store: `cronledger audit-store` (app/support_audit_store.h) consuming the ledger and
//           decision streams the outbox produced from the emit ledger into a fresh audit store
//           (decode, the copy's commits in seq order, its audit trail), vs the peer: the raw
//           consumer of the same two topics.
// Every measurement uses a fresh topic; each pair alternates three times and the best is kept.
// The mock keeps ~5 MiB per partition, so the topics have PARTITIONS partitions.

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "app/support_audit_store.h"
#include "emit/ledger_record.h"
#include "emit/outbox_emitter.h"
#include "ingest/kafka_source.h"
#include "model/json.h"
#include "store/ledger.h"

namespace cl = cronledger;
using Clock = std::chrono::steady_clock;

namespace {

void QuietLog(const rd_kafka_t*, int, const char*, const char*) {}
void QuietFn(int, std::string_view, std::string_view) {}

rd_kafka_conf_t* Conf(const std::vector<std::pair<std::string, std::string>>& props) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, &QuietLog);
  char err[256];
  for (const auto& [k, v] : props) {
    CL_CHECK(rd_kafka_conf_set(conf, k.c_str(), v.c_str(), err, sizeof(err)) == RD_KAFKA_CONF_OK);
  }
  return conf;
}

double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Record {
  std::string key;
  std::string value;
  std::string seq;
};

std::unique_ptr<cl::store::Ledger> OpenLedger(const std::string& path) {
  cl::store::LedgerOptions lo;
  lo.path = path;  // default sync (kBatch), as `cronledger run` and `emit` use
  auto ledger = cl::store::Ledger::Open(lo);
  CL_CHECK(ledger.ok());
  return std::move(ledger).value();
}

// Units of one Tick and 4 decisions, round robin over 500 CronJobs.
std::vector<Record> CommitDecisions(cl::store::Ledger& ledger, int decisions) {
  for (int u = 0; u * 4 < decisions; ++u) {
    const std::string name = "cj-" + std::to_string(u % 500);
    const cl::Time now = cl::Time::FromUnix(1716112800 + 60 * u);
    cl::store::UnitOfWork unit;
    unit.inputs.emplace_back(cl::model::Tick{now, "bench", name, "timer"});
    for (int k = 0; k < 4; ++k) {
      cl::model::Decision d;
      d.time = now;
      d.cron_job = {"bench", name, "uid-" + name};
      d.action =
          k == 0 ? cl::model::DecisionAction::kScheduled : cl::model::DecisionAction::kCreateJob;
      d.scheduled_time = now;
      d.policy.schedule = "* * * * *";
      d.policy.concurrency_policy = "Allow";
      d.cause.trigger = "timer";
      unit.decisions.push_back(d);
    }
    CL_CHECK(ledger.Commit(std::move(unit)).ok());
  }
  std::vector<Record> out;
  CL_CHECK(ledger
               .ScanDecisions(1,
                              [&](const cl::model::Decision& d) {
                                out.push_back({cl::emit::KeyOfDecision(d),
                                               cl::model::DumpJson(cl::model::EncodeDecision(d)),
                                               std::to_string(d.seq)});
                                return true;
                              })
               .ok());
  return out;
}

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  CL_CHECK(m->err == RD_KAFKA_RESP_ERR_NO_ERROR);
  ++*static_cast<size_t*>(opaque);
}

// The peer of the outbox: the same records through a bare idempotent producer.
double RawProduce(const std::string& brokers, const std::string& topic,
                  const std::vector<Record>& records) {
  size_t acked = 0;
  rd_kafka_conf_t* conf = Conf({{"bootstrap.servers", brokers},
                                {"enable.idempotence", "true"},
                                {"acks", "all"},
                                {"linger.ms", "5"}});
  rd_kafka_conf_set_dr_msg_cb(conf, &OnDelivery);
  rd_kafka_conf_set_opaque(conf, &acked);
  char err[256];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  CL_CHECK(rk != nullptr);
  const auto t0 = Clock::now();
  const std::string schema(cl::emit::kDecisionSchema);
  for (const Record& r : records) {
    rd_kafka_headers_t* h = rd_kafka_headers_new(2);
    rd_kafka_header_add(h, cl::emit::kSchemaHeader.data(),
                        static_cast<ssize_t>(cl::emit::kSchemaHeader.size()), schema.data(),
                        static_cast<ssize_t>(schema.size()));
    rd_kafka_header_add(h, cl::emit::kSeqHeader.data(),
                        static_cast<ssize_t>(cl::emit::kSeqHeader.size()), r.seq.data(),
                        static_cast<ssize_t>(r.seq.size()));
    for (;;) {
      const rd_kafka_resp_err_t e = rd_kafka_producev(
          rk, RD_KAFKA_V_TOPIC(topic.c_str()),
          RD_KAFKA_V_KEY(const_cast<char*>(r.key.data()), r.key.size()),
          RD_KAFKA_V_VALUE(const_cast<char*>(r.value.data()), r.value.size()),
          RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      CL_CHECK(e == RD_KAFKA_RESP_ERR__QUEUE_FULL);
      rd_kafka_poll(rk, 10);
    }
    rd_kafka_poll(rk, 0);
  }
  CL_CHECK(rd_kafka_flush(rk, 120000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  const double s = Seconds(t0);
  CL_CHECK(acked == records.size());
  rd_kafka_destroy(rk);
  return s;
}

// The outbox of one stream of `ledger` to `topic` (as `source_id`), until it caught up.
void Emit(cl::store::Ledger& ledger, const std::string& brokers, const std::string& topic,
          cl::emit::EmitStream stream, const std::string& source_id) {
  cl::emit::OutboxEmitterOptions o;
  o.producer.brokers = brokers;
  o.producer.log = QuietFn;
  o.topic = topic;
  o.stream = stream;
  o.source_id = source_id;
  auto emitter = cl::emit::OutboxEmitter::Open(ledger, o);
  CL_CHECK(emitter.ok());
  const uint64_t head = *(*emitter)->Head();
  for (;;) {
    auto p = (*emitter)->Step(std::chrono::milliseconds(10));
    CL_CHECK(p.ok());
    if (p->position >= head) break;
  }
}

// The outbox from a fresh emission position to the ledger's head.
double OutboxProduce(cl::store::Ledger& ledger, const std::string& brokers,
                     const std::string& topic) {
  const auto t0 = Clock::now();
  Emit(ledger, brokers, topic, cl::emit::EmitStream::kDecisions, "");
  return Seconds(t0);
}

std::vector<std::pair<std::string, std::string>> WatchEvents(int events) {
  std::vector<std::pair<std::string, std::string>> out;
  for (int i = 0; i < events; ++i) {
    const std::string name = "cj-" + std::to_string(i % 500);
    cl::model::Json obj = {
        {"apiVersion", "batch/v1"},
        {"kind", "CronJob"},
        {"metadata",
         {{"name", name},
          {"namespace", "bench"},
          {"uid", "uid-" + name},
          {"resourceVersion", std::to_string(1000 + i)},
          {"labels", {{"team", "platform"}, {"tier", "batch"}}}}},
        {"spec",
         {{"schedule", "*/5 * * * *"},
          {"concurrencyPolicy", "Forbid"},
          {"jobTemplate",
           {{"spec",
             {{"template",
               {{"spec",
                 {{"restartPolicy", "Never"},
                  {"containers", {{{"name", "c"}, {"image", "busybox:1.36"}}}}}}}}}}}}}},
        {"status", {{"lastScheduleTime", "2024-05-19T10:00:00Z"}}}};
    cl::model::Json doc = {{"type", "MODIFIED"}, {"object", obj}};
    out.emplace_back("bench/" + name, cl::model::DumpJson(doc));
  }
  return out;
}

void Fill(const std::string& brokers, const std::string& topic,
          const std::vector<std::pair<std::string, std::string>>& records) {
  size_t acked = 0;
  rd_kafka_conf_t* conf = Conf({{"bootstrap.servers", brokers}, {"linger.ms", "5"}});
  rd_kafka_conf_set_dr_msg_cb(conf, &OnDelivery);
  rd_kafka_conf_set_opaque(conf, &acked);
  char err[256];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  CL_CHECK(rk != nullptr);
  for (const auto& [key, value] : records) {
    while (rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic.c_str()),
                             RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()),
                             RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
                             RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                             RD_KAFKA_V_END) != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_poll(rk, 10);
    }
  }
  CL_CHECK(rd_kafka_flush(rk, 120000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  CL_CHECK(acked == records.size());
  rd_kafka_destroy(rk);
}

// The peer of ingest: a bare consumer of every partition, from the beginning to the end.
double RawConsume(const std::string& brokers, const std::string& topic, int partitions,
                  size_t expected) {
  rd_kafka_conf_t* conf = Conf({{"bootstrap.servers", brokers},
                                {"group.id", "raw-" + topic},
                                {"enable.auto.commit", "false"}});
  char err[256];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
  CL_CHECK(rk != nullptr);
  rd_kafka_poll_set_consumer(rk);
  const auto t0 = Clock::now();
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int32_t p = 0; p < partitions; ++p) {
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
  }
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  size_t seen = 0;
  uint64_t sum = 0;  // touches every byte, as decoding would read it
  while (seen < expected) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
    if (m == nullptr) continue;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      ++seen;
      const auto* b = static_cast<const unsigned char*>(m->payload);
      for (size_t i = 0; i < m->len; ++i) sum += b[i];
    }
    rd_kafka_message_destroy(m);
  }
  const double s = Seconds(t0);
  CL_CHECK(sum > 0);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  return s;
}

double Ingest(const std::string& dir, const std::string& brokers, const std::string& topic,
              uint64_t expected) {
  auto ledger = OpenLedger(dir);
  cl::ingest::KafkaSourceOptions o;
  o.brokers = brokers;
  o.topic = topic;
  o.group_id = "ingest-" + topic;
  o.log = QuietFn;
  const auto t0 = Clock::now();
  auto source = cl::ingest::KafkaEventSource::Open(*ledger, o);
  CL_CHECK(source.ok());
  uint64_t events = 0;
  while (events < expected) {
    auto p = (*source)->Poll(std::chrono::milliseconds(100));
    CL_CHECK(p.ok());
    events += p->events;
  }
  const double s = Seconds(t0);
  CL_CHECK(ledger->Meta()->last_input_seq == expected);
  source->reset();
  ledger.reset();
  std::filesystem::remove_all(dir);
  return s;
}

double AuditStoreConsume(const std::string& dir, const std::string& brokers,
                         const std::string& prefix, uint64_t inputs, uint64_t decisions) {
  cl::app::audit_store::AuditStoreOptions o;
  o.brokers = brokers;
  o.topic_prefix = prefix;
  o.data_dir = dir;
  o.log = QuietFn;
  const auto t0 = Clock::now();
  auto store = cl::app::audit_store::AuditStore::Open(o);
  CL_CHECK(store.ok());
  auto round = (*store)->Round();
  CL_CHECK(round.ok());
  const double s = Seconds(t0);
  CL_CHECK(round->complete() && round->sources.size() == 1);
  CL_CHECK(round->sources[0].last_input_seq == inputs);
  CL_CHECK(round->sources[0].last_decision_seq == decisions);
  store->reset();
  std::filesystem::remove_all(dir);
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const int decisions = argc > 1 ? std::atoi(argv[1]) : 60000;
  const int events = argc > 2 ? std::atoi(argv[2]) : 40000;
  const int partitions = argc > 3 ? std::atoi(argv[3]) : 16;
  char tmpl[] = "/tmp/cronledger-kafka-bench-XXXXXX";
  const std::string dir = mkdtemp(tmpl);

  char err[256];
  rd_kafka_t* mock_rk = rd_kafka_new(RD_KAFKA_PRODUCER, Conf({}), err, sizeof(err));
  CL_CHECK(mock_rk != nullptr);
  rd_kafka_mock_cluster_t* mock = rd_kafka_mock_cluster_new(mock_rk, 3);
  CL_CHECK(mock != nullptr);
  const std::string brokers = rd_kafka_mock_cluster_bootstraps(mock);
  int topics = 0;
  auto new_topic = [&] {
    const std::string t = "bench-" + std::to_string(++topics);
    CL_CHECK(rd_kafka_mock_topic_create(mock, t.c_str(), partitions, 3) ==
             RD_KAFKA_RESP_ERR_NO_ERROR);
    return t;
  };

  auto ledger = OpenLedger(dir + "/emit");
  const std::vector<Record> records = CommitDecisions(*ledger, decisions);
  size_t bytes = 0;
  for (const Record& r : records) bytes += r.value.size();
  std::printf("emit: %zu decisions (%.0f bytes each), %d partitions, 3 mock brokers\n",
              records.size(), static_cast<double>(bytes) / records.size(), partitions);
  double raw = 1e100, outbox = 1e100;
  for (int i = 0; i < 3; ++i) {
    raw = std::min(raw, RawProduce(brokers, new_topic(), records));
    outbox = std::min(outbox, OutboxProduce(*ledger, brokers, new_topic()));
  }
  const double n = static_cast<double>(records.size());
  std::printf("raw idempotent producer: %10.0f decisions/s  (%.3f s)\n", n / raw, raw);
  std::printf("outbox (OutboxEmitter):  %10.0f decisions/s  (%.3f s)\n", n / outbox, outbox);
  std::printf("ratio outbox/raw: %.3f  (goal >= 0.5)\n", raw / outbox);

  // The audit store: both streams of the emit ledger, produced once.
  const uint64_t inputs = ledger->Meta()->last_input_seq;
  const std::string prefix = "audit";
  for (const char* log : {"ledger", "decisions"}) {
    CL_CHECK(rd_kafka_mock_topic_create(mock, (prefix + "." + log).c_str(), partitions, 3) ==
             RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  Emit(*ledger, brokers, prefix + ".ledger", cl::emit::EmitStream::kLedger, "replica-0");
  Emit(*ledger, brokers, prefix + ".decisions", cl::emit::EmitStream::kDecisions, "replica-0");
  std::printf("audit store: %llu input and %zu decision records of one replica\n",
              static_cast<unsigned long long>(inputs), records.size());
  double peer = 1e100, store = 1e100;
  for (int i = 0; i < 3; ++i) {
    peer =
        std::min(peer, RawConsume(brokers, prefix + ".ledger", partitions, inputs) +
                           RawConsume(brokers, prefix + ".decisions", partitions, records.size()));
    store = std::min(store, AuditStoreConsume(dir + "/audit-" + std::to_string(i), brokers, prefix,
                                              inputs, records.size()));
  }
  const double all = static_cast<double>(inputs + records.size());
  std::printf("raw consumer:            %10.0f records/s  (%.3f s)\n", all / peer, peer);
  std::printf("audit store:             %10.0f records/s  (%.3f s)\n", all / store, store);
  std::printf("ratio audit-store/raw: %.3f  (goal >= 0.5)\n", peer / store);
  ledger.reset();

  const auto watch = WatchEvents(events);
  bytes = 0;
  for (const auto& kv : watch) bytes += kv.second.size();
  std::printf("ingest: %zu watch events (%.0f bytes each)\n", watch.size(),
              static_cast<double>(bytes) / watch.size());
  const std::string watch_topic = new_topic();
  Fill(brokers, watch_topic, watch);
  double consume = 1e100, ingest = 1e100;
  for (int i = 0; i < 3; ++i) {
    consume = std::min(consume, RawConsume(brokers, watch_topic, partitions, watch.size()));
    ingest = std::min(
        ingest, Ingest(dir + "/ingest-" + std::to_string(i), brokers, watch_topic, watch.size()));
  }
  const double m = static_cast<double>(watch.size());
  std::printf("raw consumer:            %10.0f events/s  (%.3f s)\n", m / consume, consume);
  std::printf("ingest (KafkaEventSource): %8.0f events/s  (%.3f s)\n", m / ingest, ingest);
  std::printf("ratio ingest/raw: %.3f\n", consume / ingest);

  rd_kafka_mock_cluster_destroy(mock);
  rd_kafka_destroy(mock_rk);
  std::filesystem::remove_all(dir);
  return 0;
}
