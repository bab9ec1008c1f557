#include "store/trail_store.h"

#include <cstring>

#include "store/keys.h"

namespace cronledger::store::trail {
namespace {

constexpr uint8_t kFormatV1 = 1;
constexpr uint8_t kEntryHasRawDigest = 1;
constexpr uint8_t kEntryRemovedByRetention = 2;

void PutHash(std::string* out, const Hash& h) {
  out->append(reinterpret_cast<const char*>(h.data()), h.size());
}

Hash GetHash(std::string_view in) {
  Hash h;
  std::memcpy(h.data(), in.data(), h.size());
  return h;
}

uint64_t GetU64(std::string_view in) {
  uint64_t v = 0;
  keys::GetBe64(in.substr(0, 8), &v);
  return v;
}

}  // namespace

std::string ChainPrefix(std::string_view source, std::string_view log) {
  std::string k(kKeyPrefix);
  k.append(source).push_back('\0');
  k.append(log).push_back('\0');
  return k;
}

std::string StateKey(std::string_view source, std::string_view log) {
  return ChainPrefix(source, log) + "s";
}

std::string EntryPrefix(std::string_view source, std::string_view log) {
  return ChainPrefix(source, log) + "l";
}

std::string EntryKey(std::string_view source, std::string_view log, uint64_t seq) {
  std::string k = EntryPrefix(source, log);
  keys::PutBe64(&k, seq);
  return k;
}

std::string MarkPrefix(std::string_view source, std::string_view log) {
  return ChainPrefix(source, log) + "m";
}

std::string MarkKey(std::string_view source, std::string_view log, uint64_t index) {
  std::string k = MarkPrefix(source, log);
  keys::PutBe64(&k, index);
  return k;
}

bool SeqOfKey(std::string_view key, std::string_view prefix, uint64_t* seq) {
  if (key.size() != prefix.size() + 8 || key.substr(0, prefix.size()) != prefix) return false;
  return keys::GetBe64(key.substr(prefix.size()), seq);
}

std::string EncodeState(const TrailState& s) {
  std::string out(1, static_cast<char>(kFormatV1));
  keys::PutBe64(&out, s.records);
  keys::PutBe64(&out, s.first_seq);
  keys::PutBe64(&out, s.last_seq);
  PutHash(&out, s.head);
  keys::PutBe64(&out, s.mark_every);
  return out;
}

Result<TrailState> DecodeState(std::string_view bytes) {
  if (bytes.size() != 1 + 8 * 3 + 32 + 8 || static_cast<uint8_t>(bytes[0]) != kFormatV1) {
    return Status::Corruption("trail state: malformed value");
  }
  TrailState s;
  s.records = GetU64(bytes.substr(1));
  s.first_seq = GetU64(bytes.substr(9));
  s.last_seq = GetU64(bytes.substr(17));
  s.head = GetHash(bytes.substr(25));
  s.mark_every = GetU64(bytes.substr(57));
  return s;
}

std::string EncodeEntry(const TrailEntry& e) {
  std::string out(1, static_cast<char>(kFormatV1));
  uint8_t flags = 0;
  if (e.raw_digest) flags |= kEntryHasRawDigest;
  if (e.removed_by_retention) flags |= kEntryRemovedByRetention;
  out.push_back(static_cast<char>(flags));
  PutHash(&out, e.leaf);
  if (e.raw_digest) PutHash(&out, *e.raw_digest);
  return out;
}

Result<TrailEntry> DecodeEntry(std::string_view bytes) {
  if (bytes.size() < 2 || static_cast<uint8_t>(bytes[0]) != kFormatV1) {
    return Status::Corruption("trail entry: malformed value");
  }
  const uint8_t flags = static_cast<uint8_t>(bytes[1]);
  const bool has_raw = (flags & kEntryHasRawDigest) != 0;
  if ((flags & ~(kEntryHasRawDigest | kEntryRemovedByRetention)) != 0 ||
      bytes.size() != 2 + 32 + (has_raw ? 32u : 0u)) {
    return Status::Corruption("trail entry: malformed value");
  }
  TrailEntry e;
  e.leaf = GetHash(bytes.substr(2));
  if (has_raw) e.raw_digest = GetHash(bytes.substr(34));
  e.removed_by_retention = (flags & kEntryRemovedByRetention) != 0;
  return e;
}

std::string EncodeMark(const TrailMark& m) {
  std::string out(1, static_cast<char>(kFormatV1));
  keys::PutBe64(&out, m.seq);
  PutHash(&out, m.head);
  return out;
}

Result<TrailMark> DecodeMark(std::string_view bytes) {
  if (bytes.size() != 1 + 8 + 32 || static_cast<uint8_t>(bytes[0]) != kFormatV1) {
    return Status::Corruption("trail mark: malformed value");
  }
  TrailMark m;
  m.seq = GetU64(bytes.substr(1));
  m.head = GetHash(bytes.substr(9));
  return m;
}

}  // namespace cronledger::store::trail
