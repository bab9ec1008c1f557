// The watch stream loop: bytes → chunked decoding → JSON values → events decoded once
// (model::WatchDecoder), and the verdict on how the stream ended (client-go's StreamWatcher plus
// the reflector's view of why it stopped).

#include <utility>
#include <vector>

#include "kube/poco_transport.h"
#include "kube/watch_stream.h"

namespace cronledger::kube::internal {
namespace {

// Removes the interrupt hook before the stream can be destroyed.
class InterruptGuard {
 public:
  InterruptGuard(const Cancellation* cancel, HttpStream& stream) : cancel_(cancel) {
    if (cancel_ != nullptr) {
      id_ = cancel_->AddInterrupt([&stream] { stream.Interrupt(); });
    }
  }
  ~InterruptGuard() {
    if (cancel_ != nullptr && id_ >= 0) cancel_->RemoveInterrupt(id_);
  }
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  const Cancellation* cancel_;
  int id_ = -1;
};

WatchResult End(WatchEnd end, int64_t events, std::string detail) {
  WatchResult r;
  r.end = end;
  r.events = events;
  r.detail = std::move(detail);
  return r;
}

}  // namespace

WatchResult RunWatchStream(HttpStream& stream, const WatchOptions& options,
                           const WatchHandler& handler) {
  InterruptGuard guard(options.cancel, stream);
  ChunkedDecoder chunks;
  JsonStreamSplitter splitter;
  int64_t events = 0;
  std::vector<std::string> values;
  model::WatchDecoder decoder;
  model::DecodedDocument decoded;
  while (true) {
    std::string raw;
    std::string error;
    const HttpStream::ReadResult rr = stream.Read(&raw, &error);
    if (options.cancel != nullptr && options.cancel->cancelled()) {
      return End(WatchEnd::kCancelled, events, "cancelled");
    }
    switch (rr) {
      case HttpStream::ReadResult::kTimeout:
        return End(WatchEnd::kStalled, events, "no bytes within the stall timeout");
      case HttpStream::ReadResult::kError:
        return End(WatchEnd::kDropped, events, "connection failed: " + error);
      case HttpStream::ReadResult::kEof:
        if (stream.chunked() && !chunks.finished()) {
          return End(WatchEnd::kDropped, events, "connection closed before the last chunk");
        }
        if (splitter.mid_value()) {
          return End(WatchEnd::kDropped, events, "connection closed inside an event");
        }
        return End(WatchEnd::kClosed, events, "server closed the stream");
      case HttpStream::ReadResult::kData:
        break;
    }
    std::string payload;
    if (stream.chunked()) {
      if (Status s = chunks.Feed(raw, &payload); !s.ok()) {
        return End(WatchEnd::kError, events, s.ToString());
      }
    } else {
      payload = std::move(raw);
    }
    values.clear();
    if (Status s = splitter.Feed(payload, &values); !s.ok()) {
      return End(WatchEnd::kError, events, s.ToString());
    }
    for (std::string& text : values) {
      const size_t size = text.size();
      text.append(model::kDecoderPadding, '\0');
      decoded.events.clear();
      decoded.rejections.clear();
      decoded.error_status.clear();
      decoder.Decode(std::string_view(text.data(), size), &decoded);
      if (!decoded.error_status.empty()) {
        Result<Json> status = model::ParseJson(decoded.error_status);
        ApiError api = status.ok() ? ApiErrorFromStatus(*status)
                                   : TransportError("ERROR event: " + status.status().message());
        WatchResult r = End(api.IsExpired() ? WatchEnd::kExpired : WatchEnd::kError, events,
                            "ERROR event: " + api.ToString());
        r.error = std::move(api);
        return r;
      }
      // Bytes that are not a watch event at all end the stream; an event whose object is
      // refused goes to the handler, which quarantines it.
      if (decoded.events.size() != 1 &&
          (decoded.rejections.size() != 1 || !decoded.rejections[0].event_type.has_value())) {
        const std::string why = decoded.rejections.empty() ? std::string("not a watch event")
                                                           : decoded.rejections[0].reason;
        return End(WatchEnd::kError, events, "undecodable watch event: " + why);
      }
      ++events;
      if (!handler(decoded)) return End(WatchEnd::kStopped, events, "stopped by the handler");
    }
    if (chunks.finished()) {
      if (splitter.mid_value()) {
        return End(WatchEnd::kError, events, "stream ended inside an event");
      }
      return End(WatchEnd::kClosed, events, "server closed the stream");
    }
  }
}

}  // namespace cronledger::kube::internal
