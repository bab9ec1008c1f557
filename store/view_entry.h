#pragma once

// The view entries' encoding as the fold writes and reads it, inline (store/ only): the fold
// (view_fold.h) runs it for every event, over either storage.
// The layout is the v1 ObjectEntry / ResourceVersionEntry encoding of view.h, byte for byte what
// model::RecordWriter writes (FoldTest.EntriesAreEncodedAsRecordWriterWritesThem).

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "model/inputs.h"
#include "model/varint.h"
#include "store/view.h"

namespace cronledger::store::view_entry {

inline constexpr uint8_t kEntryV1 = 1;

inline void Append(std::string* out, std::string_view a) {
  out->append(a);
  out->push_back('\0');
}

// The fields of an ObjectEntry as views (the fold's scratch form; same encoding).
struct EntryView {
  model::ObjectKind kind = model::ObjectKind::kCronJob;
  std::string_view api_version, namespace_, name, uid, resource_version, owner_name, owner_uid;
  uint64_t source_seq = 0;
};

// RecordWriter's varint (LEB128), written into a buffer sized beforehand: the fold's encoder
// sizes an entry once and writes it without a capacity check per byte.
inline size_t VarintLength(uint64_t v) {
  size_t n = 1;
  for (; v >= 0x80; v >>= 7) ++n;
  return n;
}

inline char* PutVarint(char* p, uint64_t v) {
  for (; v >= 0x80; v >>= 7) *p++ = static_cast<char>((v & 0x7f) | 0x80);
  *p++ = static_cast<char>(v);
  return p;
}

// Copies `s` to `p`, inline for the short strings of keys and entries (names, uids, versions):
// fixed-size moves that overlap instead of a call to memcpy per field.
[[gnu::always_inline]] inline char* PutRaw(char* p, std::string_view s) {
  const size_t n = s.size();
  const char* from = s.data();
  if (n >= 8 && n <= 16) {
    char a[8], b[8];
    std::memcpy(a, from, 8);
    std::memcpy(b, from + n - 8, 8);
    std::memcpy(p, a, 8);
    std::memcpy(p + n - 8, b, 8);
  } else if (n > 16 && n <= 32) {
    char a[16], b[16];
    std::memcpy(a, from, 16);
    std::memcpy(b, from + n - 16, 16);
    std::memcpy(p, a, 16);
    std::memcpy(p + n - 16, b, 16);
  } else if (n >= 4 && n < 8) {
    char a[4], b[4];
    std::memcpy(a, from, 4);
    std::memcpy(b, from + n - 4, 4);
    std::memcpy(p, a, 4);
    std::memcpy(p + n - 4, b, 4);
  } else if (n > 0 && n < 4) {
    p[0] = from[0];
    p[n / 2] = from[n / 2];
    p[n - 1] = from[n - 1];
  } else if (n > 32) {
    std::memcpy(p, from, n);
  }
  return p + n;
}

[[gnu::always_inline]] inline char* PutBytes(char* p, std::string_view s) {
  return PutRaw(PutVarint(p, s.size()), s);
}

// Calls f on the seven strings of `e` in their encoded order while it returns true. (Not a loop
// over an initializer_list: that copies the views to the stack and reloads them, a store-forwarding
// stall per field on the fold's path.)
template <typename F>
[[gnu::always_inline]] inline bool ForEachString(const EntryView& e, F&& f) {
  return f(e.api_version) && f(e.namespace_) && f(e.name) && f(e.uid) && f(e.resource_version) &&
         f(e.owner_name) && f(e.owner_uid);
}

// The size of the encoding of `e`.
inline size_t EntrySize(const EntryView& e) {
  size_t size = 2 + VarintLength(e.source_seq);
  ForEachString(e, [&size](std::string_view f) {
    size += VarintLength(f.size()) + f.size();
    return true;
  });
  return size;
}

// Writes the encoding of `e` at `p`, which has EntrySize(e) bytes of room.
inline void WriteEntry(const EntryView& e, char* p) {
  *p++ = static_cast<char>(kEntryV1);
  *p++ = static_cast<char>(e.kind);
  ForEachString(e, [&p](std::string_view f) {
    p = PutBytes(p, f);
    return true;
  });
  PutVarint(p, e.source_seq);
}

// True when `encoded` (a WatchEventRef's encoded_fields) is exactly the encoding of the seven
// strings of `e` as an entry holds them: each a one-byte length and its bytes, which `e` views
// there (an empty string may view anything). The entry's middle is then `encoded` as it is.
inline bool IsEncodingOf(std::string_view encoded, const EntryView& e) {
  const char* p = encoded.data();
  const char* const end = p + encoded.size();
  return ForEachString(e,
                       [&p, end](std::string_view f) {
                         if (p == end || f.size() >= 0x80 || static_cast<uint8_t>(*p) != f.size()) {
                           return false;
                         }
                         ++p;
                         if (f.empty()) return true;
                         if (f.data() != p || f.size() > static_cast<size_t>(end - p)) {
                           return false;
                         }
                         p += f.size();
                         return true;
                       }) &&
         p == end;
}

// The size of the entry of `e` whose fields are `encoded` (IsEncodingOf), and its writer.
inline size_t EntrySizeFrom(std::string_view encoded, uint64_t seq) {
  return 2 + encoded.size() + VarintLength(seq);
}
inline void WriteEntryFrom(model::ObjectKind kind, std::string_view encoded, uint64_t seq,
                           char* p) {
  *p++ = static_cast<char>(kEntryV1);
  *p++ = static_cast<char>(kind);
  std::memcpy(p, encoded.data(), encoded.size());
  PutVarint(p + encoded.size(), seq);
}

inline size_t ResourceVersionEntrySize(std::string_view resource_version, uint64_t seq) {
  return 1 + VarintLength(resource_version.size()) + resource_version.size() + VarintLength(seq);
}

// Writes the encoding of a ResourceVersionEntry at `p`, which has ResourceVersionEntrySize bytes.
inline void WriteResourceVersionEntry(std::string_view resource_version, uint64_t seq, char* p) {
  *p++ = static_cast<char>(kEntryV1);
  PutVarint(PutBytes(p, resource_version), seq);
}

// Appends the encoding of `e` (version, kind, the seven strings, seq), as RecordWriter writes it;
// `size` is EntrySize(e).
inline void AppendEntry(const EntryView& e, size_t size, std::string* out) {
  const size_t at = out->size();
  out->resize(at + size);
  WriteEntry(e, out->data() + at);
}

inline void AppendEntry(const EntryView& e, std::string* out) { AppendEntry(e, EntrySize(e), out); }

inline void EncodeEntryTo(const EntryView& e, std::string* out) {
  out->clear();
  AppendEntry(e, out);
}

inline void AppendResourceVersionEntry(std::string_view resource_version, uint64_t seq,
                                       std::string* out) {
  const size_t at = out->size();
  out->resize(at + ResourceVersionEntrySize(resource_version, seq));
  WriteResourceVersionEntry(resource_version, seq, out->data() + at);
}

// Decodes an entry without copying (its fields view `bytes`); false when malformed, as
// RecordReader would find it.
inline bool DecodeEntryView(std::string_view bytes, EntryView* e) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  if (bytes.size() < 2 || static_cast<uint8_t>(p[0]) != kEntryV1) return false;
  const auto kind = static_cast<uint8_t>(p[1]);
  if (kind < 1 || kind > 2) return false;
  e->kind = static_cast<model::ObjectKind>(kind);
  p += 2;
  return model::varint::GetBytes(&p, end, &e->api_version) &&
         model::varint::GetBytes(&p, end, &e->namespace_) &&
         model::varint::GetBytes(&p, end, &e->name) && model::varint::GetBytes(&p, end, &e->uid) &&
         model::varint::GetBytes(&p, end, &e->resource_version) &&
         model::varint::GetBytes(&p, end, &e->owner_name) &&
         model::varint::GetBytes(&p, end, &e->owner_uid) &&
         model::varint::Get(&p, end, &e->source_seq) && p == end;
}

