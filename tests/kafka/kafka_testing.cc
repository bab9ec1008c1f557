#include "tests/kafka/kafka_testing.h"

#include <gtest/gtest.h>

namespace cronledger::kafka_testing {
namespace {

void QuietLog(const rd_kafka_t*, int, const char*, const char*) {}

rd_kafka_conf_t* QuietConf() {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  rd_kafka_conf_set_log_cb(conf, &QuietLog);
  return conf;
}

void Set(rd_kafka_conf_t* conf, const char* key, const std::string& value) {
  char err[256];
  if (rd_kafka_conf_set(conf, key, value.c_str(), err, sizeof(err)) != RD_KAFKA_CONF_OK) {
    ADD_FAILURE() << key << ": " << err;
  }
}

}  // namespace

MockCluster::MockCluster(int brokers) : brokers_(brokers) {
  char err[256];
  rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, QuietConf(), err, sizeof(err));
  CL_CHECK(rk_ != nullptr);
  mock_ = rd_kafka_mock_cluster_new(rk_, brokers);
  CL_CHECK(mock_ != nullptr);
}

MockCluster::~MockCluster() {
  rd_kafka_mock_cluster_destroy(mock_);
  rd_kafka_destroy(rk_);
}

void MockCluster::CreateTopic(const std::string& topic, int partitions) {
  const rd_kafka_resp_err_t err =
      rd_kafka_mock_topic_create(mock_, topic.c_str(), partitions, brokers_);
  CL_CHECK(err == RD_KAFKA_RESP_ERR_NO_ERROR);
}

void MockCluster::SetAllBrokersDown(bool down) {
  for (int32_t b = 1; b <= brokers_; ++b) {
    const rd_kafka_resp_err_t err =
        down ? rd_kafka_mock_broker_set_down(mock_, b) : rd_kafka_mock_broker_set_up(mock_, b);
    CL_CHECK(err == RD_KAFKA_RESP_ERR_NO_ERROR);
  }
}

std::vector<Message> ReadTopic(const std::string& bootstraps, const std::string& topic,
                               int partitions, std::chrono::milliseconds timeout) {
  rd_kafka_conf_t* conf = QuietConf();
  Set(conf, "bootstrap.servers", bootstraps);
  Set(conf, "group.id", "cronledger-test-reader");
  Set(conf, "enable.auto.commit", "false");
  char err[256];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, err, sizeof(err));
  CL_CHECK(rk != nullptr);
  rd_kafka_poll_set_consumer(rk);
  std::map<int32_t, int64_t> high;
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int32_t p = 0; p < partitions; ++p) {
    int64_t lo = 0, hi = 0;
    const rd_kafka_resp_err_t e =
        rd_kafka_query_watermark_offsets(rk, topic.c_str(), p, &lo, &hi, 10000);
    EXPECT_EQ(e, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(e);
    if (hi > lo) high[p] = hi;
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = lo;
  }
  rd_kafka_assign(rk, list);
  rd_kafka_topic_partition_list_destroy(list);
  std::vector<Message> out;
  std::map<int32_t, int64_t> next;
  auto done = [&] {
    for (const auto& [p, hi] : high) {
      if (next[p] < hi) return false;
    }
    return true;
  };
  const bool complete = PollUntil(
      [&] {
        if (done()) return true;
        rd_kafka_message_t* m = rd_kafka_consumer_poll(rk, 100);
        if (m == nullptr) return false;
        if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
          Message msg;
          msg.partition = m->partition;
          msg.offset = m->offset;
          if (m->key) msg.key.assign(static_cast<const char*>(m->key), m->key_len);
          if (m->payload) msg.value.assign(static_cast<const char*>(m->payload), m->len);
          rd_kafka_headers_t* hdrs = nullptr;
          if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            const char* name;
            const void* val;
            size_t size;
            for (size_t i = 0; !rd_kafka_header_get_all(hdrs, i, &name, &val, &size); ++i) {
              msg.headers[name] = std::string(static_cast<const char*>(val), size);
            }
          }
          next[m->partition] = m->offset + 1;
          out.push_back(std::move(msg));
        }
        rd_kafka_message_destroy(m);
        return false;
      },
      timeout);
  EXPECT_TRUE(complete) << "topic " << topic << " not read to its end";
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  std::stable_sort(out.begin(), out.end(), [](const Message& a, const Message& b) {
    return a.partition != b.partition ? a.partition < b.partition : a.offset < b.offset;
  });
  return out;
}

namespace {
void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
  auto* out = static_cast<std::vector<std::pair<int32_t, int64_t>>*>(opaque);
  CL_CHECK(m->err == RD_KAFKA_RESP_ERR_NO_ERROR);
  (*out)[reinterpret_cast<uintptr_t>(m->_private)] = {m->partition, m->offset};
}
}  // namespace

