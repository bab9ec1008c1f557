// Watch streaming in the fixture API server, following the watch cache: from "" or "0" the current
// state first as ADDED events, then every change after the start revision, one JSON object per
// event, each flushed as its own chunk (or split into several when the test asks); bookmarks on
// request; a too-old start revision answered with an ERROR event carrying 410 Expired.

#include <Poco/Net/HTTPServerRequestImpl.h>

#include <chrono>

#include "kube/testing/fake_api_impl.h"
#include "kube/testing/fake_objects.h"
#include "kube/testing/wire_json.h"

namespace cronledger::kube::testing {
namespace {

void WriteEvent(std::ostream& out, const std::string& type, const Json& object,
                size_t chunk_bytes) {
  const std::string text = WireJson(Json{{"type", type}, {"object", object}}) + "\n";
  if (chunk_bytes == 0) {
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    return;
  }
  for (size_t at = 0; at < text.size(); at += chunk_bytes) {
    const size_t n = std::min(chunk_bytes, text.size() - at);
    out.write(text.data() + at, static_cast<std::streamsize>(n));
    out.flush();  // each flush is one chunk on the wire
  }
}

struct Outgoing {
  std::string type;
  Json object;
};

}  // namespace

void FakeApiServer::Impl::Watch(const Route& r, const Params& params,
                                Poco::Net::HTTPServerRequest& request,
                                Poco::Net::HTTPServerResponse& response, size_t log_index) {
  auto param = [&](const char* k) {
    auto it = params.find(k);
    return it == params.end() ? std::string() : it->second;
  };
  auto reply = [&](int code, const Json& body) {
    response.setStatus(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(code));
    response.setContentType("application/json");
    const std::string text = WireJson(body);
    response.setContentLength(static_cast<std::streamsize>(text.size()));
    response.send() << text;
    std::lock_guard<std::mutex> lock(mu);
    SetRequestStatusLocked(log_index, code);
  };
  auto matcher = MakeMatcher(param("labelSelector"), param("fieldSelector"));
  if (!matcher.ok()) return reply(400, BadRequest(matcher.status().message()).body);
  const bool bookmarks = param("allowWatchBookmarks") == "true";
  std::optional<std::chrono::steady_clock::time_point> deadline;
  if (!param("timeoutSeconds").empty()) {
    deadline = std::chrono::steady_clock::now() +
               std::chrono::seconds(std::stoll(param("timeoutSeconds")));
  }
  const std::string prefix = CollectionPrefix(r);
  const std::string rv = param("resourceVersion");

  std::unique_lock<std::mutex> lock(mu);
  std::vector<Outgoing> pending;
  int64_t cursor = store.revision();
  bool expired = false;
  if (rv.empty() || rv == "0") {
    auto page = store.List(prefix, 0, "", 0, matcher.value());
    for (Json& item : page->items) pending.push_back({"ADDED", std::move(item)});
  } else {
    char* end = nullptr;
    cursor = std::strtoll(rv.c_str(), &end, 10);
    if (end == rv.c_str() || *end != '\0') {
      lock.unlock();
      return reply(400, BadRequest("invalid resource version: " + rv).body);
    }
    if (cursor < store.compacted()) {
      const Json status = ExpiredStatus("too old resource version: " + rv + " (" +
                                        std::to_string(store.compacted()) + ")");
      if (options.watch_expired_as_http_error) {
        lock.unlock();
        return reply(410, status);
      }
      expired = true;
      pending.push_back({"ERROR", status});
    }
  }
  const uint64_t drop = drop_epoch, expire = expire_epoch, close = close_epoch;
  const uint64_t stall_open = stall_open_epoch;
  // Stalled for good once StallOpenWatches() was called after this watch opened.
  auto halted = [&] { return stalled || stall_open_epoch != stall_open; };
  uint64_t bookmark = bookmark_epoch;
  ++open_watches;
  changed.notify_all();
  lock.unlock();

  response.setChunkedTransferEncoding(true);
  response.setContentType("application/json");
  response.set("Cache-Control", "no-cache, private");
  std::ostream& out = response.send();
  bool dropped = false;
  try {
    for (const Outgoing& o : pending) WriteEvent(out, o.type, o.object, options.watch_chunk_bytes);
    while (!expired) {
      pending.clear();
      lock.lock();
      auto ready = [&] {
        return stopping || drop_epoch != drop || expire_epoch != expire || close_epoch != close ||
               (!halted() &&
                (store.revision() > cursor || (bookmarks && bookmark_epoch != bookmark)));
      };
      if (deadline) {
        changed.wait_until(lock, *deadline, ready);
      } else {
        changed.wait(lock, ready);
      }
      if (drop_epoch != drop) {
        dropped = true;
      } else if (stall_open_epoch != stall_open) {
        // A wedged stream: nothing more is ever written, not even the terminating chunk, and
        // the server's timeout is not seen either; only a drop or the fixture stopping ends it
        // (the client gives up on its own).
        changed.wait(lock, [&] { return stopping || drop_epoch != drop; });
        dropped = drop_epoch != drop;
        lock.unlock();
        break;
      } else {
        // Changes made before a close or an expiry are still delivered, as a real stream would
        // have sent them before it ended.
        if (!halted()) {
          auto events = store.EventsAfter(cursor);
          if (!events.ok()) {
            pending.push_back(
                {"ERROR", ExpiredStatus("too old resource version: " + std::to_string(cursor) +
                                        " (" + std::to_string(store.compacted()) + ")")});
            expired = true;
          } else {
            for (FakeStore::Event& e : *events) {
              if (e.key.compare(0, prefix.size(), prefix) == 0 && matcher.value()(e.object)) {
                pending.push_back({e.type, std::move(e.object)});
              }
            }
            cursor = store.revision();
            if (bookmarks && bookmark_epoch != bookmark) {
              bookmark = bookmark_epoch;
              pending.push_back({"BOOKMARK",
                                 {{"kind", r.type.kind},
                                  {"apiVersion", r.type.ApiVersion()},
                                  {"metadata",
                                   {{"resourceVersion", std::to_string(cursor)},
                                    {"creationTimestamp", nullptr}}}}});
            }
          }
        }
        if (!expired && expire_epoch != expire) {
          pending.push_back(
              {"ERROR", ExpiredStatus("too old resource version: " + std::to_string(cursor) + " (" +
                                      std::to_string(store.revision()) + ")")});
          expired = true;
        }
      }
      const bool end_now = dropped || expired || stopping || close_epoch != close ||
                           (deadline && std::chrono::steady_clock::now() >= *deadline);
      lock.unlock();
      if (dropped) break;
      for (const Outgoing& o : pending)
        WriteEvent(out, o.type, o.object, options.watch_chunk_bytes);
      if (end_now) break;
    }
  } catch (const std::exception&) {
    dropped = true;  // the client went away
  }
  if (dropped) {
    // Cut the connection without the terminating chunk, as a broken proxy or a crashed server
    // would; the client must notice the stream did not end properly.
    try {
      static_cast<Poco::Net::HTTPServerRequestImpl&>(request).socket().shutdown();
    } catch (const std::exception&) {
    }
  }
  lock.lock();
  --open_watches;
  SetRequestStatusLocked(log_index, 200);
  changed.notify_all();
}

}  // namespace cronledger::kube::testing
