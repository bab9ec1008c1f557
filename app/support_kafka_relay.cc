#include "app/support_kafka_relay.h"

#include <thread>
#include <utility>
#include <vector>

namespace cronledger::app {

Status ValidateRelayConfig(const RelayConfig& config) {
  if (config.producer.brokers.empty()) return Status::InvalidArgument("kafka brokers are required");
  if (config.topic.empty()) return Status::InvalidArgument("a watch topic is required");
  return Status::Ok();
}

WatchRelay::WatchRelay(RelayConfig config, kube::KubeClient& client, kube::Sleeper& sleeper,
                       const MonotonicClock& clock, std::function<void(const std::string&)> log)
    : config_(std::move(config)),
      client_(client),
      sleeper_(sleeper),
      clock_(clock),
      log_(std::move(log)) {}

void WatchRelay::Log(const std::string& line) const {
  if (log_) log_(line);
}

RelayStats WatchRelay::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

Status WatchRelay::RunSession(const kube::Cancellation& cancel, bool resync) {
  CL_RETURN_IF_ERROR(ValidateRelayConfig(config_));
  const int64_t started = clock_.NowNanos();
  {
    std::lock_guard lock(mu_);
    ++stats_.sessions;
    if (resync) ++stats_.resyncs;
    stats_.publisher = {};
  }
  // (1) What the topic already says about every object.
  emit::TopicReaderOptions reader;
  reader.brokers = config_.producer.brokers;
  reader.properties = config_.producer.properties;
  reader.timeout = config_.state_read_timeout;
  reader.log = config_.producer.log;
  CL_ASSIGN_OR_RETURN(emit::WatchTopicState state,
                      emit::ReadWatchTopicState(reader, config_.topic));
  size_t known = 0;
  for (const auto& [resource, objects] : state.objects) known += objects.size();
  {
    std::lock_guard lock(mu_);
    stats_.state_objects = known;
  }
  Log("relay: " + std::to_string(state.messages) + " messages on " + config_.topic + ", " +
      std::to_string(known) + " objects");
  CL_ASSIGN_OR_RETURN(auto publisher,
                      emit::KafkaWatchPublisher::Open(config_.producer, config_.topic));

  // (2)+(3) One reflector per resource, each relisting against the topic's state.
  struct Lane {
    std::unique_ptr<kube::ReflectorSink> sink;
    std::unique_ptr<kube::Reflector> reflector;
    Status result;
  };
  std::vector<Lane> lanes;
  for (const kube::ResourceType* type : {&config_.resource, &kube::BatchJobs()}) {
    kube::ReflectorOptions options = config_.reflector;
    options.type = *type;
    options.namespace_ = config_.namespace_;
    options.resource_version.clear();  // always relist: the diff against the topic is the resume
    options.known_objects.clear();
    auto it = state.objects.find(type->ApiVersion() + "/" + type->kind);
    if (it != state.objects.end()) {
      for (auto& [id, object] : it->second) {
        // A blank resourceVersion differs from every listed one: each live object is published
        // again (MODIFIED), and a vanished one still gets its DELETED.
        if (resync) object.resource_version.clear();
        options.known_objects.push_back(std::move(object));
      }
    }
    Lane lane;
    lane.sink = publisher->SinkFor(type->ApiVersion(), type->kind);
    lane.reflector =
        std::make_unique<kube::Reflector>(client_, sleeper_, *lane.sink, std::move(options));
    lanes.push_back(std::move(lane));
  }
  kube::Cancellation session;
  const int hook = cancel.AddInterrupt([&session] { session.Cancel(); });
  std::vector<std::thread> threads;
  for (Lane& lane : lanes) {
    threads.emplace_back([&lane, &session] {
      lane.result = lane.reflector->Run(session);
      if (!lane.result.ok()) session.Cancel();  // the publisher failed: end the session
    });
  }
  Status status;
  const int64_t period = std::chrono::nanoseconds(config_.resync_period).count();
  while (!session.cancelled()) {
    if (period > 0 && clock_.NowNanos() - started >= period) {
      Log("relay: resync due");
      session.Cancel();  // the next session republishes everything
      break;
    }
    status = publisher->Poll(std::chrono::milliseconds(100));
    {
      std::lock_guard lock(mu_);
      stats_.publisher = publisher->stats();
    }
    if (!status.ok()) session.Cancel();
  }
  for (std::thread& t : threads) t.join();
  cancel.RemoveInterrupt(hook);
  for (const Lane& lane : lanes) {
    if (status.ok()) status = lane.result;
  }
  if (status.ok()) {
    // Cancelled: give what was produced a chance to be acknowledged. What is not gets published
    // again by the next session (its state read does not see it).
    const auto deadline = std::chrono::steady_clock::now() + config_.drain_timeout;
    while (status.ok() && publisher->Outstanding() > 0 &&
           std::chrono::steady_clock::now() < deadline) {
      status = publisher->Poll(std::chrono::milliseconds(100));
    }
  }
  std::lock_guard lock(mu_);
  stats_.publisher = publisher->stats();
  return status;
}

Status WatchRelay::Run(const kube::Cancellation& cancel) {
  bool resync = false;
  while (!cancel.cancelled()) {
    const Status s = RunSession(cancel, resync);
    if (s.IsInvalidArgument()) return s;
    if (cancel.cancelled()) break;
    // OK without a cancel: the resync period ended the session.
    resync = s.ok();
    if (s.ok()) continue;
    Log("relay: session ended: " + s.ToString() + " (restarting)");
    if (!sleeper_.SleepFor(config_.retry, cancel)) break;
  }
  return Status::Ok();
}

}  // namespace cronledger::app
