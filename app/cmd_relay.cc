// `cronledger relay`: publishes the Kubernetes watch stream of CronJobs and Jobs to the watch
// topic P.watch (docs/kafka.md "Watch relay"); app/support_kafka_relay.h is the relay.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <thread>

#include "app/command.h"
#include "app/flags.h"
#include "app/log.h"
#include "app/support_kafka_relay.h"
#include "app/support_kube.h"
#include "app/system_clock.h"
#include "emit/kafka_config.h"
#include "kube/config.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger relay --kafka-brokers HOST:PORT[,...] [--kubeconfig F] [--context C]\n"
    "         [--kube-api-qps Q] [--kube-api-burst N]\n"
    "         [--resource cronjobs.v1.cronledger.io|cronjobs.v1.batch] [-n|--namespace NS]\n"
    "         [--kafka-topic-prefix P] [--kafka-config FILE] [--resync DUR] [--verbose]\n"
    "Lists and watches CronJobs of the resource and batch/v1 Jobs and publishes every watch\n"
    "event to P.watch (keyed by CronJob; a Job by its controller owner), with an idempotent\n"
    "producer. On start it reads P.watch back and relists, publishing only what changed while no\n"
    "relay ran (deletions included). Every --resync (default 24h; 0 = never; keep it below\n"
    "P.watch's retention) it republishes every live object. Runs until SIGINT/SIGTERM.\n";

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop.store(true); }

void LogLine(const std::string& line) { ProcessLog().Info("relay", line); }

Result<RelayConfig> ParseOptions(const std::vector<std::string>& args, std::string* kubeconfig,
                                 std::string* context, KubeApiLimits* limits, bool* verbose) {
  Flags flags;
  flags.Value("kubeconfig")
      .Value("context")
      .Value("resource")
      .Value("namespace", "n")
      .Value("kafka-brokers");
  flags.Value("kafka-topic-prefix").Value("kafka-config").Value("resync").Switch("verbose");
  DeclareKubeApiFlags(flags);
  CL_RETURN_IF_ERROR(flags.Parse(args));
  if (!flags.positionals().empty()) return Status::InvalidArgument("unexpected arguments");
  RelayConfig c;
  *kubeconfig = flags.GetOr("kubeconfig", "");
  *context = flags.GetOr("context", "");
  *verbose = flags.Has("verbose");
  CL_ASSIGN_OR_RETURN(*limits, ParseKubeApiFlags(flags));
  CL_ASSIGN_OR_RETURN(c.resource,
                      kube::LookupResource(flags.GetOr("resource", "cronjobs.v1.cronledger.io")));
  c.namespace_ = flags.GetOr("namespace", "");
  if (flags.Has("resync")) {
    CL_ASSIGN_OR_RETURN(c.resync_period, ParseGoDuration(*flags.Get("resync")));
  }
  if (!flags.Has("kafka-brokers")) return Status::InvalidArgument("--kafka-brokers is required");
  emit::KafkaConfig kafka;
  kafka.brokers = *flags.Get("kafka-brokers");
  kafka.topic_prefix = flags.GetOr("kafka-topic-prefix", kafka.topic_prefix);
  if (flags.Has("kafka-config")) {
    CL_ASSIGN_OR_RETURN(kafka.properties,
                        emit::LoadKafkaPropertiesFile(*flags.Get("kafka-config")));
  }
  c.producer.brokers = kafka.brokers;
  c.producer.properties = kafka.properties;
  c.producer.client_id = "cronledger-relay";
  c.topic = emit::TopicsForPrefix(kafka.topic_prefix).watch;
  CL_RETURN_IF_ERROR(ValidateRelayConfig(c));
  return c;
}

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  std::string kubeconfig;
  std::string context;
  KubeApiLimits limits;
  bool verbose = false;
  auto parsed = ParseOptions(args, &kubeconfig, &context, &limits, &verbose);
  if (!parsed.ok()) {
    std::fprintf(io.err, "cronledger relay: %s\n%s", parsed.status().message().c_str(), kUsage);
    return kExitUsage;
  }
  // --verbose is -v 1 for this command.
  if (verbose || ProcessLog().VEnabled(1)) {
    for (const auto& [key, value] : emit::RedactedProperties(parsed->producer.properties)) {
      ProcessLog().Info("relay", "kafka property " + key + "=" + value);
    }
  }
  std::signal(SIGPIPE, SIG_IGN);  // Poco writes with send(2) (docs/kube.md)
  auto config = kube::LoadDefaultConfig(kubeconfig, {}, context);
  if (!config.ok()) {
    ProcessLog().Error("relay", "kubeconfig: " + config.status().ToString());
    return kExitUsage;
  }
  const SystemClock& clocks = RealClock();
  kube::RealSleeper sleeper;
  auto client = OpenKubeClient(*config, limits, sleeper, "cronledger/0.1.0 (watch-relay)");
  if (!client.ok()) {
    ProcessLog().Error("relay", client.status().ToString());
    return kExitFailure;
  }
  WatchRelay relay(*parsed, **client, sleeper, clocks, LogLine);
  LogLine("resource " + parsed->resource.FullyQualified() + ", server " + config->server +
          ", topic " + parsed->topic);
  kube::Cancellation cancel;
  g_stop.store(false);
  auto old_int = std::signal(SIGINT, OnSignal);
  auto old_term = std::signal(SIGTERM, OnSignal);
  // Signal handlers may only set a flag; this thread turns it into the cancellation.
  std::thread watcher([&cancel] {
    while (!g_stop.load() && cancel.WaitFor(std::chrono::milliseconds(200))) {
    }
    cancel.Cancel();
  });
  const Status s = relay.Run(cancel);
  cancel.Cancel();
  watcher.join();
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  const RelayStats stats = relay.stats();
  LogLine("stopped after " + std::to_string(stats.sessions) + " session(s); last published " +
          std::to_string(stats.publisher.events) + " events, " +
          std::to_string(stats.publisher.acknowledged) + " acknowledged");
  if (!s.ok()) {
    ProcessLog().Error("relay", s.ToString());
    return s.IsInvalidArgument() ? kExitUsage : kExitFailure;
  }
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("relay", "publish the Kubernetes watch stream to the Kafka watch topic", Run,
                    kUsage);

}  // namespace cronledger::app
