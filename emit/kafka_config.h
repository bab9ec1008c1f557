#pragma once

// Kafka connection settings shared by every Kafka client of cronledger (the outbox emitter, the
// watch relay, the watch-topic consumer): brokers, the topic prefix (docs/design.md §4: `P.watch`,
// `P.decisions`, `P.ledger`, `P.checkpoints`) and librdkafka properties passed through from a file
// (SASL/SSL).
//
// Secrets: property values are never part of an error message produced here, and
// RedactedProperties() is the only form in which properties may be printed or logged.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/result.h"

namespace cronledger::emit {

// librdkafka properties in the order given (later entries override earlier ones).
using KafkaProperties = std::vector<std::pair<std::string, std::string>>;

struct KafkaTopics {
  std::string watch;        // "<prefix>.watch": watch events in, keyed by CronJob
  std::string decisions;    // "<prefix>.decisions": committed decision records out
  std::string ledger;       // "<prefix>.ledger": every committed input record out
  std::string checkpoints;  // "<prefix>.checkpoints": audit trail checkpoints out, keyed by source
};
// Default prefix: "cronledger".
inline constexpr std::string_view kDefaultTopicPrefix = "cronledger";
KafkaTopics TopicsForPrefix(std::string_view prefix);

struct KafkaConfig {
  // bootstrap.servers, e.g. "kafka-0:9092,kafka-1:9092". Required.
  std::string brokers;
  // Topic names derive from it. Default: "cronledger".
  std::string topic_prefix = std::string(kDefaultTopicPrefix);
  // Pass-through librdkafka properties (security.protocol, sasl.*, ssl.*, ...). Default: none.
  KafkaProperties properties;
};

// Parses a properties file: one `key=value` per line; blank lines and lines starting with '#'
// are ignored; whitespace around key and value is trimmed. InvalidArgument names the line number
// (never its content, which may hold a secret).
Result<KafkaProperties> ParseKafkaProperties(std::string_view text);
// Reads and parses `path`. IoError when unreadable.
Result<KafkaProperties> LoadKafkaPropertiesFile(const std::string& path);

// True for keys whose values must never be shown (case-insensitive): `*password*`, `*secret*`,
// `sasl.*`, `ssl.key.*`, and librdkafka's in-memory private key `ssl_key`.
bool IsSecretProperty(std::string_view key);
// The properties with secret values replaced by "[redacted]".
KafkaProperties RedactedProperties(const KafkaProperties& properties);

}  // namespace cronledger::emit
