#include "emit/kafka_client_internal.h"

#include <cstdio>
#include <string>

namespace cronledger::emit::internal {
namespace {

void OnLog(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  const auto* ctx = static_cast<const ClientContext*>(rd_kafka_opaque(rk));
  if (ctx != nullptr && ctx->log) {
    ctx->log(level, fac, buf);
  } else if (level <= 4) {
    std::fprintf(stderr, "rdkafka %s: %s\n", fac, buf);
  }
}

}  // namespace

Result<rd_kafka_conf_t*> NewConf(const KafkaProperties& properties, ClientContext* ctx) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& [key, value] : properties) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof(errstr)) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      // errstr may quote the value (a password, say); only the key is reported.
      return Status::InvalidArgument("invalid kafka property " + key);
    }
  }
  rd_kafka_conf_set_opaque(conf, ctx);
  rd_kafka_conf_set_log_cb(conf, &OnLog);
  return conf;
}

Result<rd_kafka_t*> NewClient(rd_kafka_type_t type, rd_kafka_conf_t* conf) {
  char errstr[512];
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof(errstr));
  if (rk == nullptr) {
    // rd_kafka_new() leaves conf to the caller on failure. errstr names the failing check
    // (e.g. an inconsistent combination), not property values.
    rd_kafka_conf_destroy(conf);
    return Status::InvalidArgument(std::string("kafka client: ") + errstr);
  }
  return rk;
}

}  // namespace cronledger::emit::internal
