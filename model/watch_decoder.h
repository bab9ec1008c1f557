#pragma once

// Decodes Kubernetes watch documents on the hot path with simdjson (no simdjson type here):
// watch events `{"type": "ADDED|MODIFIED|DELETED|BOOKMARK|ERROR", "object": {...}}`, bare
// CronJob/Job objects, `kind: List` documents and the API server's typed lists (`CronJobList`,
// `JobList`, each item an object). Extracts what the ledger needs (kind, apiVersion, namespace,
// name, uid, resourceVersion, controller owner) and keeps the object's bytes as they came.
// Anything it cannot accept is returned as a rejection with the reason, for the quarantine
// (docs/design.md rule 5). It is the one decoder of these documents: the Kubernetes API's watch
// and list bodies, the Kafka watch topic and JSON-lines streams all go through it, once per
// document.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "model/inputs.h"

namespace cronledger::model {

// Readable bytes the decoder needs after the end of a document (simdjson's padding).
inline constexpr size_t kDecoderPadding = 64;

struct Rejection {
  std::string reason;
  // The rejected document, or the rejected item of a List (a typed list's item with the list's
  // kind and apiVersion in front, as an accepted one is kept, when its fields could be read).
  std::string raw;
  int item = -1;  // index in a List's items, -1 for the whole document
  // For a watch event whose type was read but whose object was refused: its type, and the
  // object's metadata.resourceVersion when it could be read (a watch moves past the event).
  std::optional<WatchEventType> event_type;
  std::string resource_version;
  // The refused object's metadata.namespace and metadata.name, when they could be read.
  std::string namespace_, name;

  // A whole document refused, with nothing read of it.
  static Rejection Whole(std::string reason, std::string raw) {
    Rejection r;
    r.reason = std::move(reason);
    r.raw = std::move(raw);
    return r;
  }
};

struct DecodedDocument {
  std::vector<WatchEvent> events;  // bare objects and List items are kAdded
  std::vector<Rejection> rejections;
  // A List's metadata.resourceVersion and metadata.continue (a list page's snapshot and the
  // token of the next page).
  std::string list_resource_version;
  std::string list_continue;
  // An ERROR watch event's object (a metav1.Status) as it came; the event is also a rejection.
  std::string error_status;
};

// Whether accepted events carry the object the decoder decoded to check it (WatchEvent::decoded):
// kept for a consumer that holds the view in memory (the controller's Kubernetes and Kafka
// sources), dropped at once for one that keeps only the bytes (`cronledger ingest`).
enum class DecodedObjects { kKeep, kDrop };

class WatchDecoder {
 public:
  explicit WatchDecoder(DecodedObjects decoded = DecodedObjects::kKeep);
  ~WatchDecoder();
  WatchDecoder(const WatchDecoder&) = delete;
  WatchDecoder& operator=(const WatchDecoder&) = delete;

  // Decodes `doc`; at least kDecoderPadding bytes after it must be readable (they are not
  // interpreted). Appends to `out`; never fails as a whole.
  void Decode(std::string_view doc, DecodedDocument* out);
  // Convenience for callers without padded buffers (tests): copies into a padded buffer.
  DecodedDocument DecodeCopy(std::string_view doc);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cronledger::model
