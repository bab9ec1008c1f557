#include "store/raw_codec.h"

#include <lz4.h>

#include <limits>

#include "model/inputs.h"
#include "store/raw_chunks.h"

namespace cronledger::store {

void EncodeRawValue(std::string_view raw, std::string* out) {
  out->clear();
  model::RecordWriter w(out);
  w.Byte(kRawFrameMarker);
  w.Byte(kRawFormatV2);
  const size_t codec_at = out->size();
  w.Byte(static_cast<uint8_t>(RawCodec::kLz4));
  w.Varint(raw.size());
  const size_t header = out->size();
  // LZ4's block API takes int sizes; anything that large is simply stored.
  if (raw.size() <= static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
    const int bound = LZ4_compressBound(static_cast<int>(raw.size()));
    out->resize(header + static_cast<size_t>(bound));
    const int n =
        LZ4_compress_default(raw.data(), out->data() + header, static_cast<int>(raw.size()), bound);
    if (n > 0 && static_cast<size_t>(n) < raw.size()) {
      out->resize(header + static_cast<size_t>(n));
      return;
    }
  }
  (*out)[codec_at] = static_cast<char>(RawCodec::kStored);
  out->resize(header);
  out->append(raw);
}

Status DecodeRawValue(std::string_view stored, const ChunkSource* chunks, std::string* out) {
  if (stored.empty() || static_cast<uint8_t>(stored[0]) != kRawFrameMarker) {
    out->assign(stored);  // legacy: the JSON bytes as received
    return Status::Ok();
  }
  model::RecordReader r(stored.substr(1));
  uint8_t version = 0;
  uint8_t codec = 0;
  uint64_t len = 0;
  if (!r.Byte(&version)) return Status::Corruption("raw bytes: truncated frame");
  if (version == kRawFormatV3) {
    if (chunks == nullptr) {
      return Status::Corruption(
          "raw bytes: a chunked value (format 3), but no chunks to read it from (a ledger opened "
          "before its writer created the chunks column family: reopen it)");
    }
    return DecodeChunkedRawValue(stored, *chunks, out);
  }
  if (version != kRawFormatV2) {
    return Status::Corruption("raw bytes: unsupported format version " + std::to_string(version));
  }
  if (!r.Byte(&codec) || !r.Varint(&len)) return Status::Corruption("raw bytes: truncated frame");
  if (len > kMaxRawBytes) return Status::Corruption("raw bytes: implausible length");
  const std::string_view payload = r.rest();
  switch (static_cast<RawCodec>(codec)) {
    case RawCodec::kStored:
      if (payload.size() != len) return Status::Corruption("raw bytes: length mismatch");
      out->assign(payload);
      return Status::Ok();
    case RawCodec::kLz4: {
      if (payload.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
        return Status::Corruption("raw bytes: LZ4 block too large");
      }
      out->resize(len);
      const int n = LZ4_decompress_safe(payload.data(), out->data(),
                                        static_cast<int>(payload.size()), static_cast<int>(len));
      if (n < 0 || static_cast<uint64_t>(n) != len) {
        return Status::Corruption("raw bytes: LZ4 block does not decode to its framed length");
      }
      return Status::Ok();
    }
  }
  return Status::Corruption("raw bytes: unknown codec " + std::to_string(codec));
}

Status DecodeRawValueOf(uint64_t seq, std::string_view stored, const ChunkSource* chunks,
                        std::string* out) {
  Status s = DecodeRawValue(stored, chunks, out);
  if (!s.ok()) return s.WithContext("raw bytes of seq " + std::to_string(seq));
  return s;
}

}  // namespace cronledger::store
