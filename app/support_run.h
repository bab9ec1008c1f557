#pragma once

// `cronledger run` (docs/run.md): the controller against a real API server, assembled over
// injected parts so that tests drive the same assembly with a fixture API server and manual
// clocks. cmd_run.cc only parses flags, builds the real parts (kubeconfig client, RocksDB ledger,
// system clocks) and handles signals.
//
//   reflector(CronJobs of the resource) ─┐
//   reflector(batch/v1 Jobs) ────────────┴─> KubeWatchSink ─> Controller::Ingest ─> ledger
//   leader (or no election) ─> Controller workers ─> KubeActuator (controller mode)
//                                                 └> ShadowActuator (--shadow: acts on nothing)
//
// Only the leader runs workers (acts); every replica keeps ingesting into its own ledger.
//
// With Kafka (RunConfig::kafka_watch, `run --kafka-watch-topic`; docs/kafka.md), the watch topic
// replaces the reflectors and partition ownership replaces leader election:
//
//   P.watch ─> KafkaEventSource ─(batch + per-partition offsets)─> Controller::IngestUnit ─> ledger
//   workers (only keys of owned, caught-up partitions) ─> KubeActuator

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "controller/controller.h"
#include "emit/event_recorder.h"
#include "emit/metrics.h"
#include "ingest/kafka_source.h"
#include "ingest/kube_source.h"
#include "kube/client.h"
#include "kube/lease.h"
#include "kube/manager_server.h"
#include "kube/sleeper.h"
#include "model/clock.h"
#include "model/timezone.h"
#include "store/ledger.h"

namespace cronledger::app {

using RunLogFn = std::function<void(const std::string&)>;

// --- shadow (audit) mode: docs/run.md "Shadow mode" -------------------------------------------

// Compares what the shadow controller would have done with what the cluster did.
//   * Expect(): a pass wanted to create Job `name` and the view has no such Job. If no Job of
//     that name appears within `grace`, a MissedRun is recorded once; if it appears later, a
//     LateRun with its skew (creationTimestamp − scheduled time).
//   * Observe(): Jobs the cluster created (ADDED events of Jobs controlled by a CronJob, created
//     after the auditor started). One that no pass asked for within `grace` of being seen is an
//     UnexpectedJob (a duplicate or a run the expected decisions did not call for).
// Divergences are committed as audit::DivergenceRecord inputs (audit/divergences.h): they are in
// the log (rule 1), keyed by CronJob for Kafka, and ignored by replay (an outcome answering no
// intent).
// Thread-safe.
class ShadowAuditor {
 public:
  // `ledger` and `wall` must outlive the auditor. Jobs created before `started` are history.
  ShadowAuditor(store::Ledger& ledger, const WallClock& wall, Duration grace, RunLogFn log);

  void Expect(const model::ApiCall& create, Time now);
  void Matched(const std::string& ns, const std::string& name);
  void Observe(const std::vector<model::WatchEvent>& events);
  // Records every divergence due at the wall clock's now. Returns how many.
  Result<size_t> Check();
  // Divergences recorded by this auditor since it started, by kind (for /metrics).
  std::map<std::string, uint64_t> RecordedCounts() const;

 private:
  struct Expected {
    model::Json job;  // the Job the pass requested
    Time since;
    bool missed = false;  // a MissedRun was recorded
  };
  struct Seen {
    std::string cron_job;
    Time at;
    Time created;
    bool expected = false;
  };
  Status Record(const std::string& kind, const std::string& ns, const std::string& cron_job,
                const std::string& job, model::Json detail);

