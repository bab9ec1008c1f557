#include "kube/reflector.h"

#include <utility>

#include "kube/retry_policy.h"

namespace cronledger::kube {
namespace {

std::string MetaString(const Json& object, const char* key) {
  auto meta = object.find("metadata");
  if (meta == object.end() || !meta->is_object()) return "";
  auto v = meta->find(key);
  return v != meta->end() && v->is_string() ? v->get<std::string>() : "";
}

std::string KeyOf(const Json& object) {
  return MetaString(object, "namespace") + "/" + MetaString(object, "name");
}

}  // namespace

Reflector::Reflector(KubeClient& client, Sleeper& sleeper, ReflectorSink& sink,
                     ReflectorOptions options)
    : client_(client),
      sleeper_(sleeper),
      sink_(sink),
      options_(std::move(options)),
      key_(options_.type.FullyQualified() + "/" + options_.namespace_),
      resource_version_(options_.resource_version),
      need_list_(options_.resource_version.empty()) {
  for (const Json& object : options_.known_objects) {
    known_[KeyOf(object)] = {MetaString(object, "uid"), MetaString(object, "resourceVersion"),
                             object};
  }
}

std::string Reflector::resource_version() const {
  std::lock_guard<std::mutex> lock(mu_);
  return resource_version_;
}

size_t Reflector::known_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return known_.size();
}

Status Reflector::Deliver(ReflectorEvent event) {
  // Ledger first (rule 1): the cache and the resume point move only after the sink accepted it.
  CL_RETURN_IF_ERROR(sink_.OnEvent(event));
  const std::string key = KeyOf(event.object);
  std::lock_guard<std::mutex> lock(mu_);
  if (event.type == WatchEventType::kDeleted) {
    known_.erase(key);
  } else {
    known_[key] = {MetaString(event.object, "uid"), MetaString(event.object, "resourceVersion"),
                   std::move(event.object)};
  }
  if (!event.checkpoint.empty()) resource_version_ = event.checkpoint;
  return Status::Ok();
}

Result<ReflectorNotice> Reflector::Relist() {
  ListOptions list_options;
  list_options.label_selector = options_.label_selector;
  list_options.field_selector = options_.field_selector;
  list_options.limit = options_.page_size;
  KubeResult<ObjectList> list = ListAll(client_, options_.type, options_.namespace_, list_options);
  ReflectorNotice notice;
  if (!list.ok()) {
    notice.kind = ReflectorNotice::Kind::kListFailed;
    notice.resource_version = resource_version();
    notice.detail = list.error().ToString();
    sink_.OnNotice(notice);
    return notice;
  }
  std::map<std::string, bool> listed;
  int64_t changes = 0;
  for (Json& item : list->items) {
    // Built-in lists omit the type on items; events should look like watch events.
    if (!item.contains("apiVersion")) item["apiVersion"] = options_.type.ApiVersion();
    if (!item.contains("kind")) item["kind"] = options_.type.kind;
    const std::string key = KeyOf(item);
    listed[key] = true;
    Known previous;
    bool had = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (auto it = known_.find(key); it != known_.end()) {
        previous = it->second;
        had = true;
      }
    }
    if (had && previous.uid == MetaString(item, "uid") &&
        previous.resource_version == MetaString(item, "resourceVersion")) {
      continue;
    }
    if (had && previous.uid != MetaString(item, "uid")) {
      // Same name, new object: the old one was deleted and recreated while we were not watching.
      CL_RETURN_IF_ERROR(Deliver({WatchEventType::kDeleted, std::move(previous.object), true, ""}));
      had = false;
      ++changes;
    }
    CL_RETURN_IF_ERROR(Deliver(
        {had ? WatchEventType::kModified : WatchEventType::kAdded, std::move(item), true, ""}));
    ++changes;
  }
  std::vector<Json> vanished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, known] : known_) {
      if (!listed.count(key)) vanished.push_back(known.object);
    }
  }
  for (Json& object : vanished) {
    CL_RETURN_IF_ERROR(Deliver({WatchEventType::kDeleted, std::move(object), true, ""}));
    ++changes;
  }
  CL_RETURN_IF_ERROR(sink_.OnCheckpoint(list->resource_version));
  {
    std::lock_guard<std::mutex> lock(mu_);
    resource_version_ = list->resource_version;
    need_list_ = false;
  }
  synced_.store(true);
  notice.kind = ReflectorNotice::Kind::kListed;
  notice.resource_version = list->resource_version;
  notice.detail = std::to_string(list->items.size()) + " objects, " + std::to_string(changes) +
                  " changes delivered";
  sink_.OnNotice(notice);
  return notice;
}

