#include "app/support_replay_kafka.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <variant>

#include "emit/ledger_record.h"
#include "model/decision.h"
#include "model/json.h"

namespace cronledger::app::replay_cli {
namespace {

// One message of a topic with the headers the streams carry.
struct StreamMessage {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string_view value;
  std::optional<std::string_view> schema;  // cronledger-schema
  std::optional<std::string_view> seq;     // cronledger-seq
  std::string source;                      // cronledger-source ("" when absent)
};

struct ClientContext {
  emit::KafkaLogFn log;
};

void OnLog(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  const auto* ctx = static_cast<const ClientContext*>(rd_kafka_opaque(rk));
  if (ctx != nullptr && ctx->log) {
    ctx->log(level, fac, buf);
  } else if (level <= 4) {
    std::fprintf(stderr, "rdkafka %s: %s\n", fac, buf);
  }
}

struct ClientDeleter {
  void operator()(rd_kafka_t* rk) const {
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
  }
};

struct PartitionListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const {
    rd_kafka_topic_partition_list_destroy(l);
  }
};

int RemainingMs(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return static_cast<int>(std::max<int64_t>(left.count(), 0));
}

// A consumer that is only ever assigned partitions: it never joins its group and commits nothing.
Result<std::unique_ptr<rd_kafka_t, ClientDeleter>> NewConsumer(const KafkaHistoryOptions& options,
                                                               ClientContext* ctx) {
  for (const auto& [key, value] : options.properties) {
    (void)value;
    if (key == "group.id" || key == "enable.auto.commit" || key == "enable.auto.offset.store") {
      return Status::InvalidArgument("kafka property " + key + " cannot be set for replay");
    }
  }
  emit::KafkaProperties props = options.properties;
  props.emplace_back("bootstrap.servers", options.brokers);
  props.emplace_back("group.id", "cronledger-replay");
  props.emplace_back("enable.auto.commit", "false");
  props.emplace_back("enable.auto.offset.store", "false");
  props.emplace_back("enable.partition.eof", "false");
  // Records deleted by retention while the read runs: continue from the new beginning; the seq
  // check reports what went missing.
  props.emplace_back("auto.offset.reset", "earliest");
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& [key, value] : props) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof(errstr)) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      // errstr may quote the value (a password, say); only the key is reported.
      return Status::InvalidArgument("invalid kafka property " + key);
    }
  }
  rd_kafka_conf_set_opaque(conf, ctx);
  rd_kafka_conf_set_log_cb(conf, &OnLog);
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    // rd_kafka_new() leaves conf to the caller on failure; errstr names the failing check.
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(std::string("kafka client: ") + errstr);
  }
  rd_kafka_poll_set_consumer(rk);
  return std::unique_ptr<rd_kafka_t, ClientDeleter>(rk);
}

// The topic's partition count, 0 when it does not exist.
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

std::optional<std::string_view> Header(rd_kafka_headers_t* headers, const char* name) {
  if (headers == nullptr) return std::nullopt;
  const void* v = nullptr;
  size_t size = 0;
  if (rd_kafka_header_get_last(headers, name, &v, &size) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return std::nullopt;
  }
  return v == nullptr ? std::string_view() : std::string_view(static_cast<const char*>(v), size);
}

// Every partition of `topic` from its low watermark to the high watermark captured now, each in
// offset order (partitions interleaved).
Status ReadBounded(const KafkaHistoryOptions& options, const std::string& topic,
                   const std::function<Status(const StreamMessage&)>& fn) {
  const auto deadline = std::chrono::steady_clock::now() + options.timeout;
  ClientContext ctx{options.log};
  CL_ASSIGN_OR_RETURN(auto rk, NewConsumer(options, &ctx));
  CL_ASSIGN_OR_RETURN(const int partitions, PartitionCount(rk.get(), topic, RemainingMs(deadline)));
  std::map<int32_t, int64_t> end;  // partition -> high watermark at the start, non-empty only
  std::unique_ptr<rd_kafka_topic_partition_list_t, PartitionListDeleter> list(
      rd_kafka_topic_partition_list_new(std::max(partitions, 1)));
  for (int32_t p = 0; p < partitions; ++p) {
    int64_t low = 0, high = 0;
    const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(
        rk.get(), topic.c_str(), p, &low, &high, RemainingMs(deadline));
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      return Status::Unavailable("kafka watermarks of " + topic + "/" + std::to_string(p) + ": " +
                                 rd_kafka_err2str(err));
    }
    if (high <= low) continue;
    end[p] = high;
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), p)->offset = low;
  }
  if (end.empty()) return Status::Ok();
  const rd_kafka_resp_err_t assigned = rd_kafka_assign(rk.get(), list.get());
  if (assigned != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::Unavailable(std::string("kafka assign: ") + rd_kafka_err2str(assigned));
  }
  while (!end.empty()) {
    const int wait = std::min(RemainingMs(deadline), 100);
    if (wait == 0) return Status::Unavailable("kafka: " + topic + " not read to its end in time");
    rd_kafka_message_t* m = rd_kafka_consumer_poll(rk.get(), wait);
    if (m == nullptr) continue;
    Status status;
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      auto it = end.find(m->partition);
      if (it != end.end() && m->offset < it->second) {
        StreamMessage msg;
        msg.partition = m->partition;
        msg.offset = m->offset;
        if (m->payload != nullptr) msg.value = {static_cast<const char*>(m->payload), m->len};
        rd_kafka_headers_t* headers = nullptr;
        if (rd_kafka_message_headers(m, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) headers = nullptr;
        msg.schema = Header(headers, std::string(emit::kSchemaHeader).c_str());
        msg.seq = Header(headers, std::string(emit::kSeqHeader).c_str());
        msg.source = std::string(
            Header(headers, std::string(emit::kSourceHeader).c_str()).value_or(std::string_view()));
        status = fn(msg);
      }
      if (it != end.end() && m->offset + 1 >= it->second) end.erase(it);
    } else if (m->err == RD_KAFKA_RESP_ERR__FATAL) {
      status = Status::FailedPrecondition("kafka consumer fatal error");
    }
    // Other errors are transient (a broker down): librdkafka retries until the deadline.
    rd_kafka_message_destroy(m);
    CL_RETURN_IF_ERROR(status);
  }
  return Status::Ok();
}

