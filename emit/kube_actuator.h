#pragma once

// The controller's Actuator against a real API server (docs/run.md "Actuation"). Each
// call of a reconcile pass maps onto one PocoKubeClient request for the managed CronJob resource
// (cronledger.io/v1 or batch/v1) or batch/v1 Jobs:
//
//   get Job            GET  jobs/<name>
//   create Job         POST jobs                    (observes the creation-skew histogram)
//   delete Job         DELETE jobs/<name>           propagationPolicy Background (docs/semantics.md
//   §5, §6.10) get CronJob        GET  <resource>/<name> updateStatus       PUT
//   <resource>/<name>/status (the status subresource)
//
// Outcomes: success carries the object the server returned (null for a delete); failure carries
// ApiError::OutcomeReason() — the NamespaceTerminating cause when present (docs/semantics.md §6.12
// checks it before the reason), else the Status reason ("NotFound", "AlreadyExists", "Conflict",
// "TooManyRequests", "InternalError", ...), else "Transport" — and the server's message (Go's
// err.Error() of a StatusError). 429 and 5xx are retried with back-off inside the client first.
//
// Status updates and 409: the reconciler decides the status; the actuator only delivers it. A
// Conflict means the CronJob changed since the pass read it (usually our own previous write or a
// spec edit). The actuator re-reads the CronJob and PUTs the SAME status with the fresh
// resourceVersion, up to `status_conflict_retries` times; it never merges or recomputes the
// status (the status subresource ignores everything but status, so spec edits are kept). A
// different uid on the fresh read (the CronJob was re-created) ends the retries with Conflict.
// The spec change that caused the conflict arrives as a watch event and triggers its own pass.
//
// Thread safety: Perform and RecordEvent may be called from any thread.

#include <functional>
#include <string>

#include "controller/actuator.h"
#include "emit/event_recorder.h"
#include "emit/metrics.h"
#include "kube/client.h"

namespace cronledger::emit {

struct KubeActuatorOptions {
  // The managed CronJob resource. Default: cronjobs.v1.cronledger.io.
  kube::ResourceType cron_jobs = kube::CronledgerCronJobs();
  // Fresh-read-and-retry rounds of a status update answered 409. Default: 5.
  int status_conflict_retries = 5;
};

class KubeActuator final : public controller::Actuator {
 public:
  // Collaborators are not owned and must outlive the actuator; `log` may be empty.
  KubeActuator(kube::KubeClient& client, EventRecorder& events, ControllerMetrics& metrics,
               KubeActuatorOptions options, std::function<void(const std::string&)> log = {});

  model::ApiOutcome Perform(const model::ApiCall& call) override;
  void RecordEvent(const model::CronJobRef& cron_job, const reconciler::Event& event) override;

 private:
  model::ApiOutcome CreateJob(const model::ApiCall& call);
  model::ApiOutcome UpdateStatus(const model::ApiCall& call);
  void ObserveSkew(const model::Json& request, const model::Json& created);

  kube::KubeClient& client_;
  EventRecorder& events_;
  ControllerMetrics& metrics_;
  const KubeActuatorOptions options_;
  std::function<void(const std::string&)> log_;
};

// The outcome of a failed request, as the ledger records it.
model::ApiOutcome OutcomeOf(const kube::ApiError& error);

}  // namespace cronledger::emit
