// `cronledger run`: the controller (or, with --shadow, the auditor) against a real API server.
// A thin wrapper: flags → RunConfig, the real parts (kubeconfig client, RocksDB ledger, system
// clocks, tz database), signals; app/support_run.h is the assembly. docs/run.md.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "app/command.h"
#include "app/flags.h"
#include "app/log.h"
#include "app/support_admin.h"
#include "app/support_kafka_relay.h"
#include "app/support_kube.h"
#include "app/support_ledger.h"
#include "app/support_run.h"
#include "app/support_run_outbox.h"
#include "app/system_clock.h"
#include "audit/server.h"
#include "emit/kafka_config.h"
#include "emit/outbox_emitter.h"
#include "kube/config.h"
#include "kube/manager_server.h"

namespace cronledger::app {
namespace {

constexpr const char* kUsage =
    "usage: cronledger run [--kubeconfig F] [--context C] [--kube-api-qps Q] [--kube-api-burst N]\n"
    "         [--resource cronjobs.v1.cronledger.io|cronjobs.v1.batch]\n"
    "         [--shadow] [--shadow-grace DUR] [--data-dir DIR] [--workers N]\n"
    "         [--sync always|batch|none] [--ledger-write-buffer-mib N] [--ledger-block-cache-mib "
    "N]\n"
    "         [--leader-elect] [--leader-elect-id NAME]\n"
    "         [--leader-elect-namespace NS] [--leader-elect-lease-duration DUR]\n"
    "         [--leader-elect-renew-deadline DUR] [--leader-elect-retry-period DUR]\n"
    "         [--kafka-brokers B] [--kafka-topic-prefix P] [--kafka-config FILE]\n"
    "         [--kafka-source-id ID] [--publish-watch] [--kafka-streams decisions,ledger]\n"
    "         [--kafka-checkpoint-interval DUR]\n"
    "         [--kafka-watch-topic TOPIC [--kafka-group-id GROUP]]\n"
    "         [--listen HOST:PORT --token-file F]\n"
    "         [--metrics-bind-address [HOST]:PORT|0] [--health-probe-bind-address [HOST]:PORT|0]\n"
    "With --kafka-watch-topic the watch events come from that topic (written by `cronledger\n"
    "relay`) instead of the API server, and each replica of the consumer group acts on the\n"
    "CronJobs of its partitions (no --leader-elect, --shadow or --publish-watch then).\n"
    "With --kafka-brokers the outbox produces the decisions to P.decisions and the inputs to\n"
    "P.ledger (--kafka-streams), and the audit trail's checkpoint to P.checkpoints every\n"
    "--kafka-checkpoint-interval (default 5m, 0: off) and at shutdown.\n"
    "Runs until SIGINT/SIGTERM (graceful: reflectors stop, workers drain, the ledger is flushed);\n"
    "a second signal exits at once.\n";

std::atomic<int> g_signals{0};
void OnRunSignal(int) {
  if (g_signals.fetch_add(1) >= 1) _exit(130);  // the second signal: exit now
}

struct Options {
  RunConfig run;
  store::LedgerOptions ledger;
  std::string kubeconfig;
  std::string context;  // --context: a kubeconfig context instead of current-context
  KubeApiLimits kube_api;
  std::optional<emit::KafkaConfig> kafka;
  std::string kafka_source_id;  // --kafka-source-id: cronledger-source of the outbox records
  std::vector<emit::EmitStream> kafka_streams;  // --kafka-streams: the outbox streams
  Duration kafka_checkpoint_interval = std::chrono::minutes(5);  // 0: no checkpoints
  bool publish_watch = false;  // --publish-watch: the watch relay beside (docs/kafka.md)
  std::optional<audit::ServerOptions> server;  // --listen: the audit HTTP API beside the run
  std::optional<std::string> metrics_address;  // --metrics-bind-address ("0": off)
  std::optional<std::string> probe_address;    // --health-probe-bind-address ("0": off)
};

std::string HostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "cronledger";
  return buf;
}

Result<Duration> DurationFlag(const Flags& flags, const char* name, Duration fallback) {
  if (!flags.Has(name)) return fallback;
  auto d = ParseGoDuration(*flags.Get(name));
  if (!d.ok())
    return Status::InvalidArgument(std::string("--") + name + ": " + d.status().message());
  return *d;
}

// --kafka-watch-topic: the consumer of the watch topic (docs/kafka.md). The group shares the
// partitions with cooperative-sticky unless the properties file names another strategy.
Result<ingest::KafkaSourceOptions> KafkaWatchOptions(const Flags& flags,
                                                     const emit::KafkaConfig& kafka) {
  ingest::KafkaSourceOptions source;
  source.brokers = kafka.brokers;
  source.topic = *flags.Get("kafka-watch-topic");
  if (source.topic.empty()) return Status::InvalidArgument("--kafka-watch-topic: empty topic");
  source.group_id = flags.GetOr("kafka-group-id", source.group_id);
  if (source.group_id.empty()) return Status::InvalidArgument("--kafka-group-id: empty group");
  bool strategy = false;
  for (const auto& [key, value] : kafka.properties) {
    strategy = strategy || key == "partition.assignment.strategy";
  }
  if (!strategy)
    source.properties.emplace_back("partition.assignment.strategy", "cooperative-sticky");
  source.properties.insert(source.properties.end(), kafka.properties.begin(),
                           kafka.properties.end());
  return source;
}

Result<Options> ParseOptions(const std::vector<std::string>& args) {
  Flags flags;
  flags.Value("kubeconfig")
      .Value("context")
      .Value("resource")
      .Switch("shadow")
      .Value("shadow-grace");
  flags.Value("data-dir").Value("workers").Value("sync").Switch("leader-elect");
  flags.Value("leader-elect-id").Value("leader-elect-namespace");
  flags.Value("leader-elect-lease-duration").Value("leader-elect-renew-deadline");
  flags.Value("leader-elect-retry-period");
  flags.Value("kafka-brokers").Value("kafka-topic-prefix").Value("kafka-config");
  flags.Value("kafka-source-id").Switch("publish-watch");
  flags.Value("kafka-streams").Value("kafka-checkpoint-interval");
  flags.Value("kafka-watch-topic").Value("kafka-group-id");
  flags.Value("listen").Value("token-file");
  flags.Value("metrics-bind-address").Value("health-probe-bind-address");
  DeclareLedgerMemoryFlags(flags);
  DeclareKubeApiFlags(flags);
  CL_RETURN_IF_ERROR(flags.Parse(args));
  if (!flags.positionals().empty()) return Status::InvalidArgument("unexpected arguments");
  Options o;
  o.kubeconfig = flags.GetOr("kubeconfig", "");
  o.context = flags.GetOr("context", "");
  CL_ASSIGN_OR_RETURN(o.kube_api, ParseKubeApiFlags(flags));
  CL_ASSIGN_OR_RETURN(o.run.resource,
                      kube::LookupResource(flags.GetOr("resource", "cronjobs.v1.cronledger.io")));
  o.run.shadow = flags.Has("shadow");
  CL_ASSIGN_OR_RETURN(o.run.shadow_grace, DurationFlag(flags, "shadow-grace", o.run.shadow_grace));
  o.ledger.path = flags.GetOr("data-dir", "./data");
  CL_ASSIGN_OR_RETURN(o.ledger.sync, store::ParseSyncMode(flags.GetOr("sync", "batch")));
  CL_RETURN_IF_ERROR(ApplyLedgerMemoryFlags(flags, o.ledger));
  // Default 5: kube-controller-manager's --concurrent-cron-job-syncs. Passes mostly wait on
  // the API server, so concurrency, not cores, bounds how many run per second.
  CL_ASSIGN_OR_RETURN(const uint64_t workers, flags.Uint("workers", 1, 999, 5));
  o.run.workers = static_cast<int>(workers);
  if (flags.Has("leader-elect")) {
    kube::LeaderElectionOptions le;
    le.identity = HostName() + "_" + std::to_string(getpid());
    le.name = flags.GetOr("leader-elect-id", le.name);
    le.namespace_ = flags.GetOr("leader-elect-namespace", "");
    CL_ASSIGN_OR_RETURN(le.lease_duration,
                        DurationFlag(flags, "leader-elect-lease-duration", le.lease_duration));
    CL_ASSIGN_OR_RETURN(le.renew_deadline,
                        DurationFlag(flags, "leader-elect-renew-deadline", le.renew_deadline));
    CL_ASSIGN_OR_RETURN(le.retry_period,
                        DurationFlag(flags, "leader-elect-retry-period", le.retry_period));
    o.run.leader_election = le;
  }
  o.run.events.reporting_instance = "cronjob-controller-" + HostName();
  if (flags.Has("listen")) {
    if (!flags.Has("token-file")) return Status::InvalidArgument("--listen needs --token-file");
    audit::ServerOptions server;
    server.listen = *flags.Get("listen");
    server.api.token_file = *flags.Get("token-file");
    server.api.data_dir = o.ledger.path;
    o.server = server;
  }
  for (auto [flag, out] : {std::pair{"metrics-bind-address", &o.metrics_address},
                           std::pair{"health-probe-bind-address", &o.probe_address}}) {
    auto address = kube::ParseBindAddress(flags.GetOr(flag, "0"));
    if (!address.ok()) {
      return Status::InvalidArgument(std::string("--") + flag + ": " + address.status().message());
    }
    *out = *address;
  }
  if (o.metrics_address && o.probe_address && *o.metrics_address == *o.probe_address &&
      o.metrics_address->substr(o.metrics_address->rfind(':')) != ":0") {
    return Status::InvalidArgument(
        "--metrics-bind-address and --health-probe-bind-address must differ");
  }
  if (flags.Has("kafka-brokers")) {
    emit::KafkaConfig k;
    k.brokers = *flags.Get("kafka-brokers");
    k.topic_prefix = flags.GetOr("kafka-topic-prefix", k.topic_prefix);
    if (flags.Has("kafka-config")) {
      CL_ASSIGN_OR_RETURN(k.properties, emit::LoadKafkaPropertiesFile(*flags.Get("kafka-config")));
    }
    o.kafka = k;
    o.kafka_source_id = flags.GetOr("kafka-source-id", HostName());
    if (o.kafka_source_id.empty()) return Status::InvalidArgument("--kafka-source-id: empty id");
    CL_ASSIGN_OR_RETURN(o.kafka_streams,
                        ParseKafkaStreams(flags.GetOr("kafka-streams", "decisions,ledger")));
    CL_ASSIGN_OR_RETURN(
        o.kafka_checkpoint_interval,
        DurationFlag(flags, "kafka-checkpoint-interval", o.kafka_checkpoint_interval));
    if (o.kafka_checkpoint_interval < Duration::zero()) {
      return Status::InvalidArgument("--kafka-checkpoint-interval: negative");
    }
    o.publish_watch = flags.Has("publish-watch");
    if (flags.Has("kafka-watch-topic")) {
      if (o.publish_watch) {
        return Status::InvalidArgument(
            "--kafka-watch-topic and --publish-watch are exclusive: a replica reading the watch "
            "topic does not watch the API server (run `cronledger relay` once beside the "
            "replicas)");
      }
      CL_ASSIGN_OR_RETURN(o.run.kafka_watch, KafkaWatchOptions(flags, k));
    } else if (flags.Has("kafka-group-id")) {
      return Status::InvalidArgument("--kafka-group-id needs --kafka-watch-topic");
    }
  } else if (flags.Has("kafka-source-id") || flags.Has("publish-watch") ||
             flags.Has("kafka-watch-topic") || flags.Has("kafka-group-id") ||
             flags.Has("kafka-streams") || flags.Has("kafka-checkpoint-interval")) {
    return Status::InvalidArgument(
        "--kafka-source-id, --publish-watch, --kafka-watch-topic, --kafka-group-id, "
        "--kafka-streams and --kafka-checkpoint-interval need --kafka-brokers");
  }
  return o;
}

void LogLine(const std::string& line) { ProcessLog().Info("run", line); }

int Run(const std::vector<std::string>& args, const CommandIo& io) {
  auto parsed = ParseOptions(args);
  if (parsed.ok()) {
    RunConfig check = parsed->run;
    // The Lease namespace defaults to the kubeconfig's, which is only read below.
    if (check.leader_election && check.leader_election->namespace_.empty()) {
      check.leader_election->namespace_ = "default";
    }
    if (Status s = ValidateRunConfig(check); !s.ok()) parsed = s;
  }
  if (!parsed.ok()) {
    std::fprintf(io.err, "cronledger run: %s\n%s", parsed.status().message().c_str(), kUsage);
    return kExitUsage;
  }
  Options& o = *parsed;
  std::signal(SIGPIPE, SIG_IGN);  // Poco writes with send(2) (docs/kube.md)
  auto config = kube::LoadDefaultConfig(o.kubeconfig, {}, o.context);
  if (!config.ok()) {
    ProcessLog().Error("run", "kubeconfig: " + config.status().ToString());
    return kExitUsage;
  }
  if (o.run.leader_election && o.run.leader_election->namespace_.empty()) {
    o.run.leader_election->namespace_ = config->namespace_;
  }
  const SystemClock& clocks = RealClock();
  kube::RealSleeper sleeper;
  auto client =
      OpenKubeClient(*config, o.kube_api, sleeper, "cronledger/0.1.0 (cronjob-controller)");
  auto ledger = store::Ledger::Open(o.ledger);
  model::SystemTimeZoneDbOptions tz;
  tz.zoneinfo_dir = o.run.zoneinfo_dir;
  auto tzdb = model::OpenSystemTimeZoneDb(tz);
  for (const Status& s : {client.status(), ledger.status(), tzdb.status()}) {
    if (!s.ok()) {
      ProcessLog().Error("run", s.ToString());
      return kExitFailure;
    }
  }
  // backup and retention ask this process while it holds the ledger (app/support_admin.h).
  std::unique_ptr<AdminSocket> admin = StartAdminSocket("run", o.ledger.path, **ledger, clocks);
  auto events_client = (*client)->Background();
  if (!events_client.ok()) {
    ProcessLog().Error("run", events_client.status().ToString());
    return kExitFailure;
  }
  RunParts parts{ledger->get(), client->get(), &sleeper, &clocks,
                 &clocks,       tzdb->get(),   LogLine,  events_client->get()};
  auto assembly = RunAssembly::Open(o.run, parts);
  if (!assembly.ok()) {
    ProcessLog().Error("run", assembly.status().ToString());
    return kExitFailure;
  }
  LogLine(std::string(o.run.shadow ? "shadow mode" : "controller mode") + ", resource " +
          o.run.resource.FullyQualified() + ", server " + config->server + ", data " +
          o.ledger.path +
          (o.run.kafka_watch ? ", watch from kafka topic " + o.run.kafka_watch->topic : ""));
  std::unique_ptr<audit::Server> server;
  if (o.server) {
    auto started = audit::Server::Start(**ledger, **tzdb, *o.server);
    if (!started.ok()) {
      ProcessLog().Error("run", "--listen: " + started.status().ToString());
      return kExitFailure;
    }
    server = std::move(started).value();
    LogLine("audit API on " + o.server->listen);
  }
  g_signals.store(0);
  std::signal(SIGINT, OnRunSignal);
  std::signal(SIGTERM, OnRunSignal);
  RunAssembly& a = **assembly;
  int exit_code = kExitOk;
  // The outbox (docs/kafka.md), created once the controller runs; /metrics reads it through
  // `outbox_metrics`, set once it exists (the endpoints stop before it is destroyed).
  std::unique_ptr<RunOutbox> outbox;
  std::atomic<const RunOutbox*> outbox_metrics{nullptr};
  std::vector<std::unique_ptr<kube::ManagerServer>> endpoints;
  if (Status s = a.StartIngest(); !s.ok()) {
    ProcessLog().Error("run", "ingest: " + s.ToString());
    exit_code = kExitFailure;
  } else {
    // controller-runtime's manager servers (docs/run.md "Metrics and probes").
    kube::ManagerServerOptions metrics;
    metrics.metrics = [&a, &outbox_metrics] {
      const RunOutbox* ob = outbox_metrics.load();
      return a.RenderMetrics() + (ob != nullptr ? ob->RenderMetrics() : std::string());
    };
    kube::ManagerServerOptions probes;
    probes.probes = true;
    probes.readyz = a.ReadinessChecks();
    for (auto [address, options, what] : {std::tuple{&o.metrics_address, &metrics, "metrics"},
                                          std::tuple{&o.probe_address, &probes, "health probes"}}) {
      if (!*address) continue;
      options->listen = **address;
      auto started = kube::ManagerServer::Start(*options);
      if (!started.ok()) {
        LogLine(std::string(what) + ": " + started.status().ToString());
        exit_code = kExitFailure;
        break;
      }
      LogLine(std::string(what) + " on " + options->listen.substr(0, options->listen.rfind(':')) +
              ":" + std::to_string((*started)->port()));
      endpoints.push_back(std::move(started).value());
    }
    if (exit_code == kExitOk) a.StartActing();
  }
  // The outbox (docs/kafka.md): P.decisions, P.ledger and P.checkpoints.
  if (exit_code == kExitOk && o.kafka) {
    RunOutboxOptions oo;
    oo.kafka = *o.kafka;
    oo.source_id = o.kafka_source_id;
    oo.streams = o.kafka_streams;
    oo.checkpoint_interval = o.kafka_checkpoint_interval;
    oo.warn = [](const std::string& line) { ProcessLog().Warning("run", line); };
    outbox = std::make_unique<RunOutbox>(**ledger, clocks, std::move(oo));
    outbox_metrics.store(outbox.get());
    std::string streams;
    for (emit::EmitStream stream : o.kafka_streams) {
      streams += (streams.empty() ? "" : ", ") +
                 emit::OutboxOptionsFor(*o.kafka, stream, o.kafka_source_id).topic;
    }
    LogLine("kafka outbox as source " + o.kafka_source_id + ": " + streams +
            (o.kafka_checkpoint_interval > Duration::zero()
                 ? ", checkpoints to " + emit::TopicsForPrefix(o.kafka->topic_prefix).checkpoints
                 : std::string()));
  }
  // --publish-watch: the watch relay (docs/kafka.md "Watch relay") on its own reflectors.
  kube::Cancellation relay_cancel;
  std::unique_ptr<WatchRelay> relay;
  std::thread relay_thread;
  if (exit_code == kExitOk && o.kafka && o.publish_watch) {
    RelayConfig rc;
    rc.resource = o.run.resource;
    rc.producer.brokers = o.kafka->brokers;
    rc.producer.properties = o.kafka->properties;
    rc.producer.client_id = "cronledger-relay";
    rc.topic = emit::TopicsForPrefix(o.kafka->topic_prefix).watch;
    relay = std::make_unique<WatchRelay>(rc, **client, sleeper, clocks, LogLine);
    relay_thread = std::thread([&relay, &relay_cancel] {
      if (Status s = relay->Run(relay_cancel); !s.ok()) LogLine("relay: " + s.ToString());
    });
    LogLine("publishing the watch stream to " + rc.topic);
  }
  while (exit_code == kExitOk && g_signals.load() == 0) {
    if (Status s = a.IngestError(); !s.ok()) exit_code = kExitFailure;
    if (Status s = (*ledger)->WriteHealth(); !s.ok()) {
      LogLine("the ledger cannot be written, stopping: " + s.ToString());
      exit_code = kExitFailure;
    }
    if (a.auditor()) {
      if (auto n = a.auditor()->Check(); !n.ok()) LogLine("shadow: " + n.status().ToString());
    }
    if (outbox) {
      outbox->Step(std::chrono::milliseconds(200));
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  }
  LogLine("stopping");
  relay_cancel.Cancel();
  if (relay_thread.joinable()) relay_thread.join();
  relay.reset();
  endpoints.clear();
  a.Stop();
  if (outbox) {
    // Everything the controller committed goes out before the ledger closes, so a restart
    // resumes exactly where this process stopped.
    if (Status s = outbox->Finish(std::chrono::seconds(10)); !s.ok()) {
      ProcessLog().Warning("run", "kafka outbox at shutdown: " + s.ToString());
    }
    outbox.reset();
  }
  if (server) server->Stop();
  server.reset();
  assembly->reset();
  admin.reset();
  ledger->reset();  // closes RocksDB: the write-ahead log is synced (SyncMode batch included)
  LogLine("stopped");
  return exit_code;
}

}  // namespace

CL_REGISTER_COMMAND("run", "run the controller (or --shadow auditor) against a Kubernetes cluster",
                    Run, kUsage);

}  // namespace cronledger::app
