#include "app/support_stream_records.h"

#include <utility>
#include <variant>

#include "emit/ledger_record.h"

namespace cronledger::app {

StreamMessage StreamMessageOf(const emit::TopicMessage& m) {
  StreamMessage msg;
  msg.partition = m.partition;
  msg.offset = m.offset;
  msg.value = m.value;
  msg.schema = m.Header(emit::kSchemaHeader);
  msg.seq = m.Header(emit::kSeqHeader);
  msg.source = std::string(m.Header(emit::kSourceHeader).value_or(std::string_view()));
  return msg;
}

std::string StreamWhere(const std::string& topic, const StreamMessage& m) {
  return topic + "/" + std::to_string(m.partition) + "/" + std::to_string(m.offset);
}

Result<model::Json> StreamPayload(const std::string& topic, const StreamMessage& m,
                                  std::string_view schema) {
  if (!m.schema || *m.schema != schema) {
    return Status::Corruption(StreamWhere(topic, m) + ": cronledger-schema is not " +
                              std::string(schema));
  }
  auto j = model::ParseJson(m.value);
  if (!j.ok() || !j->is_object()) return Status::Corruption(StreamWhere(topic, m) + ": not JSON");
  auto seq = j->find("seq");
  if (seq == j->end() || !seq->is_number_unsigned() || seq->get<uint64_t>() == 0) {
    return Status::Corruption(StreamWhere(topic, m) + ": no seq");
  }
  if (m.seq && *m.seq != std::to_string(seq->get<uint64_t>())) {
    return Status::Corruption(StreamWhere(topic, m) + ": cronledger-seq header " +
                              std::string(*m.seq) + " differs from the record's seq");
  }
  return std::move(*j);
}

bool SameStreamRecord(const store::LogRecord& a, const store::LogRecord& b) {
  if (a.seq != b.seq || !(a.recorded_at == b.recorded_at)) return false;
  if (a.raw_pruned == b.raw_pruned) return a.input == b.input;
  const auto* wa = std::get_if<model::WatchEvent>(&a.input);
  const auto* wb = std::get_if<model::WatchEvent>(&b.input);
  if (wa == nullptr || wb == nullptr) return false;
  model::WatchEvent x = *wa, y = *wb;
  x.raw.clear();
  y.raw.clear();
  return x == y;
}

bool SameStreamRecord(const model::Decision& a, const model::Decision& b) { return a == b; }

}  // namespace cronledger::app
