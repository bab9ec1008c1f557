// KubeWatchSink: reflector events → model::WatchEvents → Controller::Ingest (docs/run.md).
#include "ingest/kube_source.h"

#include <utility>

#include "model/watch_decoder.h"

namespace cronledger::ingest {
namespace {

std::string NoticeText(const kube::ReflectorNotice& n) {
  using Kind = kube::ReflectorNotice::Kind;
  std::string what;
  switch (n.kind) {
    case Kind::kListed:
      what = "listed";
      break;
    case Kind::kListFailed:
      what = "list failed";
      break;
    case Kind::kWatchFailed:
      what = "watch refused";
      break;
    case Kind::kWatchEnded:
      what = "watch ended (" + std::string(kube::WatchEndName(n.end)) + ")";
      break;
  }
  std::string out = what + " at resourceVersion " + n.resource_version;
  if (n.expired) out += ", expired: relisting";
  if (!n.detail.empty()) out += ": " + n.detail;
  return out;
}

}  // namespace

KubeWatchSink::KubeWatchSink(KubeSinkOptions options, IngestFn ingest, store::Ledger& ledger,
                             LogFn log, ObserveFn observe)
    : options_(std::move(options)),
      ingest_(std::move(ingest)),
      ledger_(ledger),
      log_(std::move(log)),
      observe_(std::move(observe)) {}

KubeWatchSink::~KubeWatchSink() = default;

Result<bool> KubeWatchSink::Accept(const kube::ReflectorEvent& event) {
  if (!event.rejection.has_value() && event.event.kind == options_.kind) return true;
  store::QuarantineEntry q;
  q.source = options_.source;
  if (event.rejection.has_value()) {
    q.reason = event.rejection->reason;
    q.raw = event.rejection->raw;
  } else {
    q.reason = "expected a " + std::string(model::ObjectKindName(options_.kind));
    q.raw = event.event.raw;
  }
  if (log_) log_(options_.source + ": quarantined an object: " + q.reason);
  store::UnitOfWork unit;
  unit.quarantine.push_back(std::move(q));
  CL_RETURN_IF_ERROR(ledger_.Commit(std::move(unit)).status());
  std::lock_guard lock(mu_);
  ++stats_.quarantined;
  return false;
}

Status KubeWatchSink::OnEvent(const kube::ReflectorEvent& event) {
  CL_ASSIGN_OR_RETURN(const bool accepted, Accept(event));
  if (event.synthetic) {
    // Held until the list's checkpoint: the difference and the new resume point are one unit.
    if (accepted) relist_.push_back(event.event);
    return Status::Ok();
  }
  if (!accepted) {
    // The object is quarantined; its version still moves the resume point so that the rejected
    // event is not fetched again after a restart.
    if (event.checkpoint.empty()) return Status::Ok();
    return OnCheckpoint(event.checkpoint);
  }
  std::vector<model::WatchEvent> events;
  events.push_back(event.event);
  return Commit(std::move(events), 0, false);
}

Status KubeWatchSink::OnCheckpoint(const std::string& resource_version) {
  std::vector<model::WatchEvent> events = std::move(relist_);
  relist_.clear();
  const uint64_t synthetic = events.size();
  model::WatchEvent bookmark;
  bookmark.type = model::WatchEventType::kBookmark;
  bookmark.kind = options_.kind;
  bookmark.api_version = options_.api_version;
  bookmark.resource_version = resource_version;
  // Last in the unit: the resource's stored version ends at the checkpoint, whatever older
  // versions the synthetic events before it carried.
  events.push_back(std::move(bookmark));
  return Commit(std::move(events), synthetic, true);
}

Status KubeWatchSink::Commit(std::vector<model::WatchEvent> events, uint64_t synthetic,
                             bool checkpoint) {
  const std::string rv = events.back().resource_version;
  const uint64_t objects = events.size() - (checkpoint ? 1 : 0);
  std::vector<model::WatchEvent> observed;
  if (observe_) observed = events;
  CL_RETURN_IF_ERROR(ingest_(std::move(events)).WithContext(options_.source));
  if (observe_) observe_(observed);
  std::lock_guard lock(mu_);
  stats_.events += objects;
  stats_.synthetic += synthetic;
  if (checkpoint) ++stats_.checkpoints;
  if (!rv.empty()) stats_.resource_version = rv;
  return Status::Ok();
}

void KubeWatchSink::OnNotice(const kube::ReflectorNotice& notice) {
  {
    std::lock_guard lock(mu_);
    if (notice.kind == kube::ReflectorNotice::Kind::kListed) ++stats_.relists;
    if (notice.kind == kube::ReflectorNotice::Kind::kWatchEnded) {
      ++stats_.watch_ends;
      if (notice.end == kube::WatchEnd::kStalled) ++stats_.watch_stalls;
      if (notice.end == kube::WatchEnd::kDropped) ++stats_.watch_drops;
    }
  }
  // A relist that failed part-way leaves buffered events of a difference that will be computed
  // again; drop them so they are not committed with a later checkpoint.
  if (notice.kind == kube::ReflectorNotice::Kind::kListFailed) relist_.clear();
  if (log_) log_(options_.source + ": " + NoticeText(notice));
}

KubeSinkStats KubeWatchSink::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

std::string ResourceKey(std::string_view api_version, model::ObjectKind kind) {
  return std::string(api_version) + "/" + std::string(model::ObjectKindName(kind));
}

Result<std::string> StoredResourceVersion(store::Ledger& ledger, std::string_view api_version,
                                          model::ObjectKind kind) {
  auto rv = ledger.GetResourceVersion(ResourceKey(api_version, kind));
  if (!rv.ok() && rv.status().IsNotFound()) return std::string();
  return rv;
}

Result<std::vector<model::WatchEvent>> KnownObjects(store::Ledger& ledger,
                                                    std::string_view api_version,
                                                    model::ObjectKind kind) {
  // The view's entries hold each object's decoded fields and its bytes: nothing is parsed.
  std::vector<model::WatchEvent> out;
  CL_RETURN_IF_ERROR(ledger
                         .ScanViewObjects([&](store::ViewObject object) {
                           if (object.entry.kind == kind &&
                               object.entry.api_version == api_version) {
                             out.push_back(store::StoredEvent(std::move(object)));
                           }
                           return Status::Ok();
                         })
                         .status());
  return out;
}

}  // namespace cronledger::ingest
