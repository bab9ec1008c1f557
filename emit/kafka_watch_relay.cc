#include "emit/kafka_watch_relay.h"

#include <utility>

#include "emit/ledger_record.h"

namespace cronledger::emit {
namespace {

std::string MetaString(const model::Json& object, const char* field) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  const auto it = meta->find(field);
  return it != meta->end() && it->is_string() ? it->get<std::string>() : "";
}

std::string ControllerOwner(const model::Json& object) {
  const auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  const auto refs = meta->find("ownerReferences");
  if (refs == meta->end() || !refs->is_array()) return "";
  for (const model::Json& ref : *refs) {
    const auto controller = ref.find("controller");
    const auto name = ref.find("name");
    if (controller != ref.end() && controller->is_boolean() && controller->get<bool>() &&
        name != ref.end() && name->is_string()) {
      return name->get<std::string>();
    }
  }
  return "";
}

std::string TypeName(kube::WatchEventType type) { return std::string(WatchEventTypeName(type)); }

class RelaySink final : public kube::ReflectorSink {
 public:
  RelaySink(KafkaWatchPublisher& publisher, std::string api_version, std::string kind)
      : publisher_(publisher), api_version_(std::move(api_version)), kind_(std::move(kind)) {}

  Status OnEvent(const kube::ReflectorEvent& event) override {
    model::Json object = event.object;
    if (!object.contains("apiVersion")) object["apiVersion"] = api_version_;
    if (!object.contains("kind")) object["kind"] = kind_;
    const model::Json doc = {{"type", TypeName(event.type)}, {"object", std::move(object)}};
    CL_RETURN_IF_ERROR(publisher_.Publish(WatchObjectKey(doc["object"]), model::DumpJson(doc),
                                          event.synthetic, false));
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

std::string WatchObjectKey(const model::Json& object) {
  const std::string name = MetaString(object, "name");
  if (name.empty()) return std::string(kClusterKey);
  const auto kind = object.find("kind");
  const bool job = kind != object.end() && kind->is_string() && kind->get<std::string>() == "Job";
  const std::string owner = job ? ControllerOwner(object) : "";
  return MetaString(object, "namespace") + "/" + (owner.empty() ? name : owner);
}

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
  CL_RETURN_IF_ERROR(ReadTopicToEnd(options, topic, [&](const TopicMessage& m) {
    ++state.messages;
    auto doc = model::ParseJson(m.value);
    if (!doc.ok() || !doc->is_object() || !doc->contains("type") || !(*doc)["type"].is_string() ||
        !doc->contains("object") || !(*doc)["object"].is_object()) {
      ++state.skipped;
      return Status::Ok();
    }
    const std::string type = (*doc)["type"].get<std::string>();
    model::Json& object = (*doc)["object"];
    const std::string name = MetaString(object, "name");
    if (type == "BOOKMARK" || name.empty() || !object.contains("apiVersion") ||
        !object.contains("kind") || !object["apiVersion"].is_string() ||
        !object["kind"].is_string()) {
      if (type != "BOOKMARK") ++state.skipped;
      return Status::Ok();
    }
    auto& objects = state.objects[object["apiVersion"].get<std::string>() + "/" +
                                  object["kind"].get<std::string>()];
    const std::string id = MetaString(object, "namespace") + "/" + name;
    if (type == "DELETED") {
      objects.erase(id);
    } else {
      objects[id] = std::move(object);
    }
    return Status::Ok();
  }));
  return state;
}

}  // namespace cronledger::emit
