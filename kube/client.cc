#include "kube/client.h"

#include <utility>

namespace cronledger::kube {

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

namespace {

// Decodes one page's body in place (it gets the decoder's padding), appending to `out`. A body
// that is not a list is refused whole: that rejection is the error.
KubeResult<bool> DecodePage(std::string body, model::WatchDecoder& decoder,
                            model::DecodedDocument* out) {
  const size_t size = body.size();
  body.append(model::kDecoderPadding, '\0');
  const size_t rejections = out->rejections.size();
  decoder.Decode(std::string_view(body.data(), size), out);
  for (size_t i = rejections; i < out->rejections.size(); ++i) {
    if (out->rejections[i].item < 0) {
      ApiError e = TransportError("list response: " + out->rejections[i].reason);
      out->rejections.resize(rejections);
      return e;
    }
  }
  return true;
}

}  // namespace

KubeResult<std::string> ListAllDecoded(KubeClient& client, const ResourceType& type,
                                       std::string_view ns, ListOptions options,
                                       model::WatchDecoder& decoder, model::DecodedDocument* out) {
  options.continue_token.clear();
  const size_t events = out->events.size();
  const size_t rejections = out->rejections.size();
  std::string snapshot;
  bool first = true;
  while (true) {
    KubeResult<std::string> page = client.ListBytes(type, ns, options);
    if (!page.ok()) {
      if (!first && page.error().IsExpired() && options.limit > 0) {
        // The continue token outlived the compaction window: one full list instead (client-go
        // pager's fallback). Its resourceVersion is the snapshot we report.
        out->events.resize(events);
        out->rejections.resize(rejections);
        ListOptions full = options;
        full.limit = 0;
        full.continue_token.clear();
        KubeResult<std::string> whole = client.ListBytes(type, ns, full);
        if (!whole.ok()) return whole.error();
        KubeResult<bool> decoded = DecodePage(std::move(whole).value(), decoder, out);
        if (!decoded.ok()) return decoded.error();
        return out->list_resource_version;
      }
      return page.error();
    }
    KubeResult<bool> decoded = DecodePage(std::move(page).value(), decoder, out);
    if (!decoded.ok()) return decoded.error();
    if (first) snapshot = out->list_resource_version;
    first = false;
    if (out->list_continue.empty()) return snapshot;
    options.continue_token = out->list_continue;
  }
}

}  // namespace cronledger::kube
