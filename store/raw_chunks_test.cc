// Raw format 3 (store/raw_chunks.h) on its own: content-defined cut points, round trips through an
// in-memory chunk store, frozen bytes, and every damaged value or chunk refused as Corruption.
#include "store/raw_chunks.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>

#include "store/raw_codec.h"

namespace cronledger::store {
namespace {

// The `chunks` column family in memory.
class MapChunkSource final : public ChunkSource {
 public:
  Status Read(const std::vector<ChunkId>& ids,
              std::vector<std::optional<std::string>>* values) const override {
    values->clear();
    for (const ChunkId& id : ids) {
      auto it = chunks.find(id);
      values->push_back(it == chunks.end() ? std::nullopt : std::optional(it->second));
    }
    return Status::Ok();
  }
  std::map<ChunkId, std::string> chunks;
};

// Prepares `raw` and stores what a commit would: the `raw` value, and the chunks into *source.
std::string Store(std::string_view raw, MapChunkSource* source) {
  std::string prepared;
  PrepareRawValue(raw, &prepared);
  std::string_view value;
  std::vector<PreparedChunk> chunks;
  const Status s = SplitPreparedRawValue(prepared, &value, &chunks);
  EXPECT_TRUE(s.ok()) << s.ToString();
  for (const PreparedChunk& c : chunks) source->chunks[c.id] = std::string(c.value);
  return std::string(value);
}

Status Decode(std::string_view stored, const ChunkSource& source, std::string* out) {
  return DecodeRawValue(stored, &source, out);
}

// Base64 text of random bytes: what a large opaque annotation looks like (LZ4 cannot shrink it).
std::string RandomBase64(size_t n, uint64_t seed) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::mt19937_64 rng(seed);
  std::string out(n, '\0');
  for (char& c : out) c = kAlphabet[rng() % 64];
  return out;
}

std::vector<ChunkId> IdsOf(std::string_view stored) {
  std::vector<ChunkId> ids;
  EXPECT_TRUE(AppendChunkIds(stored, &ids).ok());
  return ids;
}

std::vector<uint8_t> Bytes(std::string_view s) { return std::vector<uint8_t>(s.begin(), s.end()); }

TEST(RawChunksTest, CutPointsAreBoundedAndContentDefined) {
  const std::string text = RandomBase64(size_t{1} << 20, 1);
  const std::vector<size_t> ends = ChunkEnds(text);
  ASSERT_FALSE(ends.empty());
  EXPECT_EQ(ends.back(), text.size());
  size_t start = 0;
  for (size_t i = 0; i < ends.size(); ++i) {
    const size_t len = ends[i] - start;
    EXPECT_LE(len, kChunkMaxBytes);
    if (i + 1 < ends.size()) {
      EXPECT_GE(len, kChunkMinBytes);
    }
    start = ends[i];
  }
  // About kChunkTargetBytes on average (the expected count is 128 for 1 MiB).
  EXPECT_GT(ends.size(), 64u);
  EXPECT_LT(ends.size(), 256u);
  // Bytes inserted near the front move the later cut points by the same amount: the chunker
  // finds the same boundaries again right after the edit.
  std::string shifted = text;
  shifted.insert(5000, "inserted");
  std::set<size_t> moved;
  for (const size_t e : ChunkEnds(shifted)) moved.insert(e - (e > 5000 ? 8 : 0));
  size_t shared = 0;
  for (const size_t e : ends) shared += moved.count(e);
  EXPECT_GE(shared, ends.size() - 2);
  // Constant bytes never hit the hash: chunks of the maximum size.
  EXPECT_EQ(ChunkEnds(std::string(200000, 'x')),
            (std::vector<size_t>{65536, 131072, 196608, 200000}));
}

TEST(RawChunksTest, FormatDependsOnTheSizeAndRoundTrips) {
  std::mt19937 rng(3);
  std::string noise(300000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  const std::string base64 = RandomBase64(size_t{1} << 20, 2);
  std::string json;
  while (json.size() < 500000)
    json += R"({"f:metadata":{"f:labels":{"app":"x"}},"n":)" + std::to_string(json.size()) + "}";
  const std::vector<std::pair<std::string, bool>> cases = {
      {std::string(kChunkedRawThreshold, 'a'), false},
      {base64.substr(0, kChunkedRawThreshold), false},
      {base64.substr(0, kChunkedRawThreshold + 1), true},
      {std::string(kChunkedRawThreshold + 1, 'a'), true},
      {noise, true},
      {base64, true},
      {json, true},
  };
  for (const auto& [raw, chunked] : cases) {
    MapChunkSource source;
    const std::string stored = Store(raw, &source);
    EXPECT_EQ(IsChunkedRawValue(stored), chunked) << raw.size();
    EXPECT_EQ(source.chunks.empty(), !chunked) << raw.size();
    std::string out = "stale";
    const Status s = Decode(stored, source, &out);
    ASSERT_TRUE(s.ok()) << raw.size() << ": " << s.ToString();
    EXPECT_TRUE(out == raw) << raw.size();
    if (chunked) {
      EXPECT_LT(stored.size(), 256 * (sizeof(ChunkId) + 3));
    }
  }
}

TEST(RawChunksTest, RepeatedChunksAreStoredOnce) {
  MapChunkSource source;
  const std::string raw(size_t{1} << 20, 'a');
  const std::string stored = Store(raw, &source);
  EXPECT_EQ(IdsOf(stored).size(), 16u);
  EXPECT_EQ(source.chunks.size(), 1u);
  std::string out;
  ASSERT_TRUE(Decode(stored, source, &out).ok());
  EXPECT_TRUE(out == raw);
}

TEST(RawChunksTest, AnEditChangesOnlyTheChunksAroundIt) {
  const std::string base = RandomBase64(size_t{1} << 20, 4);
  MapChunkSource source;
  const std::vector<ChunkId> before = IdsOf(Store(base, &source));
  const size_t stored_before = source.chunks.size();
  std::string edited = base;
  edited.replace(500000, 20, "a status field edited, longer");
  const std::string stored = Store(edited, &source);
  const std::vector<ChunkId> after = IdsOf(stored);
  const std::set<ChunkId> old_ids(before.begin(), before.end());
  size_t changed = 0;
  for (const ChunkId& id : after) changed += old_ids.count(id) == 0;
  EXPECT_GE(changed, 1u);
  EXPECT_LE(changed, 2u);
  EXPECT_EQ(source.chunks.size(), stored_before + changed);
  std::string out;
  ASSERT_TRUE(Decode(stored, source, &out).ok());
  EXPECT_TRUE(out == edited);
  ASSERT_TRUE(Decode(Store(base, &source), source, &out).ok());
  EXPECT_TRUE(out == base);
}

// The bytes of a format-3 value, frozen: the chunk list of 70000 'x' bytes (one chunk of the
// maximum size and the rest), each id the first 16 bytes of the SHA-256 of the chunk.
TEST(RawChunksTest, FrozenFormat3Bytes) {
  const std::string raw(70000, 'x');
  const std::string id1 = "\x1f\x87\x45\xf0\xd2\xd1\x38\x7e\xc1\xaf\x22\x11\xa3\xcf\x41\x7b";
  const std::string id2 = "\xce\x63\xf5\x77\x71\xba\xa7\xc3\x7b\xab\x4d\xd9\x59\x95\x5f\x31";
  const std::string frozen = std::string("\x00\x03\xf0\xa2\x04\x02", 6) + id1 +
                             std::string("\x80\x80\x04", 3) + id2 + std::string("\xf0\x22", 2);
  MapChunkSource source;
  EXPECT_EQ(Bytes(Store(raw, &source)), Bytes(frozen));
  // And a reader of those bytes, with chunks any writer could have stored (format 2, stored).
  MapChunkSource handmade;
  for (const auto& [id, len] : {std::pair{id1, 65536}, std::pair{id2, 4464}}) {
    ChunkId key;
    ASSERT_TRUE(ParseChunkKey(id, &key));
    std::string value = std::string("\x00\x02\x00", 3);
    value += len == 65536 ? std::string("\x80\x80\x04", 3) : std::string("\xf0\x22", 2);
    value += std::string(static_cast<size_t>(len), 'x');
    handmade.chunks[key] = value;
  }
  std::string out;
  ASSERT_TRUE(Decode(frozen, handmade, &out).ok());
  EXPECT_TRUE(out == raw);
}

TEST(RawChunksTest, DamagedValuesAndChunksAreCorruption) {
  const std::string raw = RandomBase64(200000, 5);
  MapChunkSource good;
  const std::string stored = Store(raw, &good);
  const std::vector<ChunkId> ids = IdsOf(stored);
  ASSERT_GE(ids.size(), 3u);
  const std::string missing_hex = ChunkIdHex(ids[1]);

  struct Case {
    std::string name;
    std::string stored;
    MapChunkSource source;
    std::string message;  // a part of the error
  };
  std::vector<Case> cases;
  auto add = [&](std::string name, std::string value, std::string message) {
    cases.push_back({std::move(name), std::move(value), good, std::move(message)});
  };
  add("truncated list", stored.substr(0, stored.size() - 5), "truncated");
  add("trailing bytes", stored + "x", "trailing");
  add("no chunks", std::string("\x00\x03\x05\x00", 4), "chunk count");
  add("count over the entries", std::string("\x00\x03\x05\x09", 4) + std::string(20, 'a'),
      "chunk count");
  add("length over the limit", std::string("\x00\x03\xff\xff\xff\xff\x0f\x01", 8), "length");
  {
    std::string wrong_total = stored;
    wrong_total[2] = static_cast<char>(static_cast<uint8_t>(wrong_total[2]) ^ 1);
    add("lengths do not add up", wrong_total, "add up");
  }
  add("missing chunk", stored, missing_hex + " is missing");
  cases.back().source.chunks.erase(ids[1]);
  add("chunk of other bytes", stored, missing_hex + " does not hold the bytes of its id");
  EncodeRawValue(RandomBase64(raw.size(), 6).substr(0, 8000), &cases.back().source.chunks[ids[1]]);
  add("chunk not framed", stored, missing_hex + " is not a format-2 frame");
  cases.back().source.chunks[ids[1]] = "{\"legacy\":1}";
  add("chunk frame damaged", stored, missing_hex + " does not decode");
  {
    std::string& value = cases.back().source.chunks[ids[1]];
    value.resize(value.size() - 1);
  }
  for (Case& c : cases) {
    std::string out;
    const Status s = Decode(c.stored, c.source, &out);
    EXPECT_TRUE(s.IsCorruption()) << c.name << ": " << s.ToString();
    EXPECT_NE(s.message().find(c.message), std::string::npos) << c.name << ": " << s.ToString();
  }
  // Without a chunk source, and naming the seq.
  std::string out;
  EXPECT_TRUE(DecodeRawValue(stored, nullptr, &out).IsCorruption());
  MapChunkSource without = good;
  without.chunks.erase(ids[1]);
  const Status s = DecodeRawValueOf(42, stored, &without, &out);
  EXPECT_NE(s.message().find("raw bytes of seq 42"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find(missing_hex), std::string::npos) << s.ToString();
  // Prepared bytes cut short are refused too.
  std::string prepared;
  PrepareRawValue(raw, &prepared);
  std::string_view value;
  std::vector<PreparedChunk> chunks;
  EXPECT_TRUE(SplitPreparedRawValue(prepared.substr(0, prepared.size() - 1), &value, &chunks)
                  .IsCorruption());
}

}  // namespace
}  // namespace cronledger::store
