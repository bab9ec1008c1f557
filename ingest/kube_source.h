#pragma once

// Watch ingest from the Kubernetes API (docs/run.md "Ingest"). KubeWatchSink is the
// kube::ReflectorSink of one resource (CronJobs of the managed resource, or batch/v1 Jobs): it
// hands the reflector's events, decoded once by the watch (model::WatchDecoder) and holding the
// objects' bytes as the API server sent them, to an IngestFn — in
// `cronledger run` that is Controller::Ingest, which commits them to the ledger as one unit of
// work before the handlers run (docs/design.md rule 1).
//
// The resume point rides in the same unit of work as the events it covers: folding a watch event
// stores its resourceVersion as the resource's version (store::Ledger::GetResourceVersion, keyed
// "<apiVersion>/<Kind>"), and a checkpoint without an object change (a bookmark, the end of a
// relist) is committed as a BOOKMARK WatchEvent carrying the version. So:
//   * a watch event and its checkpoint are durable together, or neither is;
//   * the synthetic events of a relist are buffered and committed in ONE unit together with the
//     list's version (the reflector calls OnCheckpoint after the whole difference): a crash in the
//     middle of a relist leaves the previous resume point, never a half-applied difference whose
//     objects' (older) versions would otherwise become the resume point;
//   * after a restart, StoredResourceVersion() is where the reflector resumes, and KnownObjects()
//     is what it diffs a relist against, so deletions missed while stopped reach the ledger as
//     synthetic DELETED events.
// Objects the decoder refused, and objects of another kind, are quarantined with the reason and
// the bytes as sent (rule 5), and the reflector carries on.
//
// Thread safety: one reflector thread drives a sink; stats() may be read from any thread.

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "kube/reflector.h"
#include "model/inputs.h"
#include "model/json.h"
#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::ingest {

// Commits events as one unit of work and runs whatever reacts to them (Controller::Ingest).
using IngestFn = std::function<Status(std::vector<model::WatchEvent>)>;
// One line for the operator's log.
using LogFn = std::function<void(const std::string&)>;
// Called after events were committed (the shadow auditor watches Jobs through it). Optional.
using ObserveFn = std::function<void(const std::vector<model::WatchEvent>&)>;

struct KubeSinkOptions {
  model::ObjectKind kind = model::ObjectKind::kCronJob;
  // The resource's apiVersion ("batch/v1", "cronledger.io/v1"): the version checkpoints are
  // stored under. Required.
  std::string api_version;
  // Names the source in quarantine entries and logs, e.g. "kube:cronjobs.v1.batch". Required.
  std::string source;
};

struct KubeSinkStats {
  uint64_t events = 0;       // watch and synthetic events committed
  uint64_t synthetic = 0;    // of those, derived from a relist
  uint64_t checkpoints = 0;  // bookmark / end-of-relist checkpoints committed
  uint64_t quarantined = 0;
  uint64_t relists = 0;
  uint64_t watch_ends = 0;       // watches that ended (dropped, stalled, expired, closed)
  uint64_t watch_stalls = 0;     // of those, no byte within the stall timeout
  uint64_t watch_drops = 0;      // of those, cut before the terminating chunk
  std::string resource_version;  // the last committed resume point
};

class KubeWatchSink final : public kube::ReflectorSink {
 public:
  // `ledger` (quarantine) must outlive the sink. `log` and `observe` may be empty.
  KubeWatchSink(KubeSinkOptions options, IngestFn ingest, store::Ledger& ledger, LogFn log = {},
                ObserveFn observe = {});
  ~KubeWatchSink() override;

  Status OnEvent(const kube::ReflectorEvent& event) override;
  Status OnCheckpoint(const std::string& resource_version) override;
  void OnNotice(const kube::ReflectorNotice& notice) override;

  KubeSinkStats stats() const;

 private:
  // True when the event's object is one this sink commits; otherwise it is quarantined (false).
  Result<bool> Accept(const kube::ReflectorEvent& event);
  Status Commit(std::vector<model::WatchEvent> events, uint64_t synthetic, bool checkpoint);

  const KubeSinkOptions options_;
  IngestFn ingest_;
  store::Ledger& ledger_;
  LogFn log_;
  ObserveFn observe_;
  std::vector<model::WatchEvent> relist_;  // synthetic events awaiting the list's checkpoint
  mutable std::mutex mu_;
  KubeSinkStats stats_;
};

// The ledger's view key of a resource's stored version: "<apiVersion>/<Kind>".
std::string ResourceKey(std::string_view api_version, model::ObjectKind kind);
// Where a reflector of this resource resumes: the last committed version, "" when none (list
// first). Errors are the ledger's.
Result<std::string> StoredResourceVersion(store::Ledger& ledger, std::string_view api_version,
                                          model::ObjectKind kind);
// What the view holds of a resource (kube::ReflectorOptions::known_objects), from the view's
// entries and stored bytes without parsing them: every object of `kind` and `api_version`, owned
// or not, from one snapshot.
Result<std::vector<model::WatchEvent>> KnownObjects(store::Ledger& ledger,
                                                    std::string_view api_version,
                                                    model::ObjectKind kind);

}  // namespace cronledger::ingest
