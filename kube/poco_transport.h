#pragma once

// Internal to kube/: the HTTP(S) layer under PocoKubeClient. Included only by kube/*.cc, so the
// Poco-free public headers stay Poco-free (docs/dev/conventions.md "Layout").

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "kube/api_error.h"
#include "kube/client.h"
#include "kube/config.h"
#include "model/time.h"

namespace cronledger::kube::internal {

struct HttpRequest {
  std::string method;
  std::string path_and_query;  // "/apis/batch/v1/namespaces/ns/jobs?limit=500"
  std::string body;
  std::string content_type;
  std::string accept = "application/json";
};

struct HttpResponse {
  int code = 0;
  std::string body;
  std::optional<int64_t> retry_after;  // seconds, from the Retry-After header
};

// A response being streamed (a watch): headers read, body bytes still on the wire.
class HttpStream {
 public:
  virtual ~HttpStream() = default;
  virtual int code() const = 0;
  virtual std::optional<int64_t> retry_after() const = 0;
  virtual bool chunked() const = 0;
  enum class ReadResult { kData, kEof, kTimeout, kError };
  // Reads what is available (at least one byte unless the result is not kData) into *out.
  virtual ReadResult Read(std::string* out, std::string* error) = 0;
  // Shuts the connection down; a Read blocked on another thread returns. Thread-safe.
  virtual void Interrupt() = 0;
};

class HttpTransport {
 public:
  // InvalidArgument for an unusable server URL, bad PEM data, a key without a certificate.
  static Result<std::unique_ptr<HttpTransport>> Open(const KubeConfig& config, Duration timeout,
                                                     std::string user_agent,
                                                     size_t max_idle_sessions);
  ~HttpTransport();

  // One attempt on a pooled keep-alive session. A failure before any response is a transport
  // ApiError (code 0).
  KubeResult<HttpResponse> RoundTrip(const HttpRequest& request, const std::string& token);
  // Sends a request on a fresh session and reads the response headers; the body stays to be
  // streamed. `receive_timeout` bounds every later read.
  KubeResult<std::unique_ptr<HttpStream>> OpenStream(const HttpRequest& request,
                                                     const std::string& token,
                                                     Duration receive_timeout);

 private:
  struct State;
  explicit HttpTransport(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace cronledger::kube::internal

namespace cronledger::kube::internal {

// Reads an opened watch response to its end, decoding events for `handler` (poco_watch.cc).
WatchResult RunWatchStream(HttpStream& stream, const WatchOptions& options,
                           const WatchHandler& handler);

}  // namespace cronledger::kube::internal
