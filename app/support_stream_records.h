#pragma once

// The records of the outbox's streams as a consumer reads them (docs/kafka.md "Payload schema"):
// one message's stream headers, its payload checked against them, and the rule that tells a
// harmless repeat of a record from a second, different record under the same (source, seq).
// `replay --kafka-brokers` and `audit-store` both read the streams through these.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "emit/kafka_topic_reader.h"
#include "model/decision.h"
#include "model/json.h"
#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::app {

// One message of a stream topic with the headers the streams carry.
struct StreamMessage {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string_view value;
  std::optional<std::string_view> schema;  // cronledger-schema
  std::optional<std::string_view> seq;     // cronledger-seq
  std::string source;                      // cronledger-source ("" when absent)
};

StreamMessage StreamMessageOf(const emit::TopicMessage& m);

// "topic/partition/offset".
std::string StreamWhere(const std::string& topic, const StreamMessage& m);

// The payload as JSON after checking the schema header and the seq header against the payload's
// seq. Corruption naming topic/partition/offset otherwise.
Result<model::Json> StreamPayload(const std::string& topic, const StreamMessage& m,
                                  std::string_view schema);

// Whether two records read under one (source, seq) are the same record. A watch event emitted
// before retention removed its raw bytes and again after is the same record.
bool SameStreamRecord(const store::LogRecord& a, const store::LogRecord& b);
bool SameStreamRecord(const model::Decision& a, const model::Decision& b);

}  // namespace cronledger::app
