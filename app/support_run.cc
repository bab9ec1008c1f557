// RunAssembly: the parts of `cronledger run` wired together (docs/run.md).
#include "app/support_run.h"

#include <utility>

#include "emit/kube_actuator.h"
#include "kube/reflector.h"

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
    a->events_ =
        std::make_unique<emit::EventRecorder>(*parts.client, *parts.wall, config.events, log);
    emit::KubeActuatorOptions options;
    options.cron_jobs = config.resource;
    a->actuator_ =
        std::make_unique<emit::KubeActuator>(*parts.client, *a->events_, a->metrics_, options, log);
  }
  controller::ControllerOptions options;
  options.workers = config.workers;
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
  elect_cancel_.Cancel();
  if (elect_thread_.joinable()) elect_thread_.join();
  SetActing(false);
}

bool RunAssembly::acting() const {
  std::lock_guard lock(mu_);
  return acting_;
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
