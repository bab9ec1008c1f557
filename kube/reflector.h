#pragma once

// A list-then-watch reflector, like client-go's Reflector feeding an informer, shaped for an
// event-sourced controller:
//
//   * It lists (paginated) when it has no resume point or the server says the point expired
//     (410), and turns the difference between the list and what it knew into synthetic
//     ADDED / MODIFIED / DELETED events, so objects deleted while nobody watched are not missed.
//   * It watches from the last resourceVersion it delivered (bookmarks advance it too) and resumes
//     there after a dropped or stalled stream, backing off between attempts.
//   * It can start from a stored resume point and the objects the ledger's view holds, so a
//     restarted controller continues where it stopped.
//
// The seam for ingest (docs/design.md rule 1, "the log is the source of truth"): every change goes
// to ReflectorSink::OnEvent before the reflector's own cache or resume point reflects it. The sink
// appends it to the ledger, atomically with `event.checkpoint` when present; if the sink fails,
// Run() stops and returns that Status without advancing, so a restart from the last stored
// checkpoint delivers the event again (at-least-once; the ledger de-duplicates by
// resourceVersion if it wants exactly-once).

#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "kube/client.h"
#include "kube/sleeper.h"

namespace cronledger::kube {

struct ReflectorEvent {
  // The change, decoded once (model::WatchDecoder): its type (kAdded, kModified or kDeleted), the
  // object's fields and its bytes as the server sent them. For a refused object, only the type and
  // the resourceVersion that could be read.
  model::WatchEvent event;
  // Set when the decoder refused the object: why, and the bytes as the server sent them.
  std::optional<model::Rejection> rejection;
  // Derived from a relist rather than received as a watch event. A synthetic DELETED carries the
  // last state the reflector knew (client-go's DeletedFinalStateUnknown).
  bool synthetic = false;
  // Once this event is durable, a watch may resume from here. Empty for relist events: the list's
  // version becomes the resume point only when the whole difference is delivered (OnCheckpoint).
  std::string checkpoint;
};

struct ReflectorNotice {
  enum class Kind {
    kListed,       // a (re)list finished and its difference was delivered
    kListFailed,   // the list request failed
    kWatchFailed,  // the watch request was refused
    kWatchEnded,   // an opened watch ended (see `end`)
  };
  Kind kind = Kind::kListed;
  WatchEnd end = WatchEnd::kClosed;  // for kWatchEnded
  std::string resource_version;      // the resume point after this step
  int64_t events = 0;                // watch events (bookmarks included) the stream carried
  bool expired = false;              // the server said the resume point is compacted away (410)
  std::string detail;
};

class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // One change, in order. Non-OK stops the reflector without advancing (see the file comment).
  virtual Status OnEvent(const ReflectorEvent& event) = 0;
  // The resume point moved without an object change (a bookmark, the end of a relist diff).
  // Persist it like an event's checkpoint. Non-OK stops the reflector.
  virtual Status OnCheckpoint(const std::string& resource_version) = 0;
  // Progress and trouble, for logs and metrics. Default: ignored.
  virtual void OnNotice(const ReflectorNotice& notice) { (void)notice; }
};

struct ReflectorOptions {
  ResourceType type;
  std::string namespace_;  // "" = all namespaces
  std::string label_selector;
  std::string field_selector;
  // List page size. Default: 500 (client-go's pager).
  int64_t page_size = 500;
  // A stored resume point; "" lists first.
  std::string resource_version;
  // What the caller already holds for this resource (e.g. the ledger's view), diffed against the
  // first list so that deletions missed while stopped become synthetic DELETED events.
  std::vector<model::WatchEvent> known_objects;
  // Server-side watch timeout: 5 min stretched by a deterministic [0, 1) fraction, as client-go
  // spreads its 5–10 min watches.
  Duration watch_timeout = std::chrono::minutes(5);
  Duration stall_timeout = std::chrono::seconds(90);
  // Back-off between failed attempts. Default: 800 ms doubling to 30 s, jitter 1.0 (client-go).
  Duration backoff_initial = std::chrono::milliseconds(800);
  Duration backoff_max = std::chrono::seconds(30);
  double backoff_jitter = 1.0;
};

class Reflector {
 public:
  // `client`, `sleeper` and `sink` must outlive the reflector.
  Reflector(KubeClient& client, Sleeper& sleeper, ReflectorSink& sink, ReflectorOptions options);

  // Lists and watches until `cancel` fires (OK) or the sink fails (its Status).
  Status Run(const Cancellation& cancel);

  // One cycle without back-off: a list if needed, then one watch to its end. Returns the sink's
  // error if it failed; otherwise OK with the notice describing what happened (RunOnce is what
  // Run() loops over, exposed for tests and custom drivers).
  Result<ReflectorNotice> RunOnce(const Cancellation& cancel);

  std::string resource_version() const;  // the current resume point
  size_t known_count() const;            // objects in the reflector's cache
  // client-go's HasSynced: a list was delivered, or (resuming from a stored resourceVersion) the
  // server accepted a watch from it, so the caller's view is current as of that point. Stays true.
  bool HasSynced() const { return synced_.load(); }

 private:
  // The last accepted state of an object (a synthetic DELETED carries it).
  using Known = model::WatchEvent;
  Result<ReflectorNotice> Relist();
  Result<ReflectorNotice> WatchOnce(const Cancellation& cancel);
  Status Deliver(ReflectorEvent event);

  KubeClient& client_;
  Sleeper& sleeper_;
  ReflectorSink& sink_;
  const ReflectorOptions options_;
  const std::string key_;  // jitter key: resource and namespace
  mutable std::mutex mu_;
  std::string resource_version_;
  bool need_list_;
  std::map<std::string, Known> known_;  // by namespace/name
  // Objects whose latest version the decoder refused: that version, by namespace/name.
  std::map<std::string, std::string> refused_;
  model::WatchDecoder decoder_;  // list pages (Relist runs on the reflector's thread)
  int64_t watches_ = 0;
  std::atomic<bool> synced_{false};
};

}  // namespace cronledger::kube
