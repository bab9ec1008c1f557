#pragma once

// KubeClient over HTTP/1.1 with Poco (HTTPS with the cluster CA and optional client certificate;
// plain HTTP for tests). Per request:
//   1. throttle: a token bucket (qps/burst) on the injected MonotonicClock; waits go through the
//      injected Sleeper;
//   2. authenticate: the bearer token, re-read from the token file when it rotates;
//   3. send with `request_timeout` on connect, send and receive;
//   4. retry: 429 always, 5xx and transport failures only for idempotent verbs (GET, PUT, DELETE
//      and opening a watch), honouring Retry-After, else jittered exponential back-off
//      (kube/retry_policy.h). Retried PUTs may report Conflict and retried DELETEs NotFound when
//      the first attempt took effect but its response was lost.
// Thread-safe: verbs may be called concurrently; each watch holds its own connection.

#include <memory>
#include <string>

#include "kube/client.h"
#include "kube/config.h"
#include "kube/retry_policy.h"
#include "kube/sleeper.h"
#include "model/clock.h"

namespace cronledger::kube {

struct PocoKubeClientOptions {
  KubeConfig config;
  // Required; must outlive the client. Used for throttling.
  const MonotonicClock* clock = nullptr;
  // Required; must outlive the client. Every wait (throttle, retry back-off) goes through it.
  Sleeper* sleeper = nullptr;
  // Required with an exec credential plugin (config.exec), which it tells when the credential
  // expired; must outlive the client. Unused otherwise.
  const WallClock* wall_clock = nullptr;
  // Per attempt: connect, send, and each receive of a non-watch request. Default: 30 s.
  Duration request_timeout = std::chrono::seconds(30);
  // Client-side rate limit; qps <= 0 disables it. Default: 20 qps, burst 30 (controller-runtime).
  double qps = 20;
  int burst = 30;
  RetryOptions retry;
  // Sent as User-Agent; the API server records its first segment as the field manager.
  std::string user_agent = "cronledger/0.1.0";
  // Keep-alive connections kept for reuse. Default: 4.
  size_t max_idle_connections = 4;
};

class PocoKubeClient final : public KubeClient {
 public:
  // InvalidArgument for a missing clock/sleeper, an unusable server URL or bad TLS material.
  static Result<std::unique_ptr<PocoKubeClient>> Open(const PocoKubeClientOptions& options);
  ~PocoKubeClient() override;

  KubeResult<Json> Get(const ResourceType& type, std::string_view ns,
                       std::string_view name) override;
  KubeResult<ObjectList> List(const ResourceType& type, std::string_view ns,
                              const ListOptions& options) override;
  KubeResult<std::string> ListBytes(const ResourceType& type, std::string_view ns,
                                    const ListOptions& options) override;
  KubeResult<Json> Create(const ResourceType& type, std::string_view ns,
                          const Json& object) override;
  KubeResult<Json> Update(const ResourceType& type, std::string_view ns,
                          const Json& object) override;
  KubeResult<Json> UpdateStatus(const ResourceType& type, std::string_view ns,
                                const Json& object) override;
  KubeResult<Json> Patch(const ResourceType& type, std::string_view ns, std::string_view name,
                         PatchType patch_type, const Json& patch,
                         std::string_view subresource) override;
  KubeResult<Json> Delete(const ResourceType& type, std::string_view ns, std::string_view name,
                          const DeleteOptions& options) override;
  KubeResult<WatchResult> Watch(const ResourceType& type, std::string_view ns,
                                const WatchOptions& options, const WatchHandler& handler) override;

  // A client for best-effort requests (Kubernetes Events) that shares this client's rate limit
  // but only spends what this client's own requests leave: each of its requests waits until the
  // bucket holds a whole token, so never ahead of an outstanding reservation. Its own connections,
  // the same settings otherwise. Must not outlive this client.
  Result<std::unique_ptr<PocoKubeClient>> Background() const;

 private:
  struct Impl;
  explicit PocoKubeClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronledger::kube
