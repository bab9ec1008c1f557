#include "store/raw_chunks.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <unordered_map>
#include <unordered_set>

#include "model/inputs.h"
#include "model/sha256.h"
#include "store/raw_codec.h"

namespace cronledger::store {
namespace {

// The gear table of the rolling hash: 256 fixed pseudo-random words (splitmix64). Changing it
// moves the cut points, which only costs deduplication against chunks already stored.
constexpr std::array<uint64_t, 256> MakeGear() {
  std::array<uint64_t, 256> gear{};
  uint64_t x = 0x6a09e667f3bcc908u;
  for (auto& g : gear) {
    x += 0x9e3779b97f4a7c15u;
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    g = z ^ (z >> 31);
  }
  return gear;
}
constexpr std::array<uint64_t, 256> kGear = MakeGear();
// A cut where the hash is below this: probability 1 / (target - min) per byte.
constexpr uint64_t kCutBelow = ~uint64_t{0} / (kChunkTargetBytes - kChunkMinBytes);
// The gear hash shifts one bit per byte: its top bit depends on the last 64 bytes only.
constexpr size_t kWindow = 64;

uint64_t Roll(uint64_t h, char byte) { return (h << 1) + kGear[static_cast<uint8_t>(byte)]; }

// The parsed chunk list of a format-3 value.
struct ChunkList {
  uint64_t length = 0;
  std::vector<std::pair<ChunkId, uint64_t>> chunks;  // id, length
};

// Parses the format-3 value at the front of `bytes`; *rest is what follows it.
Status ParseChunkList(std::string_view bytes, ChunkList* list, std::string_view* rest) {
  if (!IsChunkedRawValue(bytes)) return Status::Corruption("raw bytes: not a chunked value");
  model::RecordReader r(bytes.substr(2));
  uint64_t count = 0;
  if (!r.Varint(&list->length) || !r.Varint(&count)) {
    return Status::Corruption("raw bytes: truncated chunk list");
  }
  if (list->length > kMaxRawBytes) return Status::Corruption("raw bytes: implausible length");
  // Every chunk holds at least one byte, and its entry takes at least 17.
  if (count == 0 || count > list->length || count > r.rest().size() / (sizeof(ChunkId) + 1)) {
    return Status::Corruption("raw bytes: implausible chunk count " + std::to_string(count));
  }
  list->chunks.resize(count);
  uint64_t total = 0;
  for (auto& [id, len] : list->chunks) {
    const std::string_view at = r.rest();
    if (at.size() < id.size()) return Status::Corruption("raw bytes: truncated chunk list");
    std::memcpy(id.data(), at.data(), id.size());
    r = model::RecordReader(at.substr(id.size()));
    if (!r.Varint(&len)) return Status::Corruption("raw bytes: truncated chunk list");
    if (len == 0 || len > list->length - total) {
      return Status::Corruption("raw bytes: chunk lengths do not add up to the raw length");
    }
    total += len;
  }
  if (total != list->length) {
    return Status::Corruption("raw bytes: chunk lengths do not add up to the raw length");
  }
  *rest = r.rest();
  return Status::Ok();
}

}  // namespace

size_t ChunkIdHash::operator()(const ChunkId& id) const {
  size_t h = 0;
  std::memcpy(&h, id.data(), sizeof(h));  // the id is a cryptographic hash already
  return h;
}

ChunkId ChunkIdOf(std::string_view bytes) {
  const model::Sha256::Digest d = model::Sha256::Hash(bytes);
  ChunkId id;
  std::copy_n(d.begin(), id.size(), id.begin());
  return id;
}

std::string ChunkKey(const ChunkId& id) {
  return std::string(reinterpret_cast<const char*>(id.data()), id.size());
}

bool ParseChunkKey(std::string_view key, ChunkId* id) {
  if (key.size() != id->size()) return false;
  std::memcpy(id->data(), key.data(), id->size());
  return true;
}

std::string ChunkIdHex(const ChunkId& id) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const uint8_t b : id) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

std::vector<size_t> ChunkEnds(std::string_view bytes) {
  std::vector<size_t> ends;
  size_t start = 0;
  while (start < bytes.size()) {
    const size_t limit = std::min(bytes.size(), start + kChunkMaxBytes);
    size_t end = limit;
    if (limit - start > kChunkMinBytes) {
      // Warm the hash on the window before the first possible cut, so that every cut depends on
      // the 64 bytes before it alone, wherever the chunk started.
      uint64_t h = 0;
      for (size_t i = start + kChunkMinBytes - kWindow; i < start + kChunkMinBytes; ++i) {
        h = Roll(h, bytes[i]);
      }
      for (size_t i = start + kChunkMinBytes; i < limit; ++i) {
        h = Roll(h, bytes[i]);
        if (h < kCutBelow) {
          end = i + 1;
          break;
        }
      }
    }
    ends.push_back(end);
    start = end;
  }
  return ends;
}

bool IsChunkedRawValue(std::string_view stored) {
  return stored.size() >= 2 && static_cast<uint8_t>(stored[0]) == kRawFrameMarker &&
         static_cast<uint8_t>(stored[1]) == kRawFormatV3;
}

