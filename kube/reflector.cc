#include "kube/reflector.h"

#include <utility>

#include "kube/retry_policy.h"

namespace cronledger::kube {
namespace {

std::string KeyOf(std::string_view ns, std::string_view name) {
  std::string key(ns);
  key += '/';
  key += name;
  return key;
}

// What a refused object's event carries: its type and what the decoder could read of it.
model::WatchEvent RefusedEvent(const model::Rejection& r, model::WatchEventType type) {
  model::WatchEvent ev;
  ev.type = type;
  ev.namespace_ = r.namespace_;
  ev.name = r.name;
  ev.resource_version = r.resource_version;
  return ev;
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
  for (const model::WatchEvent& object : options_.known_objects) {
    known_[KeyOf(object.namespace_, object.name)] = object;
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
  const std::string key = KeyOf(event.event.namespace_, event.event.name);
  std::lock_guard<std::mutex> lock(mu_);
  if (event.rejection.has_value()) {
    // The cache keeps the last accepted state, as the ledger's view does; the refused version is
    // remembered so that a relist does not quarantine it again.
    if (!event.event.name.empty()) refused_[key] = event.event.resource_version;
  } else if (event.event.type == model::WatchEventType::kDeleted) {
    known_.erase(key);
    refused_.erase(key);
  } else {
    refused_.erase(key);
    known_[key] = std::move(event.event);
  }
  if (!event.checkpoint.empty()) resource_version_ = event.checkpoint;
  return Status::Ok();
}

Result<ReflectorNotice> Reflector::Relist() {
  ListOptions list_options;
  list_options.label_selector = options_.label_selector;
  list_options.field_selector = options_.field_selector;
  list_options.limit = options_.page_size;
  model::DecodedDocument list;
  KubeResult<std::string> snapshot =
      ListAllDecoded(client_, options_.type, options_.namespace_, list_options, decoder_, &list);
  ReflectorNotice notice;
  if (!snapshot.ok()) {
    notice.kind = ReflectorNotice::Kind::kListFailed;
    notice.resource_version = resource_version();
    notice.detail = snapshot.error().ToString();
    sink_.OnNotice(notice);
    return notice;
  }
  std::map<std::string, bool> listed;
  int64_t changes = 0;
  for (model::WatchEvent& item : list.events) {
    const std::string key = KeyOf(item.namespace_, item.name);
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
    if (had && previous.uid == item.uid && previous.resource_version == item.resource_version) {
      continue;
    }
    if (had && previous.uid != item.uid) {
      // Same name, new object: the old one was deleted and recreated while we were not watching.
      previous.type = model::WatchEventType::kDeleted;
      CL_RETURN_IF_ERROR(Deliver({std::move(previous), std::nullopt, true, ""}));
      had = false;
      ++changes;
    }
    item.type = had ? model::WatchEventType::kModified : model::WatchEventType::kAdded;
    CL_RETURN_IF_ERROR(Deliver({std::move(item), std::nullopt, true, ""}));
    ++changes;
  }
  for (model::Rejection& refused : list.rejections) {
    // A listed object whose version is refused still exists: it is not a deletion, and the
    // version the reflector knew stays (as in the ledger's view). A version already refused is
    // not delivered again.
    const std::string key = KeyOf(refused.namespace_, refused.name);
    if (!refused.name.empty()) {
      listed[key] = true;
      std::lock_guard<std::mutex> lock(mu_);
      auto it = refused_.find(key);
      if (it != refused_.end() && it->second == refused.resource_version) continue;
    }
    model::WatchEvent ev = RefusedEvent(refused, model::WatchEventType::kAdded);
    CL_RETURN_IF_ERROR(Deliver({std::move(ev), std::move(refused), true, ""}));
    ++changes;
  }
  std::vector<Known> vanished;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [key, known] : known_) {
      if (!listed.count(key)) vanished.push_back(known);
    }
  }
  for (Known& object : vanished) {
    object.type = model::WatchEventType::kDeleted;
    CL_RETURN_IF_ERROR(Deliver({std::move(object), std::nullopt, true, ""}));
    ++changes;
  }
  CL_RETURN_IF_ERROR(sink_.OnCheckpoint(snapshot.value()));
  {
    std::lock_guard<std::mutex> lock(mu_);
    resource_version_ = snapshot.value();
    need_list_ = false;
  }
  synced_.store(true);
  notice.kind = ReflectorNotice::Kind::kListed;
  notice.resource_version = snapshot.value();
  notice.detail = std::to_string(list.events.size() + list.rejections.size()) + " objects, " +
                  std::to_string(changes) + " changes delivered";
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
  KubeResult<WatchResult> result = client_.Watch(
      options_.type, options_.namespace_, watch, [&](model::DecodedDocument& decoded) {
        if (decoded.events.empty()) {
          model::Rejection& refused = decoded.rejections.front();
          model::WatchEvent ev = RefusedEvent(refused, *refused.event_type);
          std::string checkpoint = refused.resource_version;
          sink_error = Deliver({std::move(ev), std::move(refused), false, std::move(checkpoint)});
          return sink_error.ok();
        }
        model::WatchEvent& ev = decoded.events.front();
        if (ev.type == model::WatchEventType::kBookmark) {
          const std::string& rv = ev.resource_version;
          sink_error = sink_.OnCheckpoint(rv);
          if (!sink_error.ok()) return false;
          std::lock_guard<std::mutex> lock(mu_);
          resource_version_ = rv;
          return true;
        }
        std::string checkpoint = ev.resource_version;
        sink_error = Deliver({std::move(ev), std::nullopt, false, std::move(checkpoint)});
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
