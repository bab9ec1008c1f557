#pragma once

// Decodes Kubernetes watch documents on the hot path with simdjson (no simdjson type here):
// watch events `{"type": "ADDED|MODIFIED|DELETED|BOOKMARK|ERROR", "object": {...}}`, bare
// CronJob/Job objects (list output) and `kind: List` documents (each item an object). Extracts
// what the ledger needs (kind, apiVersion, namespace, name, uid, resourceVersion, controller
// owner) and keeps the object's raw bytes. Anything it cannot accept is returned as a rejection
// with the reason, for the quarantine (docs/design.md rule 5).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "model/inputs.h"

namespace cronledger::ingest {

// Readable bytes the decoder needs after the end of a document (simdjson's padding).
inline constexpr size_t kDecoderPadding = 64;

struct Rejection {
  std::string reason;
  std::string raw;  // the rejected document, or the rejected item of a List
  int item = -1;    // index in a List's items, -1 for the whole document
};

struct DecodedDocument {
  std::vector<model::WatchEvent> events;  // bare objects and List items are kAdded
  std::vector<Rejection> rejections;
};

class WatchDecoder {
 public:
  WatchDecoder();
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

}  // namespace cronledger::ingest