SyncProducer::SyncProducer(const std::string& bootstraps) {
  rd_kafka_conf_t* conf = QuietConf();
  Set(conf, "bootstrap.servers", bootstraps);
  Set(conf, "linger.ms", "1");
  rd_kafka_conf_set_dr_msg_cb(conf, &OnDelivery);
  rd_kafka_conf_set_opaque(conf, &result_);
  char err[256];
  rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof(err));
  CL_CHECK(rk_ != nullptr);
}

SyncProducer::~SyncProducer() { rd_kafka_destroy(rk_); }

std::vector<std::pair<int32_t, int64_t>> SyncProducer::Produce(
    const std::string& topic, const std::vector<std::pair<std::string, std::string>>& records) {
  result_.assign(records.size(), {-1, -1});
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& [key, value] = records[i];
    const rd_kafka_resp_err_t e = rd_kafka_producev(
        rk_, RD_KAFKA_V_TOPIC(topic.c_str()),
        RD_KAFKA_V_KEY(const_cast<char*>(key.data()), key.size()),
        RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<uintptr_t>(i))), RD_KAFKA_V_END);
    CL_CHECK(e == RD_KAFKA_RESP_ERR_NO_ERROR);
  }
  EXPECT_EQ(rd_kafka_flush(rk_, 30000), RD_KAFKA_RESP_ERR_NO_ERROR);
  return result_;
}

std::vector<std::pair<int32_t, int64_t>> ProduceSync(
    const std::string& bootstraps, const std::string& topic,
    const std::vector<std::pair<std::string, std::string>>& records) {
  SyncProducer producer(bootstraps);
  return producer.Produce(topic, records);
}

model::Decision MakeDecision(const std::string& ns, const std::string& name, int i) {
  model::Decision d;
  d.time = Time::FromUnix(1716112800 + 300 * i);
  d.cron_job = {ns, name, "uid-" + name};
  d.action = model::DecisionAction::kScheduled;
  d.scheduled_time = d.time;
  d.policy.schedule = "*/5 * * * *";
  d.policy.concurrency_policy = "Allow";
  d.cause.trigger = "timer";
  return d;
}

std::vector<model::Decision> CommitDecisions(store::Ledger& ledger,
                                             const std::vector<std::string>& cronjobs, int units,
                                             int per_unit, int first) {
  std::vector<model::Decision> out;
  for (int u = 0; u < units; ++u) {
    const std::string& cj = cronjobs[static_cast<size_t>(u) % cronjobs.size()];
    const std::string ns = cj.substr(0, cj.find('/'));
    const std::string name = cj.substr(cj.find('/') + 1);
    store::UnitOfWork unit;
    const int i = first + u;
    unit.inputs.emplace_back(model::Tick{Time::FromUnix(1716112800 + 300 * i), ns, name, "timer"});
    for (int k = 0; k < per_unit; ++k) unit.decisions.push_back(MakeDecision(ns, name, i));
    auto r = ledger.Commit(std::move(unit));
    CL_CHECK(r.ok());
  }
  CL_CHECK(ledger
               .ScanDecisions(1,
                              [&](const model::Decision& d) {
                                out.push_back(d);
                                return true;
                              })
               .ok());
  return out;
}

std::map<std::string, std::vector<uint64_t>> ApplyDedupe(const std::vector<Message>& messages) {
  std::map<std::string, std::vector<uint64_t>> applied;
  for (const Message& m : messages) {
    auto it = m.headers.find("cronledger-seq");
    if (it == m.headers.end()) {
      ADD_FAILURE() << "record without cronledger-seq at " << m.partition << "/" << m.offset;
      continue;
    }
    const uint64_t seq = std::strtoull(it->second.c_str(), nullptr, 10);
    auto source = m.headers.find("cronledger-source");
    auto& seqs = applied[source == m.headers.end() ? m.key : source->second + "|" + m.key];
    if (seqs.empty() || seq > seqs.back()) seqs.push_back(seq);
  }
  return applied;
}

std::map<std::string, std::vector<uint64_t>> DecisionSeqsByKey(store::Ledger& ledger) {
  std::map<std::string, std::vector<uint64_t>> out;
  CL_CHECK(ledger
               .ScanDecisions(1,
                              [&](const model::Decision& d) {
                                out[d.cron_job.namespace_ + "/" + d.cron_job.name].push_back(d.seq);
                                return true;
                              })
               .ok());
  return out;
}

model::Json CronJobManifest(const std::string& ns, const std::string& name,
                            const std::string& schedule, const std::string& concurrency_policy) {
  model::Json tmpl;
  tmpl["spec"]["template"]["spec"] = {
      {"restartPolicy", "Never"},
      {"containers", model::Json::array({{{"name", "c"}, {"image", "busybox:1.36"}}})}};
  model::Json spec = {{"schedule", schedule}};
  if (!concurrency_policy.empty()) spec["concurrencyPolicy"] = concurrency_policy;
  spec["jobTemplate"] = std::move(tmpl);
  return {{"apiVersion", "batch/v1"},
          {"kind", "CronJob"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"spec", std::move(spec)}};
}

}  // namespace cronledger::kafka_testing
