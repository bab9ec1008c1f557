#include "emit/kafka_watch_relay.h"

#include <utility>

#include "emit/ledger_record.h"

namespace cronledger::emit {
namespace {

// A watch document around an object's bytes, which go out exactly as they came.
std::string WatchDocument(model::WatchEventType type, std::string_view object) {
  std::string doc = "{\"type\":\"";
  doc += model::WatchEventTypeName(type);
  doc += "\",\"object\":";
  doc += object;
  doc += '}';
  return doc;
}

class RelaySink final : public kube::ReflectorSink {
 public:
  RelaySink(KafkaWatchPublisher& publisher, std::string api_version, std::string kind)
      : publisher_(publisher), api_version_(std::move(api_version)), kind_(std::move(kind)) {}

  Status OnEvent(const kube::ReflectorEvent& event) override {
    const model::WatchEvent& ev = event.event;
    std::string doc;
    std::string key;
    if (event.rejection.has_value()) {
      // The relay does not judge objects: a refused one goes out as it came (a list item with its
      // list's type), and every consumer's decoder quarantines it with the reason. A watch event is
      // its own document; a list item gets one.
      const model::Rejection& r = *event.rejection;
      doc = r.item < 0 ? r.raw : WatchDocument(ev.type, r.raw);
      key = ev.name.empty() ? std::string(kClusterKey) : ev.namespace_ + "/" + ev.name;
    } else {
      doc = WatchDocument(ev.type, ev.raw);
      key = model::WatchEventKey(ev);
    }
    CL_RETURN_IF_ERROR(publisher_.Publish(key, doc, event.synthetic, false));
    // A watch event's checkpoint is its own resourceVersion: the document carries it already.
    return Status::Ok();
  }

  Status OnCheckpoint(const std::string& resource_version) override {
    const model::Json doc = {{"type", "BOOKMARK"},
                             {"object",
                              {{"apiVersion", api_version_},
                               {"kind", kind_},
                               {"metadata", {{"resourceVersion", resource_version}}}}}};
    return publisher_.Publish(std::string(kClusterKey), model::DumpJson(doc), false, true);
  }

 private:
  KafkaWatchPublisher& publisher_;
  const std::string api_version_;
  const std::string kind_;
};

}  // namespace

KafkaWatchPublisher::KafkaWatchPublisher(std::unique_ptr<KafkaProducer> producer, std::string topic)
    : producer_(std::move(producer)), topic_(std::move(topic)) {}
KafkaWatchPublisher::~KafkaWatchPublisher() = default;

Result<std::unique_ptr<KafkaWatchPublisher>> KafkaWatchPublisher::Open(
    const KafkaProducerOptions& producer, std::string topic) {
  if (topic.empty()) return Status::InvalidArgument("relay: a topic is required");
  CL_ASSIGN_OR_RETURN(auto p, KafkaProducer::Open(producer));
  return std::unique_ptr<KafkaWatchPublisher>(
      new KafkaWatchPublisher(std::move(p), std::move(topic)));
}

std::unique_ptr<kube::ReflectorSink> KafkaWatchPublisher::SinkFor(std::string api_version,
                                                                  std::string kind) {
  return std::make_unique<RelaySink>(*this, std::move(api_version), std::move(kind));
}

Status KafkaWatchPublisher::ServeReports(std::chrono::milliseconds wait) {
  std::vector<DeliveryReport> reports;
  producer_->Poll(wait, &reports);
  for (const DeliveryReport& r : reports) {
    if (r.status.ok()) {
      ++stats_.acknowledged;
    } else if (failed_.ok()) {
      failed_ = r.status;
    }
  }
  if (failed_.ok()) failed_ = producer_->FatalError();
  return failed_;
}

Status KafkaWatchPublisher::Publish(const std::string& key, const std::string& value,
                                    bool synthetic, bool bookmark) {
  std::lock_guard lock(mu_);
  CL_RETURN_IF_ERROR(failed_);
  ProducerRecord record;
  record.topic = topic_;
  record.key = key;
  record.value = value;
  record.token = ++produced_;
  for (;;) {
    const Status s = producer_->Produce(record);
    if (s.ok()) break;
    if (!s.IsUnavailable()) {
      failed_ = s;
      return s;
    }
    // The local queue is full: serve reports (which frees it) and try again.
    CL_RETURN_IF_ERROR(ServeReports(std::chrono::milliseconds(100)));
  }
  if (bookmark) {
    ++stats_.bookmarks;
  } else {
    ++stats_.events;
    if (synthetic) ++stats_.synthetic;
  }
  return Status::Ok();
}

Status KafkaWatchPublisher::Poll(std::chrono::milliseconds wait) {
  // The reflectors publish under the same mutex: wait in short slices so they never stall.
  constexpr std::chrono::milliseconds kSlice(10);
  const auto deadline = std::chrono::steady_clock::now() + wait;
  for (;;) {
    std::lock_guard lock(mu_);
    const uint64_t acknowledged = stats_.acknowledged;
    CL_RETURN_IF_ERROR(ServeReports(std::min(wait, kSlice)));
    if (stats_.acknowledged != acknowledged || producer_->Outstanding() == 0 ||
        std::chrono::steady_clock::now() >= deadline) {
      return Status::Ok();
    }
  }
}

size_t KafkaWatchPublisher::Outstanding() {
  std::lock_guard lock(mu_);
  return producer_->Outstanding();
}

WatchRelayStats KafkaWatchPublisher::stats() {
  std::lock_guard lock(mu_);
  return stats_;
}

Result<WatchTopicState> ReadWatchTopicState(const TopicReaderOptions& options,
                                            const std::string& topic) {
  WatchTopicState state;
  model::WatchDecoder decoder(model::DecodedObjects::kDrop);  // compared by fields and bytes
  CL_RETURN_IF_ERROR(ReadTopicToEnd(options, topic, [&](const TopicMessage& m) {
    ++state.messages;
    model::DecodedDocument decoded = decoder.DecodeCopy(m.value);
    if (decoded.events.size() != 1) {
      ++state.skipped;
      return Status::Ok();
    }
    model::WatchEvent& ev = decoded.events.front();
    if (ev.type == model::WatchEventType::kBookmark) return Status::Ok();
    auto& objects =
        state.objects[ev.api_version + "/" + std::string(model::ObjectKindName(ev.kind))];
    const std::string id = ev.namespace_ + "/" + ev.name;
    if (ev.type == model::WatchEventType::kDeleted) {
      objects.erase(id);
    } else {
      objects[id] = std::move(ev);
    }
    return Status::Ok();
  }));
  return state;
}

}  // namespace cronledger::emit