std::string Where(const std::string& topic, const StreamMessage& m) {
  return topic + "/" + std::to_string(m.partition) + "/" + std::to_string(m.offset);
}

// Checks the schema header and the seq header against the payload's seq; returns the payload.
Result<model::Json> Payload(const std::string& topic, const StreamMessage& m,
                            std::string_view schema) {
  if (!m.schema || *m.schema != schema) {
    return Status::Corruption(Where(topic, m) + ": cronledger-schema is not " +
                              std::string(schema));
  }
  auto j = model::ParseJson(m.value);
  if (!j.ok() || !j->is_object()) return Status::Corruption(Where(topic, m) + ": not JSON");
  auto seq = j->find("seq");
  if (seq == j->end() || !seq->is_number_unsigned() || seq->get<uint64_t>() == 0) {
    return Status::Corruption(Where(topic, m) + ": no seq");
  }
  if (m.seq && *m.seq != std::to_string(seq->get<uint64_t>())) {
    return Status::Corruption(Where(topic, m) + ": cronledger-seq header " + std::string(*m.seq) +
                              " differs from the record's seq");
  }
  return std::move(*j);
}

bool IsPruned(const store::LogRecord& r) { return r.raw_pruned; }
bool IsPruned(const model::Decision&) { return false; }

bool SameRecord(const store::LogRecord& a, const store::LogRecord& b) {
  if (a.seq != b.seq || !(a.recorded_at == b.recorded_at)) return false;
  if (a.raw_pruned == b.raw_pruned) return a.input == b.input;
  // One copy was emitted before retention removed the raw bytes, the other after.
  const auto* wa = std::get_if<model::WatchEvent>(&a.input);
  const auto* wb = std::get_if<model::WatchEvent>(&b.input);
  if (wa == nullptr || wb == nullptr) return false;
  model::WatchEvent x = *wa, y = *wb;
  x.raw.clear();
  y.raw.clear();
  return x == y;
}
bool SameRecord(const model::Decision& a, const model::Decision& b) { return a == b; }

// One topic's records per source, each source's by seq.
template <typename Record>
struct TopicRecords {
  KafkaStreamReport report;
  std::map<std::string, std::map<uint64_t, Record>> by_source;
};

template <typename Record, typename Decode>
Result<TopicRecords<Record>> ReadStream(const KafkaHistoryOptions& options,
                                        const std::string& topic, std::string_view schema,
                                        Decode decode) {
  TopicRecords<Record> out;
  out.report.topic = topic;
  Status status = ReadBounded(options, topic, [&](const StreamMessage& m) -> Status {
    ++out.report.messages;
    CL_ASSIGN_OR_RETURN(model::Json j, Payload(topic, m, schema));
    auto decoded = decode(j);
    if (!decoded.ok()) {
      return Status::Corruption(Where(topic, m) + ": " + decoded.status().message());
    }
    auto& records = out.by_source[m.source];
    const uint64_t seq = decoded->seq;
    auto [it, inserted] = records.try_emplace(seq, std::move(*decoded));
    if (inserted) return Status::Ok();
    Record& kept = it->second;
    if (!SameRecord(kept, *decoded)) {
      return Status::Corruption(Where(topic, m) + ": seq " + std::to_string(seq) +
                                " is on the topic twice with different records (two ledgers "
                                "without distinct cronledger-source?)");
    }
    if (IsPruned(kept) && !IsPruned(*decoded)) kept = std::move(*decoded);  // keep the raw bytes
    ++out.report.duplicates;
    return Status::Ok();
  });
  CL_RETURN_IF_ERROR(status);
  return out;
}

