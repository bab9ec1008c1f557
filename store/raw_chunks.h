#pragma once

// Raw format 3: the raw bytes of a large object as content-defined chunks, each stored once in the
// `chunks` column family however many versions of the object share it (docs/ledger.md "Raw
// bytes"). Internal to store/.
//
//  - the `raw` value: kRawFrameMarker (0x00), kRawFormatV3 (3), the length of the raw bytes
//    (LEB128), the chunk count (LEB128), then per chunk in order its id (16 bytes) and its length
//    (LEB128). The lengths add up to the raw length.
//  - a `chunks` value (key: the chunk id): the chunk's bytes in raw format 2 (EncodeRawValue).
//
// A chunk id is the first 16 bytes of the SHA-256 of the chunk's bytes; a reader checks every
// chunk against its id, so a damaged or substituted chunk is Corruption, never different bytes.
// Where the chunks are cut does not matter to a reader: the value lists their lengths.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/status.h"

namespace cronledger::store {

inline constexpr uint8_t kRawFormatV3 = 3;
// Raw bytes longer than this are stored chunked (format 3); shorter ones in format 2: below it a
// version's chunk list and changed chunks save little over the whole compressed object.
inline constexpr size_t kChunkedRawThreshold = size_t{64} << 10;
// Content-defined chunking: no cut before kChunkMinBytes, a forced cut at kChunkMaxBytes, and in
// between a cut wherever the rolling hash of the last 64 bytes hits, which it does on average
// every kChunkTargetBytes - kChunkMinBytes bytes. An edit changes only the chunks around it.
inline constexpr size_t kChunkMinBytes = size_t{2} << 10;
inline constexpr size_t kChunkTargetBytes = size_t{8} << 10;
inline constexpr size_t kChunkMaxBytes = size_t{64} << 10;

using ChunkId = std::array<uint8_t, 16>;
struct ChunkIdHash {
  size_t operator()(const ChunkId& id) const;
};

// The id of a chunk holding `bytes`.
ChunkId ChunkIdOf(std::string_view bytes);
// A chunk's key in the `chunks` column family (its 16 id bytes), and back.
std::string ChunkKey(const ChunkId& id);
bool ParseChunkKey(std::string_view key, ChunkId* id);
// 32 lower-case hex digits, for messages.
std::string ChunkIdHex(const ChunkId& id);

// The end offset of each content-defined chunk of `bytes`, in order (the last is bytes.size()).
std::vector<size_t> ChunkEnds(std::string_view bytes);

// True when `stored` is a format-3 value, or its prepared form (PrepareRawValue).
bool IsChunkedRawValue(std::string_view stored);

// Encodes `raw` as the commit path takes it (UnitOfWork::stored_raw), replacing *out: for raw
// bytes up to kChunkedRawThreshold the format-2 value itself; for larger ones the format-3 value
// followed by each distinct chunk's id and `chunks` value (never stored as such: AddUnit splits
// it with SplitPreparedRawValue). Thread-safe.
void PrepareRawValue(std::string_view raw, std::string* out);

struct PreparedChunk {
  ChunkId id;
  std::string_view value;  // the `chunks` value (points into the prepared bytes)
};
// Splits what PrepareRawValue wrote into the `raw` value and the chunks it refers to (none for a
// value that is not chunked). Corruption when the prepared bytes are malformed.
Status SplitPreparedRawValue(std::string_view prepared, std::string_view* value,
                             std::vector<PreparedChunk>* chunks);

// Appends the ids of the chunks a stored `raw` value refers to (nothing for other formats).
// Corruption when a format-3 value is malformed.
Status AppendChunkIds(std::string_view stored, std::vector<ChunkId>* ids);

// Where a reader finds the chunks: the `chunks` column family at the read's snapshot.
class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  // Fills (*values)[i] with the `chunks` value of ids[i], nullopt when there is none. Not OK only
  // when the read itself fails.
  virtual Status Read(const std::vector<ChunkId>& ids,
                      std::vector<std::optional<std::string>>* values) const = 0;
};

// Decodes a format-3 value (DecodeRawValue dispatches here) into *out. Corruption when the value is
// malformed, a chunk is missing, or a chunk does not decode to bytes of its listed length and id.
Status DecodeChunkedRawValue(std::string_view stored, const ChunkSource& chunks, std::string* out);

}  // namespace cronledger::store
