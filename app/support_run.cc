// RunAssembly: the parts of `cronledger run` wired together (docs/run.md).
#include "app/support_run.h"

#include <algorithm>
#include <utility>

#include "audit/divergences.h"
#include "emit/kube_actuator.h"
#include "kube/reflector.h"
#include "model/build_info.h"

namespace cronledger::app {

Status ValidateRunConfig(const RunConfig& config) {
  if (config.workers < 1) return Status::InvalidArgument("--workers must be at least 1");
  if (config.resource.kind != "CronJob") {
    return Status::InvalidArgument("--resource must name a CronJob resource: " +
                                   config.resource.FullyQualified());
  }
  if (config.shadow && !(config.resource == kube::BatchCronJobs())) {
    return Status::InvalidArgument(
        "--shadow audits the built-in controller: it needs --resource cronjobs.v1.batch");
  }
  if (config.leader_election) {
    CL_RETURN_IF_ERROR(kube::ValidateLeaderElection(*config.leader_election));
  }
  if (config.shadow_grace <= Duration::zero()) {
    return Status::InvalidArgument("--shadow-grace must be positive");
  }
  if (config.kafka_watch) {
    // Kafka mode reads the watch from the topic, and partitions decide who acts.
    if (config.shadow) {
      return Status::InvalidArgument(
          "--kafka-watch-topic and --shadow are exclusive: the shadow auditor watches the API "
          "server");
    }
    if (config.leader_election) {
      return Status::InvalidArgument(
          "--kafka-watch-topic and --leader-elect are exclusive: with the watch topic each "
          "replica acts on the partitions it owns");
    }
    if (config.kafka_watch->topic.empty()) {
      return Status::InvalidArgument("--kafka-watch-topic: a topic is required");
    }
  }
  return Status::Ok();
}

RunAssembly::RunAssembly(const RunConfig& config, const RunParts& parts)
    : config_(config), parts_(parts) {}

Result<std::unique_ptr<RunAssembly>> RunAssembly::Open(const RunConfig& config,
                                                       const RunParts& parts) {
  CL_RETURN_IF_ERROR(ValidateRunConfig(config));
  if (!parts.ledger || !parts.client || !parts.sleeper || !parts.wall || !parts.mono ||
      !parts.tzdb) {
    return Status::InvalidArgument("run: every part is required");
  }
  std::unique_ptr<RunAssembly> a(new RunAssembly(config, parts));
  RunLogFn log = parts.log;
  if (config.shadow) {
    a->auditor_ =
        std::make_unique<ShadowAuditor>(*parts.ledger, *parts.wall, config.shadow_grace, log);
    a->actuator_ = std::make_unique<ShadowActuator>(*parts.ledger, *a->auditor_, *parts.wall);
  } else {
    kube::KubeClient& events_client = parts.events_client ? *parts.events_client : *parts.client;
    a->events_ =
        std::make_unique<emit::EventRecorder>(events_client, *parts.wall, config.events, log);
    emit::KubeActuatorOptions options;
    options.cron_jobs = config.resource;
    a->actuator_ =
        std::make_unique<emit::KubeActuator>(*parts.client, *a->events_, a->metrics_, options, log);
  }
  controller::ControllerOptions options;
  options.workers = config.workers;
  if (config.shadow) {
    options.skip_own_echoes = false;
    // A pass that waits for the cluster's Job fails with ShadowPending and is retried with
    // back-off. Uncapped (client-go's 1000 s), the back-off of a CronJob whose Jobs stopped
    // coming would delay its next passes past later fire times, which would then be recorded
    // late or folded into one; a quarter of the grace keeps every fire time's pass within it.
    options.rate_limiter.max_delay = std::clamp<Duration>(
        config.shadow_grace / 4, std::chrono::seconds(1), options.rate_limiter.max_delay);
  }
  CL_ASSIGN_OR_RETURN(a->controller_,
                      controller::Controller::Open(options, *parts.ledger, *a->actuator_,
                                                   *parts.wall, *parts.mono, *parts.tzdb));
  if (config.leader_election) {
    a->elector_ = std::make_unique<kube::LeaseElector>(*parts.client, *parts.wall, *parts.mono,
                                                       *config.leader_election);
  }
  return a;
}

RunAssembly::~RunAssembly() { Stop(); }

void RunAssembly::Log(const std::string& line) const {
  if (parts_.log) parts_.log(line);
}

Status RunAssembly::StartIngest() {
  if (config_.kafka_watch) return StartKafkaIngest();
  CL_RETURN_IF_ERROR(StartReflector(model::ObjectKind::kCronJob, config_.resource));
  return StartReflector(model::ObjectKind::kJob, kube::BatchJobs());
}

Status RunAssembly::StartReflector(model::ObjectKind kind, const kube::ResourceType& type) {
  store::Ledger& ledger = *parts_.ledger;
  const std::string api_version = type.ApiVersion();
  kube::ReflectorOptions options = config_.reflector;
  options.type = type;
  CL_ASSIGN_OR_RETURN(options.resource_version,
                      ingest::StoredResourceVersion(ledger, api_version, kind));
  CL_ASSIGN_OR_RETURN(options.known_objects, ingest::KnownObjects(ledger, api_version, kind));
  Log("watching " + type.FullyQualified() +
      (options.resource_version.empty() ? " (listing first)"
                                        : " from resourceVersion " + options.resource_version) +
      ", " + std::to_string(options.known_objects.size()) + " objects in the ledger");
  ingest::KubeSinkOptions sink_options{kind, api_version, "kube:" + type.FullyQualified()};
  ingest::ObserveFn observe;
  if (auditor_ && kind == model::ObjectKind::kJob) {
    observe = [this](const std::vector<model::WatchEvent>& events) { auditor_->Observe(events); };
  }
  auto sink = std::make_unique<ingest::KubeWatchSink>(
      sink_options,
      [this](std::vector<model::WatchEvent> events) {
        return controller_->Ingest(std::move(events));
      },
      ledger, parts_.log, std::move(observe));
  auto reflector =
      std::make_unique<kube::Reflector>(*parts_.client, *parts_.sleeper, *sink, options);
  kube::Reflector* r = reflector.get();
  sinks_.push_back(std::move(sink));
  reflectors_.push_back(std::move(reflector));
  threads_.emplace_back([this, r, name = type.FullyQualified()] {
    Status s = r->Run(ingest_cancel_);
    if (s.ok()) return;
    // The ledger refused a commit: nothing more can be ingested safely; the process stops
    // (cmd_run exits non-zero) and a restart resumes from the last committed version.
    Log("ingest of " + name + " stopped: " + s.ToString());
    std::lock_guard lock(mu_);
    if (ingest_error_.ok()) ingest_error_ = s;
  });
  return Status::Ok();
}

void RunAssembly::SetActing(bool acting) {
  {
    std::lock_guard lock(mu_);
    if (acting_ == acting) return;
    acting_ = acting;
  }
  if (acting) {
    Log("acting: starting " + std::to_string(config_.workers) + " workers");
    // A new leader looks at everything once (timers of the previous leader are not known here).
    if (Status s = controller_->EnqueueAll(); !s.ok()) Log("enqueue all: " + s.ToString());
    controller_->Start();
  } else {
    Log("not acting: stopping workers");
    controller_->Stop();
  }
}

void RunAssembly::StartActing() {
  if (!elector_) {
    SetActing(true);
    return;
  }
  if (elect_thread_.joinable()) return;
  Log("leader election: lease " + config_.leader_election->namespace_ + "/" +
      config_.leader_election->name + " as " + config_.leader_election->identity);
  elect_thread_ = std::thread([this] {
    elector_->Run(
        elect_cancel_, *parts_.sleeper,
        [this] {
          Log("leader election: became the leader");
          SetActing(true);
        },
        [this] {
          Log("leader election: stopped leading");
          SetActing(false);
        });
  });
}

void RunAssembly::Stop() {
  ingest_cancel_.Cancel();
  for (std::thread& t : threads_) t.join();
  threads_.clear();
  StopKafkaIngest();
  elect_cancel_.Cancel();
  if (elect_thread_.joinable()) elect_thread_.join();
  SetActing(false);
  // The workers have stopped: send the Events they recorded, for a bounded time.
  if (events_) events_->Stop(std::chrono::seconds(2));
}

bool RunAssembly::FlushEvents(Duration timeout) const {
  return !events_ || events_->Flush(timeout);
}

bool RunAssembly::acting() const {
  std::lock_guard lock(mu_);
  return acting_;
}

bool RunAssembly::Synced() const {
  if (config_.kafka_watch) return kafka_ && kafka_->CaughtUp();
  if (reflectors_.empty()) return false;
  for (const auto& r : reflectors_) {
    if (!r->HasSynced()) return false;
  }
  return true;
}

std::vector<kube::HealthCheck> RunAssembly::ReadinessChecks() const {
  std::vector<kube::HealthCheck> checks;
  // Not ready once a write has failed (a full disk): the controller records before it acts, so it
  // has stopped acting (cmd_run then exits 1).
  checks.push_back({"ledger", [this] {
                      Status writable = parts_.ledger->WriteHealth();
                      return writable.ok() ? parts_.ledger->Meta().status() : writable;
                    }});
  if (config_.kafka_watch) {
    checks.push_back({"kafka-caught-up", [this] {
                        return Synced() ? Status::Ok()
                                        : Status::Unavailable(
                                              "an assigned watch-topic partition has not caught "
                                              "up since its assignment");
                      }});
  } else {
    checks.push_back({"informers-synced", [this] {
                        return Synced()
                                   ? Status::Ok()
                                   : Status::Unavailable("the initial list/watch has not synced");
                      }});
  }
  checks.push_back({"ingest", [this] { return IngestError(); }});
  return checks;
}

namespace {

void Metric(std::string* out, const std::string& name, const char* type, const char* help) {
  *out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
}

std::string Label(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

std::string RunAssembly::RenderMetrics() const {
  std::string o = metrics_.RenderPrometheus() + model::RenderBuildInfoMetric(config_.zoneinfo_dir);
  const controller::ControllerStats c = controller_->Stats();
  const std::pair<const char*, uint64_t> counters[] = {{"passes", c.passes},
                                                       {"passes_unrecorded", c.unrecorded_passes},
                                                       {"pass_errors", c.errors},
                                                       {"api_calls", c.api_calls},
                                                       {"decisions", c.decisions},
                                                       {"events_ingested", c.events_ingested},
                                                       {"echoes_skipped", c.echoes_skipped}};
  const char* helps[] = {"Reconcile passes run by this process.",
                         "Passes that left no record: no call, no decision but their requeue, "
                         "the accounting unchanged.",
                         "Passes that ended with an error (retried with back-off).",
                         "API calls made by passes (shadow mode: answered from the view).",
                         "Decisions committed by this process's passes.",
                         "Watch events committed to the ledger by this process.",
                         "Watch events of the controller's own writes, which start no pass."};
  for (size_t i = 0; i < std::size(counters); ++i) {
    const std::string name = std::string("cronledger_controller_") + counters[i].first + "_total";
    Metric(&o, name, "counter", helps[i]);
    o += name + " " + std::to_string(counters[i].second) + "\n";
  }
  // client-go's work-queue gauge, as kube-controller-manager serves it for its cronjob queue.
  Metric(&o, "workqueue_depth", "gauge", "Current depth of workqueue");
  o += "workqueue_depth{name=\"cronjob\"} " + std::to_string(c.queue_ready) + "\n";
  Metric(&o, "cronledger_workqueue_delayed", "gauge",
         "CronJobs waiting in the work queue for their time (next fire time, back-off).");
  o += "cronledger_workqueue_delayed{name=\"cronjob\"} " + std::to_string(c.queue_delayed) + "\n";
  Metric(&o, "cronledger_unaccounted_fire_times", "gauge",
         "Fire times of this process's CronJobs that came due at least 10 s ago and that no pass "
         "has accounted yet (no decision: the controller is behind or its passes fail).");
  o += "cronledger_unaccounted_fire_times " + std::to_string(c.unaccounted_fire_times) + "\n";
  Metric(&o, "cronledger_ledger_writable", "gauge",
         "1 while the ledger accepts writes; 0 once a write failed (disk full, I/O error): the "
         "controller stops acting and exits.");
  o += std::string("cronledger_ledger_writable ") +
       (parts_.ledger->WriteHealth().ok() ? "1" : "0") + "\n";
  struct Series {
    const char* name;
    const char* type;
    const char* help;
    uint64_t (*get)(const ingest::KubeSinkStats&);
  };
  const Series series[] = {
      {"cronledger_ingest_events_total", "counter", "Watch and relist events committed.",
       [](const ingest::KubeSinkStats& s) { return s.events; }},
      {"cronledger_ingest_synthetic_events_total", "counter",
       "Events derived from a relist's difference.",
       [](const ingest::KubeSinkStats& s) { return s.synthetic; }},
      {"cronledger_ingest_checkpoints_total", "counter",
       "Resume points committed without an object change (bookmarks, relist ends).",
       [](const ingest::KubeSinkStats& s) { return s.checkpoints; }},
      {"cronledger_ingest_quarantined_total", "counter", "Objects the decoder rejected.",
       [](const ingest::KubeSinkStats& s) { return s.quarantined; }},
      {"cronledger_ingest_lists_total", "counter", "Lists (first start, 410 Expired relists).",
       [](const ingest::KubeSinkStats& s) { return s.relists; }},
      {"cronledger_ingest_watch_ends_total", "counter",
       "Watches that ended (closed, dropped, stalled, expired).",
       [](const ingest::KubeSinkStats& s) { return s.watch_ends; }},
      {"cronledger_ingest_watch_stalls_total", "counter",
       "Watches given up after no byte within the stall timeout (then resumed).",
       [](const ingest::KubeSinkStats& s) { return s.watch_stalls; }},
      {"cronledger_ingest_watch_drops_total", "counter",
       "Watches cut before their terminating chunk (then resumed).",
       [](const ingest::KubeSinkStats& s) { return s.watch_drops; }},
  };
  std::vector<std::string> resources;
  resources.push_back(config_.resource.FullyQualified());
  resources.push_back(kube::BatchJobs().FullyQualified());
  const std::vector<ingest::KubeSinkStats> stats = IngestStats();
  for (const Series& m : series) {
    Metric(&o, m.name, m.type, m.help);
    for (size_t i = 0; i < stats.size() && i < resources.size(); ++i) {
      o += std::string(m.name) + "{resource=\"" + Label(resources[i]) + "\"} " +
           std::to_string(m.get(stats[i])) + "\n";
    }
  }
  Metric(&o, "cronledger_ingest_synced", "gauge",
         "1 when the resource's initial list (or resumed watch) has synced.");
  for (size_t i = 0; i < reflectors_.size() && i < resources.size(); ++i) {
    o += "cronledger_ingest_synced{resource=\"" + Label(resources[i]) + "\"} " +
         (reflectors_[i]->HasSynced() ? "1" : "0") + "\n";
  }
  if (events_) {
    const emit::EventRecorderStats e = events_->stats();
    Metric(&o, "cronledger_events_total", "counter",
           "Kubernetes Events by result: created, aggregated into a series, failed, or dropped "
           "(queue full or shutting down).");
    const std::pair<const char*, uint64_t> results[] = {{"created", e.created},
                                                        {"aggregated", e.aggregated},
                                                        {"failed", e.failed},
                                                        {"dropped", e.dropped}};
    for (const auto& [result, n] : results) {
      o += std::string("cronledger_events_total{result=\"") + result + "\"} " + std::to_string(n) +
           "\n";
    }
    Metric(&o, "cronledger_events_queued", "gauge", "Kubernetes Events waiting to be sent.");
    o += "cronledger_events_queued " + std::to_string(events_->queued()) + "\n";
  }
  if (config_.kafka_watch) o += RenderKafkaMetrics();
  Metric(&o, "cronledger_acting", "gauge",
         "1 while this process runs workers (it leads, or runs without leader election).");
  o += std::string("cronledger_acting ") + (acting() ? "1" : "0") + "\n";
  if (elector_) {
    Metric(&o, "leader_election_master_status", "gauge",
           "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
           "backup, 1 indicates master. 'name' is the string used to identify the lease.");
    o += "leader_election_master_status{name=\"" + Label(config_.leader_election->name) + "\"} " +
         (elector_->IsLeader() ? "1" : "0") + "\n";
  }
  if (auditor_) {
    Metric(&o, "cronledger_shadow_divergences_total", "counter",
           "Divergences recorded by the shadow auditor, by kind.");
    std::map<std::string, uint64_t> counts = auditor_->RecordedCounts();
    for (const std::string& kind : audit::DivergenceKinds()) counts.try_emplace(kind, 0);
    for (const auto& [kind, n] : counts) {
      o += "cronledger_shadow_divergences_total{kind=\"" + Label(kind) + "\"} " +
           std::to_string(n) + "\n";
    }
  }
  return o;
}

std::vector<ingest::KubeSinkStats> RunAssembly::IngestStats() const {
  std::vector<ingest::KubeSinkStats> out;
  for (const auto& sink : sinks_) out.push_back(sink->stats());
  return out;
}

Status RunAssembly::IngestError() const {
  std::lock_guard lock(mu_);
  return ingest_error_;
}

}  // namespace cronledger::app
