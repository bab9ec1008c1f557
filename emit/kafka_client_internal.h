#pragma once

// Private to emit/*.cc (not a public header: it names librdkafka types). Builds librdkafka
// clients without ever putting a property value into an error message.

#include <librdkafka/rdkafka.h>

#include <vector>

#include "emit/kafka_config.h"
#include "emit/kafka_producer.h"
#include "model/result.h"

namespace cronledger::emit::internal {

// The client's opaque: what librdkafka's callbacks reach.
struct ClientContext {
  KafkaLogFn log;                       // called from librdkafka threads
  std::vector<DeliveryReport> reports;  // filled by the delivery callback during rd_kafka_poll
};

// A new configuration with `properties` applied in order, `ctx` as the opaque and librdkafka's
// log lines routed to ctx->log (when empty: levels <= 4 to stderr). `ctx` must outlive the client.
Result<rd_kafka_conf_t*> NewConf(const KafkaProperties& properties, ClientContext* ctx);
// Creates the client; takes ownership of `conf` (also on failure).
Result<rd_kafka_t*> NewClient(rd_kafka_type_t type, rd_kafka_conf_t* conf);

}  // namespace cronledger::emit::internal