void PrepareRawValue(std::string_view raw, std::string* out) {
  if (raw.size() <= kChunkedRawThreshold) {
    EncodeRawValue(raw, out);
    return;
  }
  const std::vector<size_t> ends = ChunkEnds(raw);
  out->clear();
  model::RecordWriter w(out);
  w.Byte(kRawFrameMarker);
  w.Byte(kRawFormatV3);
  w.Varint(raw.size());
  w.Varint(ends.size());
  std::vector<ChunkId> ids(ends.size());
  size_t start = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    ids[i] = ChunkIdOf(raw.substr(start, ends[i] - start));
    out->append(reinterpret_cast<const char*>(ids[i].data()), ids[i].size());
    w.Varint(ends[i] - start);
    start = ends[i];
  }
  // Then each distinct chunk once: id, `chunks` value.
  std::string value;
  std::unordered_set<ChunkId, ChunkIdHash> seen;
  start = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    const std::string_view chunk = raw.substr(start, ends[i] - start);
    start = ends[i];
    if (!seen.insert(ids[i]).second) continue;
    EncodeRawValue(chunk, &value);
    out->append(reinterpret_cast<const char*>(ids[i].data()), ids[i].size());
    w.Bytes(value);
  }
}

Status SplitPreparedRawValue(std::string_view prepared, std::string_view* value,
                             std::vector<PreparedChunk>* chunks) {
  chunks->clear();
  if (!IsChunkedRawValue(prepared)) {
    *value = prepared;
    return Status::Ok();
  }
  ChunkList list;
  std::string_view rest;
  CL_RETURN_IF_ERROR(ParseChunkList(prepared, &list, &rest));
  *value = prepared.substr(0, prepared.size() - rest.size());
  while (!rest.empty()) {
    PreparedChunk c;
    if (rest.size() < c.id.size()) return Status::Corruption("prepared raw bytes: truncated");
    std::memcpy(c.id.data(), rest.data(), c.id.size());
    model::RecordReader r(rest.substr(c.id.size()));
    if (!r.Bytes(&c.value)) return Status::Corruption("prepared raw bytes: truncated");
    rest = r.rest();
    chunks->push_back(c);
  }
  return Status::Ok();
}

Status AppendChunkIds(std::string_view stored, std::vector<ChunkId>* ids) {
  if (!IsChunkedRawValue(stored)) return Status::Ok();
  ChunkList list;
  std::string_view rest;
  CL_RETURN_IF_ERROR(ParseChunkList(stored, &list, &rest));
  if (!rest.empty()) return Status::Corruption("raw bytes: trailing bytes after the chunk list");
  for (const auto& c : list.chunks) ids->push_back(c.first);
  return Status::Ok();
}

Status DecodeChunkedRawValue(std::string_view stored, const ChunkSource& chunks, std::string* out) {
  ChunkList list;
  std::string_view rest;
  CL_RETURN_IF_ERROR(ParseChunkList(stored, &list, &rest));
  if (!rest.empty()) return Status::Corruption("raw bytes: trailing bytes after the chunk list");
  // Each distinct chunk is read and checked once; a repeat copies its first occurrence.
  std::unordered_map<ChunkId, size_t, ChunkIdHash> slot;
  std::vector<ChunkId> distinct;
  for (const auto& c : list.chunks) {
    if (slot.emplace(c.first, distinct.size()).second) distinct.push_back(c.first);
  }
  std::vector<std::optional<std::string>> values;
  CL_RETURN_IF_ERROR(chunks.Read(distinct, &values));
  if (values.size() != distinct.size()) return Status::Internal("chunk source: short read");
  std::vector<size_t> first_at(distinct.size(), SIZE_MAX);
  std::vector<uint64_t> first_len(distinct.size(), 0);
  out->clear();
  out->reserve(list.length);  // no reallocation: a repeat appends from out itself
  std::string piece;
  for (const auto& entry : list.chunks) {
    const auto& [id, len] = entry;
    // Captures the pair, not its binding `id`: clang 14 cannot capture a structured binding.
    auto corrupt = [&entry](std::string_view what) {
      return Status::Corruption("raw bytes: chunk " + ChunkIdHex(entry.first) + " " +
                                std::string(what));
    };
    const size_t k = slot[id];
    if (first_at[k] != SIZE_MAX) {
      if (len != first_len[k]) return corrupt("is listed with two lengths");
      out->append(out->data() + first_at[k], len);
      continue;
    }
    if (!values[k]) return corrupt("is missing");
    const std::string_view value = *values[k];
    if (value.size() < 2 || static_cast<uint8_t>(value[0]) != kRawFrameMarker ||
        static_cast<uint8_t>(value[1]) != kRawFormatV2) {
      return corrupt("is not a format-2 frame");
    }
    const Status s = DecodeRawValue(value, nullptr, &piece);
    if (!s.ok()) return corrupt("does not decode: " + s.message());
    if (piece.size() != len || ChunkIdOf(piece) != id) {
      return corrupt("does not hold the bytes of its id");
    }
    first_at[k] = out->size();
    first_len[k] = len;
    out->append(piece);
  }
  return Status::Ok();
}

}  // namespace cronledger::store
