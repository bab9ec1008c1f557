#pragma once

// A kube-apiserver stand-in for tests (docs/design.md §6): a real HTTP/1.1 server on 127.0.0.1 with
// an OS-assigned port, speaking the API's REST and watch protocol for the resources in
// kube/resource.h — resourceVersions from one global revision, uid/creationTimestamp/generation/
// managedFields filled like the real server, generateName, paginated lists served from one
// snapshot, chunked watch streams from any retained resourceVersion, bookmarks, compaction with
// 410 Expired, AlreadyExists/NotFound/Conflict/Invalid with real Status bodies, status subresource
// semantics and DELETE with propagationPolicy. Fault injection covers what the controller must
// survive. Deviations from the real server are listed in docs/kube.md.
//
// Hermetic: no fixed ports or paths; every instance is independent. Thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kube/resource.h"
#include "model/json.h"
#include "model/result.h"
#include "model/time.h"

namespace cronledger::kube::testing {

using model::Json;

struct FakeApiServerOptions {
  // The wall clock for creationTimestamp, deletionTimestamp and managedFields times.
  // Default: a fixed 2024-01-01T00:00:00Z that advances one second per write, so objects are
  // reproducible.
  std::function<Time()> now;
  // The revision before the first write. Default: 1000.
  int64_t first_resource_version = 1000;
  // Keep only this many revisions of history; older ones are compacted after every write (the
  // real server compacts every 5 minutes). 0 = keep everything until Compact(). Default: 0.
  int64_t compaction_window = 0;
  // When non-empty, requests must carry "Authorization: Bearer <one of these>" or get 401.
  std::vector<std::string> bearer_tokens;
  // Split every watch event into chunks of at most this many bytes (0 = one chunk per event), to
  // exercise clients' handling of events spread over chunk boundaries.
  size_t watch_chunk_bytes = 0;
  // A watch from a compacted resourceVersion: false (default) answers 200 then an ERROR event
  // with a 410 Expired Status, as the watch cache does; true answers HTTP 410, as older servers
  // and etcd-direct watches did.
  bool watch_expired_as_http_error = false;
  // HTTPS: the server's PEM certificate chain and key (both or neither); url() is https:// then.
  std::string tls_cert_pem;
  std::string tls_key_pem;
  // With HTTPS: client certificates are requested and verified against this CA bundle, and the
  // certificate's CN is recorded as the request's user (kube-apiserver's x509 authenticator); a
  // client without a certificate is served too (it may authenticate with a token), one with a
  // certificate the CA did not sign fails the handshake.
  std::string client_ca_pem;
};

struct RecordedRequest {
  std::string method;
  std::string path;
  std::string query;
  std::string authorization;
  std::string content_type;
  std::string user_agent;
  std::string body;
  int status = 0;              // the HTTP status answered (0 while a watch is still streaming)
  bool delayed = false;        // its response was held back by SlowNext()
  bool held = false;           // it waited in HoldRequests() before being served
  std::string client_cert_cn;  // HTTPS: the verified client certificate's common name
};

// What HTTP POSTs did for one object name (creates through the direct API are not counted).
struct CreateTally {
  int created = 0;         // answered 201
  int already_exists = 0;  // answered 409 AlreadyExists
};

class FakeApiServer {
 public:
  static Result<std::unique_ptr<FakeApiServer>> Start(const FakeApiServerOptions& options);
  ~FakeApiServer();  // stops serving; open watches end

  std::string url() const;  // "http://127.0.0.1:<port>" (https:// with TLS options)
  uint16_t port() const;

  // Direct access, as another API client would act (changes produce watch events). Errors carry
  // the Status the HTTP API would answer.
  Result<Json> Create(const ResourceType& type, const Json& object);
  Result<Json> Update(const ResourceType& type, const Json& object);  // unconditional unless RV
  Result<Json> Delete(const ResourceType& type, const std::string& ns, const std::string& name);
  std::optional<Json> Get(const ResourceType& type, const std::string& ns,
                          const std::string& name) const;
  int64_t resource_version() const;

  // Compaction: forget history at or below the current (or given) revision.
  void Compact();
  void CompactTo(int64_t revision);

  // Fault injection. FailNext: the next `n` requests (whose method equals `method`, when given)
  // are answered with `code` (429, 500, 503, ...) and a matching Status; a Retry-After header and
  // details.retryAfterSeconds are added when `retry_after_seconds` is set.
  void FailNext(int n, int code, std::optional<int> retry_after_seconds = std::nullopt,
                const std::string& method = "");
  void DropWatches();    // cut every open watch mid-stream: no terminating chunk
  void ExpireWatches();  // send an ERROR 410 Expired event to every open watch and end it
  void CloseWatches();   // end every open watch cleanly, as its timeoutSeconds would
  void SendBookmarks();  // a BOOKMARK with the current revision to watches that allow them
  void SetWatchesStalled(bool stalled);  // stop (or resume) writing to open and new watches
  // Stall the watches open now, for good: they write nothing more (no event, no bookmark, no
  // terminating chunk) and keep the connection open, like a half-open TCP connection or a wedged
  // proxy. Watches opened afterwards stream normally.
  void StallOpenWatches();
  // Slow responses: the next `n` requests (of `method` and to `path`, when given; never watches)
  // are served as
  // usual — a write takes effect — but the response is held back for `delay` before it is
  // written, as from an overloaded server or a congested network. A client whose timeout is
  // shorter gives up meanwhile and never sees the answer.
  void SlowNext(int n, Duration delay, const std::string& method = "",
                const std::string& path = "");
  // Held requests: from now on, requests of `method` whose User-Agent starts with
  // `user_agent_prefix` (never watches) wait before the server reads or changes anything, as
  // behind a stuck admission webhook or a congested proxy, until ReleaseHeld(). Nothing they ask
  // takes effect while they wait; once released they are served as usual. held_requests(): how
  // many wait now. A client whose timeout is shorter gives up meanwhile, as with SlowNext().
  void HoldRequests(const std::string& method, const std::string& user_agent_prefix);
  void ReleaseHeld();
  int held_requests() const;
  void SetNamespaceTerminating(const std::string& ns, bool terminating);

  // Observation.
  std::vector<RecordedRequest> requests() const;
  size_t request_count() const;
  void ClearRequests();
  int open_watches() const;
  // HTTP creates per "namespace/name" of `type`.
  std::map<std::string, CreateTally> creates(const ResourceType& type) const;
  // Blocks (real time, bounded by `timeout`) until at least `n` watches are open.
  bool WaitForWatches(int n, Duration timeout) const;

  struct Impl;

 private:
  explicit FakeApiServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronledger::kube::testing
