#include "app/support_replay_kafka.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <variant>

#include "app/support_stream_records.h"
#include "emit/kafka_topic_reader.h"
#include "emit/ledger_record.h"
#include "model/decision.h"
#include "model/json.h"

namespace cronledger::app::replay_cli {
namespace {

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
  return emit::ReadTopicToEnd(
      reader, topic, [&](const emit::TopicMessage& m) -> Status { return fn(StreamMessageOf(m)); });
}

bool IsPruned(const store::LogRecord& r) { return r.raw_pruned; }
bool IsPruned(const model::Decision&) { return false; }

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
    CL_ASSIGN_OR_RETURN(model::Json j, StreamPayload(topic, m, schema));
    auto decoded = decode(j);
    if (!decoded.ok()) {
      return Status::Corruption(StreamWhere(topic, m) + ": " + decoded.status().message());
    }
    auto& records = out.by_source[m.source];
    const uint64_t seq = decoded->seq;
    auto [it, inserted] = records.try_emplace(seq, std::move(*decoded));
    if (inserted) return Status::Ok();
    Record& kept = it->second;
    if (!SameStreamRecord(kept, *decoded)) {
      return Status::Corruption(StreamWhere(topic, m) + ": seq " + std::to_string(seq) +
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