Result<ReflectorNotice> Reflector::WatchOnce(const Cancellation& cancel) {
  WatchOptions watch;
  watch.resource_version = resource_version();
  watch.allow_bookmarks = true;
  watch.label_selector = options_.label_selector;
  watch.field_selector = options_.field_selector;
  const double stretch = 1.0 + JitterFraction(key_, static_cast<int>(++watches_));
  watch.server_timeout =
      Duration(static_cast<int64_t>(static_cast<double>(options_.watch_timeout.count()) * stretch));
  watch.stall_timeout = options_.stall_timeout;
  watch.cancel = &cancel;
  watch.on_open = [this] { synced_.store(true); };
  Status sink_error;
  KubeResult<WatchResult> result =
      client_.Watch(options_.type, options_.namespace_, watch, [&](const WatchEvent& event) {
        if (event.type == WatchEventType::kBookmark) {
          const std::string rv = MetaString(event.object, "resourceVersion");
          if (rv.empty()) return true;
          sink_error = sink_.OnCheckpoint(rv);
          if (!sink_error.ok()) return false;
          std::lock_guard<std::mutex> lock(mu_);
          resource_version_ = rv;
          return true;
        }
        sink_error =
            Deliver({event.type, event.object, false, MetaString(event.object, "resourceVersion")});
        return sink_error.ok();
      });
  CL_RETURN_IF_ERROR(sink_error);
  ReflectorNotice notice;
  if (!result.ok()) {
    const ApiError& error = result.error();
    notice.kind = ReflectorNotice::Kind::kWatchFailed;
    notice.detail = error.ToString();
    // A compacted version needs a relist; so does anything but a transient refusal.
    const bool transient =
        error.IsTransport() || error.IsTooManyRequests() || error.IsServerError();
    notice.expired = error.IsExpired();
    if (error.IsExpired() || !transient) {
      std::lock_guard<std::mutex> lock(mu_);
      need_list_ = true;
    }
  } else {
    notice.kind = ReflectorNotice::Kind::kWatchEnded;
    notice.end = result->end;
    notice.events = result->events;
    notice.expired = result->end == WatchEnd::kExpired;
    notice.detail = result->detail;
    if (result->end == WatchEnd::kExpired || result->end == WatchEnd::kError) {
      std::lock_guard<std::mutex> lock(mu_);
      need_list_ = true;
    }
  }
  notice.resource_version = resource_version();
  sink_.OnNotice(notice);
  return notice;
}

Result<ReflectorNotice> Reflector::RunOnce(const Cancellation& cancel) {
  bool list_first = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    list_first = need_list_;
  }
  if (list_first) {
    CL_ASSIGN_OR_RETURN(ReflectorNotice listed, Relist());
    if (listed.kind == ReflectorNotice::Kind::kListFailed || cancel.cancelled()) return listed;
  }
  return WatchOnce(cancel);
}

Status Reflector::Run(const Cancellation& cancel) {
  int failures = 0;
  while (!cancel.cancelled()) {
    CL_ASSIGN_OR_RETURN(ReflectorNotice notice, RunOnce(cancel));
    if (cancel.cancelled()) break;
    bool failed = false;
    switch (notice.kind) {
      case ReflectorNotice::Kind::kListed:
        break;
      case ReflectorNotice::Kind::kListFailed:
        failed = true;
        break;
      case ReflectorNotice::Kind::kWatchFailed:
        // An expired version relists at once; other refusals back off.
        failed = !notice.expired;
        break;
      case ReflectorNotice::Kind::kWatchEnded:
        // Dropped, stalled and broken streams back off before resuming. So does a clean close
        // that carried nothing at all (client-go's "very short watch"), which would otherwise
        // spin against a server that closes at once.
        failed = notice.end == WatchEnd::kDropped || notice.end == WatchEnd::kStalled ||
                 notice.end == WatchEnd::kError ||
                 (notice.end == WatchEnd::kClosed && notice.events == 0);
        break;
    }
    if (!failed) {
      failures = 0;
      continue;
    }
    ++failures;
    const Duration wait = JitteredBackoff(options_.backoff_initial, options_.backoff_max,
                                          options_.backoff_jitter, key_, failures);
    if (!sleeper_.SleepFor(wait, cancel)) break;
  }
  return Status::Ok();
}

}  // namespace cronledger::kube