// DecodeEntryView's check of a whole entry, keeping only what the fold compares: the uid and the
// controller owner's name. False when malformed, as DecodeEntryView finds it.
inline bool DecodeEntryUidAndOwner(std::string_view bytes, std::string_view* uid,
                                   std::string_view* owner_name) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  if (bytes.size() < 2 || static_cast<uint8_t>(p[0]) != kEntryV1) return false;
  const auto kind = static_cast<uint8_t>(p[1]);
  if (kind < 1 || kind > 2) return false;
  p += 2;
  std::string_view skip;
  uint64_t seq = 0;
  return model::varint::GetBytes(&p, end, &skip) && model::varint::GetBytes(&p, end, &skip) &&
         model::varint::GetBytes(&p, end, &skip) && model::varint::GetBytes(&p, end, uid) &&
         model::varint::GetBytes(&p, end, &skip) && model::varint::GetBytes(&p, end, owner_name) &&
         model::varint::GetBytes(&p, end, &skip) && model::varint::Get(&p, end, &seq) && p == end;
}

// The keys are written into a buffer sized once (the fold builds one or two for every event).
inline void ObjectKeyTo(model::ObjectKind kind, std::string_view ns, std::string_view name,
                        std::string* k) {
  k->resize(2 + ns.size() + name.size());
  char* p = k->data();
  *p++ = kind == model::ObjectKind::kCronJob ? view_key::kCronJobPrefix : view_key::kJobPrefix;
  p = PutRaw(p, ns);
  *p++ = '\0';
  PutRaw(p, name);
}

inline void OwnerIndexTo(std::string_view ns, std::string_view owner, std::string_view job,
                         std::string* k) {
  k->resize(3 + ns.size() + owner.size() + job.size());
  char* p = k->data();
  *p++ = view_key::kOwnerPrefix;
  p = PutRaw(p, ns);
  *p++ = '\0';
  p = PutRaw(p, owner);
  *p++ = '\0';
  PutRaw(p, job);
}

}  // namespace cronledger::store::view_entry
