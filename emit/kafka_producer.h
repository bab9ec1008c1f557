#pragma once

// An idempotent Kafka producer (librdkafka underneath; no librdkafka type here). Always
// `enable.idempotence=true` and `acks=all`: within one producer session the broker writes every
// message exactly once and in produce order per partition, retries included. librdkafka's
// `enable.gapless.guarantee` is on as well, so a message that would leave a gap before a later
// one of the same partition turns into a fatal error instead (the session must end).
//
// Thread safety: Produce() and Poll() from one thread at a time; delivery reports are returned by
// Poll() on the calling thread, in the order librdkafka serves them (per partition: produce
// order).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "emit/kafka_config.h"
#include "model/result.h"

namespace cronledger::emit {

// librdkafka log lines: syslog level (3 error, 4 warning, 6 info, 7 debug), facility, message.
using KafkaLogFn = std::function<void(int level, std::string_view facility, std::string_view msg)>;

struct KafkaProducerOptions {
  // bootstrap.servers. Required.
  std::string brokers;
  // Pass-through librdkafka properties, applied before cronledger's own settings.
  // `enable.idempotence`, `acks`, `enable.gapless.guarantee` and `message.timeout.ms` are set
  // by cronledger; passing them is InvalidArgument. Default: none.
  KafkaProperties properties;
  // client.id. Default: "cronledger".
  std::string client_id = "cronledger";
  // How long librdkafka retries one message before failing it (message.timeout.ms). Zero means
  // forever: a broker outage only delays delivery. Default: 0.
  std::chrono::milliseconds delivery_timeout{0};
  // linger.ms: how long messages wait to be batched. Default: 5 ms.
  std::chrono::milliseconds linger{5};
  // Receives librdkafka's log lines. Default: empty = levels <= 4 (warning) to stderr.
  KafkaLogFn log;
};

struct ProducerRecord {
  std::string_view topic;
  std::string_view key;
  std::string_view value;
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  uint64_t token = 0;  // returned in the record's DeliveryReport
};

struct DeliveryReport {
  uint64_t token = 0;
  Status status;  // OK when the broker acknowledged the record (acks=all)
  int32_t partition = -1;
  int64_t offset = -1;
};

class KafkaProducer {
 public:
  // InvalidArgument for a bad or forbidden property (the message names the key, never the value).
  static Result<std::unique_ptr<KafkaProducer>> Open(const KafkaProducerOptions& options);
  ~KafkaProducer();
  KafkaProducer(const KafkaProducer&) = delete;
  KafkaProducer& operator=(const KafkaProducer&) = delete;

  // Enqueues a record. Unavailable when the local queue is full (Poll() and try again);
  // InvalidArgument for a record the client can never send (too large); FailedPrecondition
  // after a fatal error.
  Status Produce(const ProducerRecord& record);
  // Serves delivery reports, waiting up to `timeout` for the first one; appends them to `out`.
  void Poll(std::chrono::milliseconds timeout, std::vector<DeliveryReport>* out);
  // Records enqueued whose report has not been served yet (plus librdkafka's internal requests).
  size_t Outstanding() const;
  // The fatal error that ended this producer session, OK when none.
  Status FatalError() const;

 private:
  struct Impl;
  explicit KafkaProducer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronledger::emit
