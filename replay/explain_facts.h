#pragma once

// The facts `why` collects while replaying one CronJob (replay/explain.h); internal to replay/.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/decision.h"
#include "model/objects.h"
#include "replay/engine.h"

namespace cronledger::replay::internal {

struct CronJobVersion {
  uint64_t seq = 0;
  bool deleted = false;
  std::string resource_version;
  std::string uid;
  model::CronJobSpec spec;
  std::optional<Time> created;
  std::string error;  // the version's bytes do not decode: why (reconciler::StoredCronJobError)
};

struct JobVersion {
  uint64_t seq = 0;
  bool deleted = false;
  std::optional<Time> created;
  std::optional<std::string> finished;  // "Complete" | "Failed"
  std::optional<Time> completion;
};

struct TickAt {
  Time now;
  uint64_t seq = 0;
};

struct PassFacts {
  PassSummary summary;
  std::vector<std::string> active;  // status.active of the CronJob the pass read
  std::string resource_version;     // of that CronJob
  model::CronJobSpec spec;
  std::vector<model::Decision> decisions;
};

// Collects the facts while the engine replays the CronJob.
class FactCollector final : public ReplayObserver {
 public:
  FactCollector(std::string ns, std::string name) : ns_(std::move(ns)), name_(std::move(name)) {}
  void OnInput(const store::LogRecord& rec) override;
  void OnPass(const PassContext& pass) override;

  std::vector<CronJobVersion> cron_job;                 // in seq order
  std::map<std::string, std::vector<JobVersion>> jobs;  // by Job name, in seq order
  std::vector<TickAt> own_ticks;                        // this CronJob's Ticks
  std::vector<TickAt> all_ticks;                        // every Tick of the log
  std::vector<PassFacts> passes;                        // replayed passes of this CronJob

 private:
  std::string ns_, name_;
};

}  // namespace cronledger::replay::internal