  store::Ledger& ledger_;
  const WallClock& wall_;
  const Duration grace_;
  const Time started_;
  RunLogFn log_;
  std::mutex mu_;
  std::map<std::string, Expected> expected_;  // by "ns/job"
  std::map<std::string, Seen> seen_;          // by "ns/job"
  std::vector<std::function<Status()>> due_;  // late runs found by Observe, recorded by Check
  mutable std::mutex counts_mu_;
  std::map<std::string, uint64_t> counts_;  // recorded divergences by kind
};

// The Actuator of --shadow: answers every call from the ledger's view (what the cluster did, as
// watched) and performs nothing. See docs/run.md for the table; in short: GETs read the view;
// create → AlreadyExists when the view has the Job (the reconciler then GETs it and adopts it if
// it is controlled by the CronJob, exactly as after a create race), else the expectation is
// registered and the call fails with reason "ShadowPending" (FailedCreate, retried with back-off
// until the cluster's Job shows up); delete → NotFound when absent, else success without deleting
// (so that Replace's create that follows is expected too);
// updateStatus → the view's CronJob with the decided status (not written). Events are dropped
// (they are in the decision log).
class ShadowActuator final : public controller::Actuator {
 public:
  ShadowActuator(store::Ledger& ledger, ShadowAuditor& auditor, const WallClock& wall)
      : ledger_(ledger), auditor_(auditor), wall_(wall) {}
  model::ApiOutcome Perform(const model::ApiCall& call) override;
  void RecordEvent(const model::CronJobRef&, const reconciler::Event&) override {}

 private:
  store::Ledger& ledger_;
  ShadowAuditor& auditor_;
  const WallClock& wall_;
};

// --- the assembly -----------------------------------------------------------------------------

struct RunConfig {
  // The managed CronJob resource. Default: cronjobs.v1.cronledger.io. --shadow requires
  // cronjobs.v1.batch (it audits the built-in controller).
  kube::ResourceType resource = kube::CronledgerCronJobs();
  bool shadow = false;
  // Controller worker threads (real time). Default: 2.
  int workers = 5;  // kube-controller-manager's --concurrent-cron-job-syncs
  // Set: only the Lease holder acts. Unset: this process always acts.
  std::optional<kube::LeaderElectionOptions> leader_election;
  emit::EventRecorderOptions events;
  // Shadow mode: how long the cluster may take before a divergence is recorded. Default: 60 s.
  Duration shadow_grace = std::chrono::seconds(60);
  // Reflector tuning (the resource, resume point and known objects are filled in).
  kube::ReflectorOptions reflector;
  // Set: the watch events come from this Kafka watch topic (brokers, topic, group, properties)
  // instead of the API server's watch; the replica acts only on the CronJobs of the partitions
  // it owns and has caught up on. Excludes `shadow` and `leader_election`. The `commit` and
  // `on_caught_up` hooks are the assembly's. Unset (default): the reflectors.
  std::optional<ingest::KafkaSourceOptions> kafka_watch;
  // How long one poll of the watch topic waits for a message. Default: 200 ms.
  Duration kafka_poll_wait = std::chrono::milliseconds(200);
  // The directory RunParts::tzdb reads; /metrics names its tz database release
  // (cronledger_build_info). Default: /usr/share/zoneinfo.
  std::string zoneinfo_dir = model::SystemTimeZoneDbOptions().zoneinfo_dir;
};

// InvalidArgument for inconsistent settings.
Status ValidateRunConfig(const RunConfig& config);

struct RunParts {
  store::Ledger* ledger = nullptr;
  kube::KubeClient* client = nullptr;
  kube::Sleeper* sleeper = nullptr;  // reflector back-off, elector retry period
  const WallClock* wall = nullptr;
  const MonotonicClock* mono = nullptr;
  const model::TimeZoneDb* tzdb = nullptr;
  RunLogFn log;  // may be empty
  // Kubernetes Events go through it; default: `client`. `run` passes client's Background(), so
  // Events only spend the API budget that creating Jobs and writing status leave.
  kube::KubeClient* events_client = nullptr;
};

class RunAssembly {
 public:
  // Every part must outlive the assembly.
  static Result<std::unique_ptr<RunAssembly>> Open(const RunConfig& config, const RunParts& parts);
  ~RunAssembly();  // Stop()

