#pragma once

// Internal to the fixture: FakeApiServer's state and verbs, shared by fake_api_server.cc (HTTP
// plumbing, routing, fault injection), fake_api_verbs.cc (REST semantics) and fake_api_watch.cc
// (watch streaming).

#include <Poco/Net/HTTPServer.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/ThreadPool.h>

#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <set>

#include "kube/testing/fake_api_server.h"
#include "kube/testing/fake_store.h"

namespace cronledger::kube::testing {

struct Reply {
  Reply() = default;
  Reply(int c, Json b, std::optional<int> ra = std::nullopt)
      : code(c), body(std::move(b)), retry_after(ra) {}
  int code = 200;
  Json body;
  std::optional<int> retry_after;
};

struct Route {
  ResourceType type;
  std::string ns;
  std::string name;
  std::string subresource;
};

using Params = std::map<std::string, std::string>;

// Label selector (=, ==, !=, exists, !exists) and field selector (metadata.name,
// metadata.namespace) matching; InvalidArgument for syntax the fixture does not support.
Result<std::function<bool(const Json&)>> MakeMatcher(const std::string& label_selector,
                                                     const std::string& field_selector);

struct FakeApiServer::Impl {
  struct Fault {
    int remaining;
    int code;
    std::optional<int> retry_after;
    std::string method;
  };

  explicit Impl(const FakeApiServerOptions& o) : options(o), store(o.first_resource_version) {}

  // --- state, guarded by mu ---
  FakeApiServerOptions options;
  mutable std::mutex mu;
  mutable std::condition_variable changed;
  FakeStore store;
  uint64_t uids = 0;
  uint64_t generated_names = 0;
  int64_t ticks = 0;
  std::set<std::string> terminating;
  std::deque<Fault> faults;
  struct Slow {
    int remaining;
    Duration delay;
    std::string method;
    std::string path;
  };
  std::deque<Slow> slow;
  struct Hold {
    std::string method;
    std::string user_agent_prefix;
  };
  std::optional<Hold> hold;       // HoldRequests() until ReleaseHeld()
  int held = 0;                   // requests waiting in it now
  uint64_t stall_open_epoch = 0;  // StallOpenWatches(): watches opened before a bump stall
  uint64_t drop_epoch = 0, expire_epoch = 0, close_epoch = 0, bookmark_epoch = 0;
  bool stalled = false;
  bool stopping = false;
  int open_watches = 0;
  std::vector<RecordedRequest> requests;
  std::map<std::string, std::map<std::string, CreateTally>> creates;  // group-resource → key
  size_t requests_dropped = 0;  // cleared entries: request indexes are absolute

  void SetRequestStatusLocked(size_t index, int code) {
    if (index >= requests_dropped && index - requests_dropped < requests.size()) {
      requests[index - requests_dropped].status = code;
    }
  }

  // --- Poco ---
  std::unique_ptr<Poco::ThreadPool> pool;
  std::unique_ptr<Poco::Net::HTTPServer> server;
  uint16_t port = 0;
  bool tls = false;

  // Verbs (fake_api_verbs.cc). Each takes the lock.
  Reply Get(const Route& r);
  Reply List(const Route& r, const Params& params);
  Reply Create(const Route& r, const std::string& body, const std::string& manager);
  Reply Update(const Route& r, const std::string& body, const std::string& manager);
  Reply Patch(const Route& r, const std::string& content_type, const std::string& body,
              const std::string& manager);
  Reply Delete(const Route& r, const std::string& body);

  // Watch (fake_api_watch.cc): streams until the client leaves or a fault/stop ends it.
  void Watch(const Route& r, const Params& params, Poco::Net::HTTPServerRequest& request,
             Poco::Net::HTTPServerResponse& response, size_t log_index);

  // Helpers, called with mu held.
  Time NowLocked();
  Reply UpdateLocked(const Route& r, Json body, const std::string& manager);
  Reply CreateLocked(const Route& r, Json body, const std::string& manager);
  Reply DeleteLocked(const Route& r, const Json& delete_options);
  void CommittedLocked();  // auto-compaction and wake-up after a write
};

// metadata[key] as a string, "" when absent.
std::string Meta(const Json& object, const char* key);
Reply BadRequest(const std::string& message);
// Parses a request body that must be a JSON object; a 400 Reply on failure, code 0 on success.
Reply ParseBody(const std::string& text, Json* out);
bool IsCustomResource(const ResourceType& type);

// "jobs.batch/ns/" style prefix for a route's collection.
std::string CollectionPrefix(const Route& r);

}  // namespace cronledger::kube::testing
