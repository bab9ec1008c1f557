#pragma once

// Reads a topic from its beginning to where it ended when the read started (the high watermark
// of every partition at that moment), without a consumer group. The watch relay rebuilds, from
// its own topic, what it last published of every object (docs/kafka.md "Watch relay").
//
// Thread safety: a free function; each call makes its own client.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "emit/kafka_config.h"
#include "emit/kafka_producer.h"
#include "model/result.h"

namespace cronledger::emit {

struct TopicReaderOptions {
  // bootstrap.servers. Required.
  std::string brokers;
  // Pass-through librdkafka properties (security). Producer-only keys are ignored by the
  // consumer. Default: none.
  KafkaProperties properties;
  // How long the whole read may take. Default: 60 s.
  std::chrono::milliseconds timeout{60000};
  // librdkafka log lines. Default: empty = levels <= 4 to stderr.
  KafkaLogFn log;
};

struct TopicMessage {
  int32_t partition = 0;
  int64_t offset = 0;
  std::string_view key;
  std::string_view value;
  // The message's headers (name, value) in the order produced; views valid during the callback.
  std::vector<std::pair<std::string_view, std::string_view>> headers;

  // The value of the last header named `name`, nullopt when there is none.
  std::optional<std::string_view> Header(std::string_view name) const {
    for (auto it = headers.rbegin(); it != headers.rend(); ++it) {
      if (it->first == name) return it->second;
    }
    return std::nullopt;
  }
};

// Calls `fn` for every message, per partition in offset order (partitions interleaved). A topic
// that does not exist reads as empty. Unavailable when the end is not reached within the
// timeout or the cluster cannot be reached; fn's error stops the read and is
// returned.
Status ReadTopicToEnd(const TopicReaderOptions& options, const std::string& topic,
                      const std::function<Status(const TopicMessage&)>& fn);

// Partition -> offset.
using PartitionOffsets = std::map<int32_t, int64_t>;

// ReadTopicToEnd from given offsets: each partition from `from[p]` (its low watermark when absent
// or below it) to its high watermark captured when the read starts. Returns those high
// watermarks, every partition of the topic included (the offset to read from next time).
Result<PartitionOffsets> ReadTopicRange(const TopicReaderOptions& options, const std::string& topic,
                                        const PartitionOffsets& from,
                                        const std::function<Status(const TopicMessage&)>& fn);

}  // namespace cronledger::emit
