#include "emit/kafka_topic_reader.h"

#include <librdkafka/rdkafka.h>

#include <map>
#include <memory>

#include "emit/kafka_client_internal.h"

namespace cronledger::emit {
namespace {

struct ClientDeleter {
  void operator()(rd_kafka_t* rk) const {
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
  }
};

int RemainingMs(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 0));
}

// The partition count, 0 when the topic does not exist.
Result<int> PartitionCount(rd_kafka_t* rk, const std::string& topic, int timeout_ms) {
  rd_kafka_topic_t* t = rd_kafka_topic_new(rk, topic.c_str(), nullptr);
  const rd_kafka_metadata_t* md = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, t, &md, timeout_ms);
  rd_kafka_topic_destroy(t);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(std::string("kafka metadata: ") + rd_kafka_err2str(err));
  }
  int count = 0;
  Status status;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const rd_kafka_metadata_topic_t& mt = md->topics[i];
    if (topic != mt.topic) continue;
    if (mt.err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) break;
    if (mt.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      status = Status::Unavailable("kafka metadata of " + topic + ": " + rd_kafka_err2str(mt.err));
    }
    count = mt.partition_cnt;
  }
  rd_kafka_metadata_destroy(md);
  CL_RETURN_IF_ERROR(status);
  return count;
}

}  // namespace

Status ReadTopicToEnd(const TopicReaderOptions& options, const std::string& topic,
                      const std::function<Status(const TopicMessage&)>& fn) {
  return ReadTopicRange(options, topic, {}, fn).status();
}

Result<PartitionOffsets> ReadTopicRange(const TopicReaderOptions& options, const std::string& topic,
                                        const PartitionOffsets& from,
                                        const std::function<Status(const TopicMessage&)>& fn) {
  if (options.brokers.empty()) return Status::InvalidArgument("kafka brokers are required");
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  internal::ClientContext ctx;
  ctx.log = options.log;
  KafkaProperties props = options.properties;
  props.emplace_back("bootstrap.servers", options.brokers);
  // Assigned partitions only: the group is never joined and nothing is committed.
  props.emplace_back("group.id", "cronledger-topic-reader");
  props.emplace_back("enable.auto.commit", "false");
  props.emplace_back("enable.partition.eof", "false");
  // Records that retention deletes while the read runs: continue from the new beginning (the
  // default, "latest", would skip the rest of the partition).
  props.emplace_back("auto.offset.reset", "earliest");
  CL_ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, internal::NewConf(props, &ctx));
  CL_ASSIGN_OR_RETURN(rd_kafka_t * raw, internal::NewClient(RD_KAFKA_CONSUMER, conf));
  std::unique_ptr<rd_kafka_t, ClientDeleter> rk(raw);
  rd_kafka_poll_set_consumer(rk.get());

  CL_ASSIGN_OR_RETURN(const int partitions, PartitionCount(rk.get(), topic, RemainingMs(deadline)));
  PartitionOffsets highs;          // every partition's high watermark at the start
  std::map<int32_t, int64_t> end;  // the same, for the partitions with something to read
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(partitions);
  for (int32_t p = 0; p < partitions; ++p) {
    int64_t low = 0, high = 0;
    const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
        rk.get(), topic.c_str(), p, &low, &high, RemainingMs(deadline));
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_topic_partition_list_destroy(list);
      return Status::Unavailable("kafka watermarks of " + topic + "/" + std::to_string(p) + ": " +
                                 rd_kafka_err2str(err));
    }
    highs[p] = high;
    const auto start = from.find(p);
    const int64_t first = start == from.end() ? low : std::max(low, start->second);
    if (high <= first) continue;
    end[p] = high;
    rd_kafka_topic_partition_list_add(list, topic.c_str(), p)->offset = first;
  }
  if (end.empty()) {
    rd_kafka_topic_partition_list_destroy(list);
    return highs;
  }
  const rd_kafka_resp_err_t assigned = rd_kafka_assign(rk.get(), list);
  rd_kafka_topic_partition_list_destroy(list);
  if (assigned != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(std::string("kafka assign: ") + rd_kafka_err2str(assigned));
  }
  while (!end.empty()) {
    const int wait = std::min(RemainingMs(deadline), 100);
    if (wait == 0) {
      return Status::Unavailable("kafka: " + topic + " not read to its end in time");
    }
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk.get(), wait);
    if (m == nullptr) continue;
    Status status;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      auto it = end.find(m->partition);
      if (it != end.end() && m->offset < it->second) {
        TopicMessage msg;
        msg.partition = m->partition;
        msg.offset = m->offset;
        if (m->key != nullptr) msg.key = {static_cast<const char*>(m->key), m->key_len};
        if (m->payload != nullptr) msg.value = {static_cast<const char*>(m->payload), m->len};
        rd_kafka_headers_t* headers = nullptr;
        if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
          const char* name = nullptr;
          const void* value = nullptr;
          size_t size = 0;
          for (size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) ==
                             RD_KAFKA_RESP_ERR_NO_ERROR;
               ++i) {
            msg.headers.emplace_back(
                name, value == nullptr ? std::string_view()
                                       : std::string_view(static_cast<const char*>(value), size));
          }
        }
        status = fn(msg);
      }
      if (it != end.end() && m->offset + 1 >= it->second) end.erase(it);
    } else if (m->err == RD_KAFKA_RESP_ERR__FATAL) {
      status = Status::FailedPrecondition("kafka consumer fatal error");
    }
    // Other errors are transient (a broker down): librdkafka keeps retrying until the deadline.
    rd_kafka_message_destroy(m);
    CL_RETURN_IF_ERROR(status);
  }
  return highs;
}

}  // namespace cronledger::emit
