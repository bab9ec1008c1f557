#include "kube/client.h"

#include <utility>

namespace cronledger::kube {

std::string_view WatchEventTypeName(WatchEventType type) {
  switch (type) {
    case WatchEventType::kAdded:
      return "ADDED";
    case WatchEventType::kModified:
      return "MODIFIED";
    case WatchEventType::kDeleted:
      return "DELETED";
    case WatchEventType::kBookmark:
      return "BOOKMARK";
    case WatchEventType::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

std::string_view WatchEndName(WatchEnd end) {
  switch (end) {
    case WatchEnd::kClosed:
      return "closed";
    case WatchEnd::kExpired:
      return "expired";
    case WatchEnd::kDropped:
      return "dropped";
    case WatchEnd::kStalled:
      return "stalled";
    case WatchEnd::kCancelled:
      return "cancelled";
    case WatchEnd::kStopped:
      return "stopped";
    case WatchEnd::kError:
      return "error";
  }
  return "unknown";
}

Result<WatchEvent> DecodeWatchEvent(std::string_view text) {
  CL_ASSIGN_OR_RETURN(Json j, model::ParseJson(text));
  if (!j.is_object()) return Status::Corruption("watch event is not a JSON object");
  auto type = j.find("type");
  auto object = j.find("object");
  if (type == j.end() || !type->is_string()) return Status::Corruption("watch event has no type");
  if (object == j.end() || !object->is_object()) {
    return Status::Corruption("watch event has no object");
  }
  const std::string& t = type->get_ref<const std::string&>();
  WatchEvent event;
  if (t == "ADDED") {
    event.type = WatchEventType::kAdded;
  } else if (t == "MODIFIED") {
    event.type = WatchEventType::kModified;
  } else if (t == "DELETED") {
    event.type = WatchEventType::kDeleted;
  } else if (t == "BOOKMARK") {
    event.type = WatchEventType::kBookmark;
  } else if (t == "ERROR") {
    event.type = WatchEventType::kError;
  } else {
    return Status::Corruption("unknown watch event type \"" + t + "\"");
  }
  event.object = std::move(*object);
  return event;
}

KubeResult<ObjectList> ListAll(KubeClient& client, const ResourceType& type, std::string_view ns,
                               ListOptions options) {
  options.continue_token.clear();
  ObjectList all;
  bool first = true;
  while (true) {
    KubeResult<ObjectList> page = client.List(type, ns, options);
    if (!page.ok()) {
      if (!first && page.error().IsExpired() && options.limit > 0) {
        // The continue token outlived the compaction window: one full list instead (client-go
        // pager's fallback). Its resourceVersion is the snapshot we report.
        ListOptions full = options;
        full.limit = 0;
        full.continue_token.clear();
        return client.List(type, ns, full);
      }
      return page;
    }
    if (first) all.resource_version = page->resource_version;
    first = false;
    for (Json& item : page->items) all.items.push_back(std::move(item));
    if (page->continue_token.empty()) return all;
    options.continue_token = page->continue_token;
  }
}

}  // namespace cronledger::kube
