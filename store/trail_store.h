#pragma once

// Where the audit trail (replay/trail.h) keeps its state: keys under `trail/` in the ledger's
// `meta` column family (docs/ledger.md "Audit trail"). The store owns this layout because
// retention must respect it: a record is deleted or loses its raw bytes only once the trail
// holds its leaf (and its raw bytes' digest), and the trail entry of a deleted record is marked
// as removed by retention. The hashes themselves are computed by replay/trail.cc.
//
// Keys (LOG is "inputs" or "decisions"; SOURCE the trail's source id, "local" for a store's own
// records):
//   trail/SOURCE \0 LOG \0 s             the chain state (TrailState)
//   trail/SOURCE \0 LOG \0 l be64(seq)   one record's entry (TrailEntry)
//   trail/SOURCE \0 LOG \0 m be64(index) an intermediate head (TrailMark), every mark_every records

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "model/result.h"

namespace cronledger::store::trail {

using Hash = std::array<uint8_t, 32>;

inline constexpr std::string_view kKeyPrefix = "trail/";
inline constexpr std::string_view kLocalSource = "local";
inline constexpr std::string_view kInputsLog = "inputs";
inline constexpr std::string_view kDecisionsLog = "decisions";

// "trail/" SOURCE "\0" LOG "\0": every key of one chain starts with it.
std::string ChainPrefix(std::string_view source, std::string_view log);
std::string StateKey(std::string_view source, std::string_view log);
std::string EntryKey(std::string_view source, std::string_view log, uint64_t seq);
std::string EntryPrefix(std::string_view source, std::string_view log);
std::string MarkKey(std::string_view source, std::string_view log, uint64_t index);
std::string MarkPrefix(std::string_view source, std::string_view log);
// The seq (or index) at the end of an entry (mark) key; false when it is not one.
bool SeqOfKey(std::string_view key, std::string_view prefix, uint64_t* seq);

// How far a chain has been computed.
struct TrailState {
  uint64_t records = 0;     // leaves chained so far
  uint64_t first_seq = 0;   // the seq of the first leaf (0 when none)
  uint64_t last_seq = 0;    // the seq of the last leaf (0 when none)
  Hash head{};              // the chain value after the last leaf (the genesis value when none)
  uint64_t mark_every = 0;  // an intermediate head is kept after every mark_every-th leaf
  friend bool operator==(const TrailState&, const TrailState&) = default;
};
std::string EncodeState(const TrailState& s);
Result<TrailState> DecodeState(std::string_view bytes);

// One record's leaf, and for a watch event the SHA-256 of its raw object bytes (what the leaf
// covers; kept so the leaf can be recomputed after retention prunes the raw bytes).
struct TrailEntry {
  Hash leaf{};
  std::optional<Hash> raw_digest;
  bool removed_by_retention = false;  // retention deleted the record; the leaf stands for it
  friend bool operator==(const TrailEntry&, const TrailEntry&) = default;
};
std::string EncodeEntry(const TrailEntry& e);
Result<TrailEntry> DecodeEntry(std::string_view bytes);

struct TrailMark {
  uint64_t seq = 0;  // the seq of the leaf the head is taken after
  Hash head{};
  friend bool operator==(const TrailMark&, const TrailMark&) = default;
};
std::string EncodeMark(const TrailMark& m);
Result<TrailMark> DecodeMark(std::string_view bytes);

}  // namespace cronledger::store::trail
