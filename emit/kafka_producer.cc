#include "emit/kafka_producer.h"

#include <librdkafka/rdkafka.h>

#include <cstdio>

#include "emit/kafka_client_internal.h"

namespace cronledger::emit {

struct KafkaProducer::Impl {
  internal::ClientContext ctx;
  rd_kafka_t* rk = nullptr;
  ~Impl() {
    if (rk != nullptr) {
      // Undelivered records are simply dropped: the outbox re-produces from its stored
      // position, so purging instead of flushing loses nothing.
      rd_kafka_purge(rk, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
      rd_kafka_destroy(rk);
    }
  }
};

namespace {

void OnDelivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
  auto* ctx = static_cast<internal::ClientContext*>(opaque);
  DeliveryReport report;
  report.token = reinterpret_cast<uintptr_t>(msg->_private);
  report.partition = msg->partition;
  report.offset = msg->offset;
  if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    report.status =
        Status::Unavailable(std::string("kafka delivery failed: ") + rd_kafka_err2str(msg->err));
  }
  ctx->reports.push_back(std::move(report));
}

}  // namespace

KafkaProducer::KafkaProducer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KafkaProducer::~KafkaProducer() = default;

Result<std::unique_ptr<KafkaProducer>> KafkaProducer::Open(const KafkaProducerOptions& options) {
  if (options.brokers.empty()) return Status::InvalidArgument("kafka brokers are required");
  for (const auto& [key, value] : options.properties) {
    if (key == "enable.idempotence" || key == "acks" || key == "request.required.acks" ||
        key == "enable.gapless.guarantee" || key == "message.timeout.ms" ||
        key == "delivery.timeout.ms") {
      return Status::InvalidArgument("kafka property " + key +
                                     " is set by cronledger and cannot be overridden");
    }
  }
  auto impl = std::make_unique<Impl>();
  impl->ctx.log = options.log;
  KafkaProperties props = options.properties;
  props.emplace_back("bootstrap.servers", options.brokers);
  props.emplace_back("client.id", options.client_id);
  props.emplace_back("enable.idempotence", "true");
  props.emplace_back("acks", "all");
  props.emplace_back("enable.gapless.guarantee", "true");
  props.emplace_back("message.timeout.ms", std::to_string(options.delivery_timeout.count()));
  props.emplace_back("linger.ms", std::to_string(options.linger.count()));
  CL_ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, internal::NewConf(props, &impl->ctx));
  rd_kafka_conf_set_dr_msg_cb(conf, &OnDelivery);
  CL_ASSIGN_OR_RETURN(impl->rk, internal::NewClient(RD_KAFKA_PRODUCER, conf));
  return std::unique_ptr<KafkaProducer>(new KafkaProducer(std::move(impl)));
}

Status KafkaProducer::Produce(const ProducerRecord& record) {
  rd_kafka_headers_t* headers = rd_kafka_headers_new(record.headers.size());
  for (const auto& [name, value] : record.headers) {
    rd_kafka_header_add(headers, name.data(), static_cast<ssize_t>(name.size()), value.data(),
                        static_cast<ssize_t>(value.size()));
  }
  const std::string topic(record.topic);
  // librdkafka's RD_KAFKA_V_* macros type-check their arguments with GNU statement expressions,
  // which clang's -Wpedantic reports (-Wgnu-statement-expression; g++ accepts them silently).
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wgnu-statement-expression"
#endif
  const rd_kafka_resp_err_t err = rd_kafka_producev(
      impl_->rk, RD_KAFKA_V_TOPIC(topic.c_str()),
      RD_KAFKA_V_KEY(const_cast<char*>(record.key.data()), record.key.size()),
      RD_KAFKA_V_VALUE(const_cast<char*>(record.value.data()), record.value.size()),
      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADERS(headers),
      RD_KAFKA_V_OPAQUE(reinterpret_cast<void*>(static_cast<uintptr_t>(record.token))),
      RD_KAFKA_V_END);
#if defined(__clang__)
#pragma clang diagnostic pop
#endif
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Ok();  // headers now owned by librdkafka
  rd_kafka_headers_destroy(headers);
  const std::string what = std::string("kafka produce: ") + rd_kafka_err2str(err);
  switch (err) {
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
      return Status::Unavailable(what);
    case RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE:
      return Status::InvalidArgument(what);
    case RD_KAFKA_RESP_ERR__FATAL:
      return Status::FailedPrecondition(FatalError().message());
    default:
      return Status::Unavailable(what);
  }
}

void KafkaProducer::Poll(std::chrono::milliseconds timeout, std::vector<DeliveryReport>* out) {
  rd_kafka_poll(impl_->rk, static_cast<int>(timeout.count()));
  for (auto& r : impl_->ctx.reports) out->push_back(std::move(r));
  impl_->ctx.reports.clear();
}

size_t KafkaProducer::Outstanding() const {
  return static_cast<size_t>(rd_kafka_outq_len(impl_->rk));
}

Status KafkaProducer::FatalError() const {
  char reason[512];
  const rd_kafka_resp_err_t err = rd_kafka_fatal_error(impl_->rk, reason, sizeof(reason));
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return Status::Ok();
  return Status::FailedPrecondition(std::string("kafka producer fatal error: ") + reason);
}

}  // namespace cronledger::emit