  // Starts one reflector thread per resource, resuming from the ledger's stored versions; with
  // kafka_watch, one thread polling the watch topic instead (support_run_kafka.cc).
  Status StartIngest();
  // Real time: runs leader election on a thread (or leads at once without it). Gaining the lead
  // enqueues every CronJob and starts the workers; losing it stops them.
  void StartActing();
  // Graceful stop: reflectors are cancelled and joined (nothing half-committed: each event is
  // one unit of work), the elector releases the Lease, workers finish their passes.
  void Stop();

  controller::Controller& controller() { return *controller_; }
  emit::ControllerMetrics& metrics() { return metrics_; }
  ShadowAuditor* auditor() { return auditor_.get(); }
  kube::LeaseElector* elector() { return elector_.get(); }
  bool acting() const;
  // Every reflector has synced (kube::Reflector::HasSynced): listed once, or resumed a watch
  // from the stored resourceVersion. With kafka_watch: every assigned partition of the watch
  // topic has caught up once since its assignment (KafkaEventSource::CaughtUp). False before
  // StartIngest().
  bool Synced() const;
  // Waits (real time) until the Kubernetes Events recorded so far are sent; true at once in
  // shadow mode, which records none.
  bool FlushEvents(Duration timeout) const;
  // /readyz checks: "ledger" (the ledger answers a read), "informers-synced" (Synced(); named
  // "kafka-caught-up" with kafka_watch) and "ingest" (no reflector or consumer stopped on an
  // error). A follower in leader election is ready too.
  std::vector<kube::HealthCheck> ReadinessChecks() const;
  // /metrics: the creation-skew histogram (emit::ControllerMetrics), controller, ingest, leader
  // election (client-go's leader_election_master_status) and shadow counters. Text format 0.0.4.
  std::string RenderMetrics() const;
  std::vector<ingest::KubeSinkStats> IngestStats() const;
  // The first error a reflector stopped with (a ledger failure); OK while all run.
  Status IngestError() const;
  // With kafka_watch: the watch-topic consumer (nullptr before StartIngest or after Stop) and
  // the totals of its polls.
  const ingest::KafkaEventSource* kafka_source() const { return kafka_.get(); }
  ingest::KafkaIngestProgress KafkaTotals() const;

 private:
  RunAssembly(const RunConfig& config, const RunParts& parts);
  Status StartReflector(model::ObjectKind kind, const kube::ResourceType& type);
  // support_run_kafka.cc
  Status StartKafkaIngest();
  void StopKafkaIngest();
  void OnPartitionsCaughtUp(const std::vector<int32_t>& partitions);
  std::string RenderKafkaMetrics() const;
  void Log(const std::string& line) const;
  void SetActing(bool acting);

  const RunConfig config_;
  const RunParts parts_;
  emit::ControllerMetrics metrics_;
  std::unique_ptr<emit::EventRecorder> events_;
  std::unique_ptr<ShadowAuditor> auditor_;
  std::unique_ptr<controller::Actuator> actuator_;
  std::unique_ptr<controller::Controller> controller_;
  std::unique_ptr<kube::LeaseElector> elector_;
  kube::Cancellation ingest_cancel_;
  kube::Cancellation elect_cancel_;
  std::vector<std::unique_ptr<ingest::KubeWatchSink>> sinks_;
  std::vector<std::unique_ptr<kube::Reflector>> reflectors_;
  std::vector<std::thread> threads_;
  std::thread elect_thread_;
  mutable std::mutex mu_;
  bool acting_ = false;
  Status ingest_error_;
  ingest::KafkaIngestProgress kafka_totals_;  // guarded by mu_
  // Declared last: destroyed first, while the controller its revocation commits into exists.
  std::unique_ptr<ingest::KafkaEventSource> kafka_;
};

}  // namespace cronledger::app