// Keeps the selected source's records in seq order and finds the holes in 1..last.
template <typename Record>
std::vector<Record> Select(TopicRecords<Record>& t, const std::string& source) {
  std::vector<Record> out;
  auto it = t.by_source.find(source);
  for (const auto& [name, records] : t.by_source) {
    if (name != source) t.report.other_sources += records.size();
  }
  if (it == t.by_source.end()) return out;
  out.reserve(it->second.size());
  uint64_t next = 1;
  for (auto& [seq, record] : it->second) {
    if (seq > next) {
      t.report.gaps.push_back({next, seq - 1});
      t.report.missing += seq - next;
    }
    next = seq + 1;
    out.push_back(std::move(record));
  }
  t.report.records = out.size();
  t.report.last_seq = next - 1;
  it->second.clear();
  return out;
}

std::string Quoted(const std::string& s) { return s.empty() ? "(no cronledger-source)" : s; }

}  // namespace

std::vector<std::string> KafkaHistoryReport::Describe() const {
  std::vector<std::string> lines;
  for (const KafkaStreamReport* r : {&ledger, &decisions}) {
    if (r->topic.empty()) continue;
    std::string line = r->topic + ": " + std::to_string(r->records) + " records";
    if (r->last_seq > 0) line += " (seq up to " + std::to_string(r->last_seq) + ")";
    line += ", " + std::to_string(r->duplicates) + " duplicates dropped";
    if (r->other_sources > 0) {
      line += ", " + std::to_string(r->other_sources) + " records of other ledgers skipped";
    }
    lines.push_back(line);
    for (const SeqGap& g : r->gaps) {
      const uint64_t n = g.last - g.first + 1;
      lines.push_back(r->topic + ": GAP: " +
                      (n == 1 ? "seq " + std::to_string(g.first)
                              : "seqs " + std::to_string(g.first) + ".." + std::to_string(g.last)) +
                      " missing (" + std::to_string(n) +
                      "): the topic lost them or its retention cut them");
    }
  }
  return lines;
}

Result<KafkaHistory> ReadKafkaHistory(const KafkaHistoryOptions& options) {
  if (options.brokers.empty()) return Status::InvalidArgument("kafka brokers are required");
  const emit::KafkaTopics topics = emit::TopicsForPrefix(options.topic_prefix);
  CL_ASSIGN_OR_RETURN(auto inputs,
                      ReadStream<store::LogRecord>(
                          options, topics.ledger, emit::kLedgerSchema,
                          [](const model::Json& j) { return emit::DecodeLedgerRecord(j); }));
  TopicRecords<model::Decision> decisions;
  if (options.read_decisions) {
    CL_ASSIGN_OR_RETURN(
        decisions,
        ReadStream<model::Decision>(options, topics.decisions, emit::kDecisionSchema,
                                    [](const model::Json& j) { return model::DecodeDecision(j); }));
  }

  std::string source = options.source_id;
  if (source.empty()) {
    std::set<std::string> found;
    for (const auto& [name, records] : inputs.by_source) found.insert(name);
    for (const auto& [name, records] : decisions.by_source) found.insert(name);
    if (found.size() > 1) {
      std::string names;
      for (const std::string& n : found) names += (names.empty() ? "" : ", ") + Quoted(n);
      return Status::InvalidArgument("the topics hold the records of several ledgers (" + names +
                                     "): choose one with --kafka-source-id");
    }
    if (!found.empty()) source = *found.begin();
  }
  KafkaHistory h;
  h.report.source_id = source;
  std::vector<store::LogRecord> in = Select(inputs, source);
  std::vector<model::Decision> out = Select(decisions, source);
  h.report.ledger = std::move(inputs.report);
  if (options.read_decisions) h.report.decisions = std::move(decisions.report);
  h.source = std::make_unique<replay::MemorySource>(std::move(in), std::move(out));
  return h;
}

Result<KafkaHistoryOptions> KafkaHistoryOptionsFromFlags(const Flags& flags) {
  KafkaHistoryOptions o;
  auto brokers = flags.Get("kafka-brokers");
  if (!brokers || brokers->empty()) return Status::InvalidArgument("--kafka-brokers is required");
  o.brokers = *brokers;
  o.topic_prefix = flags.GetOr("kafka-topic-prefix", o.topic_prefix);
  if (o.topic_prefix.empty()) return Status::InvalidArgument("--kafka-topic-prefix is empty");
  o.source_id = flags.GetOr("kafka-source-id", "");
  if (auto file = flags.Get("kafka-config")) {
    auto props = emit::LoadKafkaPropertiesFile(*file);
    if (!props.ok()) return Status::InvalidArgument("--kafka-config: " + props.status().message());
    o.properties = std::move(*props);
  }
  return o;
}

}  // namespace cronledger::app::replay_cli
