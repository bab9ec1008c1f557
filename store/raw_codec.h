#pragma once

// The value format of the `raw` column family: a watch event's raw object bytes, compressed at
// record level (docs/ledger.md "Raw bytes"). Internal to store/.
//
//  - legacy (written before raw format 2): the object's JSON bytes as received, unframed. A JSON
//    text never begins with a NUL byte, which tells it apart from every framed value.
//  - format 2: kRawFrameMarker (0x00), kRawFormatV2 (2), the codec byte (RawCodec), the length of
//    the raw bytes as a LEB128 varint, then the payload (an LZ4 block, or the bytes as they are
//    when LZ4 would not make them smaller).
//  - format 3 (raw bytes over 64 KiB): content-defined chunks kept once each in the `chunks` column
//    family; the value lists them (store/raw_chunks.h).
//
// A new format gets a new version byte after the marker; DecodeRawValue keeps every old path.

#include <cstdint>
#include <string>
#include <string_view>

#include "model/status.h"

namespace cronledger::store {

class ChunkSource;  // store/raw_chunks.h

inline constexpr uint8_t kRawFrameMarker = 0;
inline constexpr uint8_t kRawFormatV2 = 2;
enum class RawCodec : uint8_t {
  kStored = 0,  // payload = the raw bytes
  kLz4 = 1,     // payload = one LZ4 block (LZ4_compress_default) of the raw bytes
};
// Raw values longer than this are refused as corrupt when decoding (a Kubernetes object is at most
// a few MiB; the limit keeps a damaged length from allocating gigabytes).
inline constexpr uint64_t kMaxRawBytes = 256u << 20;

// Encodes `raw` in format 2 into `*out` (replacing its contents; reuses its capacity): LZ4 when
// that makes it smaller, else stored. Thread-safe; allocates nothing once `out` has grown.
void EncodeRawValue(std::string_view raw, std::string* out);

// Decodes a raw column family value of any format into `*out` (replacing its contents), reading
// the chunks of a format-3 value from `chunks` (null: a format-3 value is Corruption).
// Corruption on an unknown format version or codec, a truncated frame, a length over
// kMaxRawBytes, an LZ4 block that does not decode to exactly the framed length, or a missing or
// damaged chunk (DecodeChunkedRawValue).
Status DecodeRawValue(std::string_view stored, const ChunkSource* chunks, std::string* out);
// DecodeRawValue, naming the input seq in the error ("raw bytes of seq N: ...").
Status DecodeRawValueOf(uint64_t seq, std::string_view stored, const ChunkSource* chunks,
                        std::string* out);

}  // namespace cronledger::store
