#pragma once

// Where a reconcile pass's API calls go: the real API server (emit/), the simulated cluster
// (controller/sim_cluster.h), or nowhere (shadow mode records what would have been done).

#include "model/api_call.h"
#include "model/decision.h"
#include "reconciler/decide.h"

namespace cronledger::controller {

class Actuator {
 public:
  virtual ~Actuator() = default;
  // Performs one call of a pass (get/create/delete Job, get CronJob, update CronJob status) and
  // returns its outcome: the returned object on success, or the Kubernetes status reason and
  // message on failure. Never throws. Thread-safe. Must be idempotent with respect to the
  // controller's retries: creating a Job whose name exists answers AlreadyExists.
  virtual model::ApiOutcome Perform(const model::ApiCall& call) = 0;
  // Records a Kubernetes Event on the CronJob. Best effort (like client-go's recorder); called
  // only after the pass that produced it is committed to the ledger.
  virtual void RecordEvent(const model::CronJobRef& cron_job, const reconciler::Event& event) = 0;
};

}  // namespace cronledger::controller
