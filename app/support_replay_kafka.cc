#include "app/support_replay_kafka.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <variant>

#include "emit/kafka_topic_reader.h"
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

// Every partition of `topic` from its low watermark to the high watermark captured now, each in
// offset order (partitions interleaved), with the stream headers picked out.
Status ReadBounded(const KafkaHistoryOptions& options, const std::string& topic,
                   const std::function<Status(const StreamMessage&)>& fn) {
  for (const auto& [key, value] : options.properties) {
    (void)value;
    if (key == "group.id" || key == "enable.auto.commit" || key == "enable.auto.offset.store") {
      return Status::InvalidArgument("kafka property " + key + " cannot be set for replay");
    }
  }
  emit::TopicReaderOptions reader;
  reader.brokers = options.brokers;
  reader.properties = options.properties;
  reader.timeout = options.timeout;
  reader.log = options.log;
  return emit::ReadTopicToEnd(reader, topic, [&](const emit::TopicMessage& m) -> Status {
    StreamMessage msg;
    msg.partition = m.partition;
    msg.offset = m.offset;
    msg.value = m.value;
    msg.schema = m.Header(emit::kSchemaHeader);
    msg.seq = m.Header(emit::kSeqHeader);
    msg.source = std::string(m.Header(emit::kSourceHeader).value_or(std::string_view()));
    return fn(msg);
  });
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
