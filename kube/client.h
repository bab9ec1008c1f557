#pragma once

// The Kubernetes API as cronledger uses it: typed verbs over JSON objects for the resources in
// kube/resource.h. Objects stay JSON (model/objects.h decodes the ones the controller reads) so
// nothing the server sent is lost on the way to the ledger. Watch events and list pages for the
// ledger are not parsed here: they are decoded once, by model::WatchDecoder, and keep the bytes
// the server sent.
//
// Errors are ApiErrors carrying the server's Status (reason, causes) — see kube/api_error.h.
// Implementations throttle, time out and retry as documented on PocoKubeClient.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kube/api_error.h"
#include "kube/resource.h"
#include "kube/sleeper.h"
#include "model/json.h"
#include "model/time.h"
#include "model/watch_decoder.h"

namespace cronledger::kube {

using model::Json;

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  // Page size (`limit`); 0 asks for everything at once.
  int64_t limit = 0;
  // `continue` from the previous page.
  std::string continue_token;
  // "" = a consistent read of the latest state; "0" = any state the server has cached.
  std::string resource_version;
  // "" (server default), "NotOlderThan" or "Exact".
  std::string resource_version_match;
};

struct ObjectList {
  // The list's metadata.resourceVersion: watch from here to see every later change.
  std::string resource_version;
  std::string continue_token;  // empty on the last page
  std::optional<int64_t> remaining_item_count;
  // Items as served. Built-in lists omit kind/apiVersion on items; custom resources include them.
  std::vector<Json> items;
};

enum class PatchType {
  kMerge,           // application/merge-patch+json (RFC 7386)
  kStrategicMerge,  // application/strategic-merge-patch+json
  kJson,            // application/json-patch+json (RFC 6902)
};

enum class PropagationPolicy {
  kBackground,  // delete now, garbage-collect dependents afterwards (what the CronJob controller
                // uses)
  kForeground,
  kOrphan,
  kServerDefault,  // send no propagationPolicy (batch/v1 Jobs then default to Orphan)
};

struct DeleteOptions {
  PropagationPolicy propagation = PropagationPolicy::kBackground;
  std::string precondition_uid;               // 409 Conflict when the live uid differs
  std::string precondition_resource_version;  // 409 Conflict when the live version differs
};

struct WatchOptions {
  // Start after this resourceVersion. "" = the current state as synthetic ADDED events first.
  std::string resource_version;
  bool allow_bookmarks = true;
  std::string label_selector;
  std::string field_selector;
  // Asks the server to close the stream after this long (`timeoutSeconds`); 0 = server default.
  Duration server_timeout = Duration::zero();
  // No byte for this long means the stream stalled (a half-open connection, a wedged proxy).
  // With bookmarks the real server writes about once a minute. Default: 90 s.
  Duration stall_timeout = std::chrono::seconds(90);
  // Optional; cancelling it ends the watch promptly with WatchEnd::kCancelled.
  const Cancellation* cancel = nullptr;
  // Optional; called once the server accepted the watch (HTTP 200), before the first event.
  std::function<void()> on_open;
};

enum class WatchEnd {
  kClosed,     // the server ended the stream cleanly (its timeout): resume from the last version
  kExpired,    // an ERROR event with 410 Gone/Expired: the version is compacted away, relist
  kDropped,    // the connection broke mid-stream: resume from the last version
  kStalled,    // no byte within stall_timeout: resume from the last version
  kCancelled,  // options.cancel fired
  kStopped,    // the handler returned false
  kError,      // another ERROR event, or bytes that do not decode as a watch event
};
std::string_view WatchEndName(WatchEnd end);

struct WatchResult {
  WatchEnd end = WatchEnd::kClosed;
  int64_t events = 0;             // events delivered to the handler
  std::optional<ApiError> error;  // for kExpired and an ERROR-event kError: the server's Status
  std::string detail;             // what happened, for logs
};

// Receives each event in stream order, decoded once by model::WatchDecoder: either one event in
// `events`, whose raw bytes are the object exactly as the server sent it, or one rejection for an
// object the decoder refused (the reason, the event as sent, its type and the object's
// resourceVersion when readable); the handler may take them. Returns false to stop the watch. Runs
// on the watching thread. An ERROR event ends the watch (WatchResult) instead, as do bytes that are
// not a watch event.
using WatchHandler = std::function<bool(model::DecodedDocument&)>;

class KubeClient {
 public:
  virtual ~KubeClient() = default;

  virtual KubeResult<Json> Get(const ResourceType& type, std::string_view ns,
                               std::string_view name) = 0;
  // One page. `ns` empty lists across all namespaces.
  virtual KubeResult<ObjectList> List(const ResourceType& type, std::string_view ns,
                                      const ListOptions& options) = 0;
  // One page as the server sent it: the response body, unparsed, for a caller that decodes it
  // once itself (ListAllDecoded).
  virtual KubeResult<std::string> ListBytes(const ResourceType& type, std::string_view ns,
                                            const ListOptions& options) = 0;
  // POST; the object may carry metadata.generateName instead of a name. Returns the created object.
  virtual KubeResult<Json> Create(const ResourceType& type, std::string_view ns,
                                  const Json& object) = 0;
  // PUT of the whole object (name from metadata.name). A metadata.resourceVersion makes it
  // conditional (409 Conflict when stale). On resources with a status subresource the server
  // ignores status here.
  virtual KubeResult<Json> Update(const ResourceType& type, std::string_view ns,
                                  const Json& object) = 0;
  // PUT .../status: only status changes; same optimistic concurrency as Update.
  virtual KubeResult<Json> UpdateStatus(const ResourceType& type, std::string_view ns,
                                        const Json& object) = 0;
  // PATCH of the object, or of `subresource` ("status") when not empty.
  virtual KubeResult<Json> Patch(const ResourceType& type, std::string_view ns,
                                 std::string_view name, PatchType patch_type, const Json& patch,
                                 std::string_view subresource) = 0;
  // Returns what the server returns: a Status (kind "Status", status "Success") when the object
  // is gone at once, or the object with deletionTimestamp set while finalizers run.
  virtual KubeResult<Json> Delete(const ResourceType& type, std::string_view ns,
                                  std::string_view name, const DeleteOptions& options) = 0;
  // Opens a watch and streams events to `handler` until the stream ends; blocks meanwhile. A
  // request the server refuses (HTTP 410 for a too-old version on some servers, 403, 429 after
  // retries) is an ApiError; every end of an opened stream is a WatchResult.
  virtual KubeResult<WatchResult> Watch(const ResourceType& type, std::string_view ns,
                                        const WatchOptions& options,
                                        const WatchHandler& handler) = 0;
};

// Reads every page (options.limit is the page size) with ListBytes and decodes each once with
// `decoder` into `out` (its objects keep the bytes the server sent; a typed list's items get its
// kind and apiVersion in front). Returns the snapshot's resourceVersion, as client-go's pager
// does. If a continue token expires mid-way (410) it starts over once with a single unpaginated
// list, also like the pager. A page that is not a list is a transport error.
KubeResult<std::string> ListAllDecoded(KubeClient& client, const ResourceType& type,
                                       std::string_view ns, ListOptions options,
                                       model::WatchDecoder& decoder, model::DecodedDocument* out);

}  // namespace cronledger::kube
