#pragma once

// The view entries' encoding as the folds write and read it, inline (store/ only): both
// FoldWatchEvent (view.cc) and FlatViewStore::Fold (flat_view_store.cc) run it for every event.
// The layout is the v1 ObjectEntry / ResourceVersionEntry encoding of view.h, byte for byte what
// model::RecordWriter writes (FoldTest.EntriesAreEncodedAsRecordWriterWritesThem).

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "model/inputs.h"
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

inline char* PutBytes(char* p, std::string_view s) {
  p = PutVarint(p, s.size());
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

// The size of the encoding of `e`.
inline size_t EntrySize(const EntryView& e) {
  size_t size = 2 + VarintLength(e.source_seq);
  for (std::string_view f : {e.api_version, e.namespace_, e.name, e.uid, e.resource_version,
                             e.owner_name, e.owner_uid}) {
    size += VarintLength(f.size()) + f.size();
  }
  return size;
}

// Appends the encoding of `e` (version, kind, the seven strings, seq), as RecordWriter writes it;
// `size` is EntrySize(e).
inline void AppendEntry(const EntryView& e, size_t size, std::string* out) {
  const size_t at = out->size();
  out->resize(at + size);
  char* p = out->data() + at;
  *p++ = static_cast<char>(kEntryV1);
  *p++ = static_cast<char>(e.kind);
  for (std::string_view f : {e.api_version, e.namespace_, e.name, e.uid, e.resource_version,
                             e.owner_name, e.owner_uid}) {
    p = PutBytes(p, f);
  }
  PutVarint(p, e.source_seq);
}

inline void AppendEntry(const EntryView& e, std::string* out) { AppendEntry(e, EntrySize(e), out); }

inline void EncodeEntryTo(const EntryView& e, std::string* out) {
  out->clear();
  AppendEntry(e, out);
}

inline void AppendResourceVersionEntry(std::string_view resource_version, uint64_t seq,
                                       std::string* out) {
  const size_t at = out->size();
  out->resize(at + 1 + VarintLength(resource_version.size()) + resource_version.size() +
              VarintLength(seq));
  char* p = out->data() + at;
  *p++ = static_cast<char>(kEntryV1);
  PutVarint(PutBytes(p, resource_version), seq);
}

// RecordReader's varint, inline: false when truncated or over 64 bits.
[[gnu::always_inline]] inline bool GetVarint(const char** p, const char* end, uint64_t* v) {
  if (*p != end && static_cast<uint8_t>(**p) < 0x80) {  // one byte: lengths, mostly
    *v = static_cast<uint8_t>(*(*p)++);
    return true;
  }
  uint64_t result = 0;
  for (int shift = 0; shift <= 63 && *p != end; shift += 7) {
    const auto byte = static_cast<uint8_t>(*(*p)++);
    if (shift == 63 && byte > 1) return false;
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      return true;
    }
  }
  return false;
}

[[gnu::always_inline]] inline bool GetBytes(const char** p, const char* end, std::string_view* s) {
  uint64_t n = 0;
  if (!GetVarint(p, end, &n) || n > static_cast<uint64_t>(end - *p)) return false;
  *s = std::string_view(*p, n);
  *p += n;
  return true;
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
  return GetBytes(&p, end, &e->api_version) && GetBytes(&p, end, &e->namespace_) &&
         GetBytes(&p, end, &e->name) && GetBytes(&p, end, &e->uid) &&
         GetBytes(&p, end, &e->resource_version) && GetBytes(&p, end, &e->owner_name) &&
         GetBytes(&p, end, &e->owner_uid) && GetVarint(&p, end, &e->source_seq) && p == end;
}

inline void ObjectKeyTo(model::ObjectKind kind, std::string_view ns, std::string_view name,
                        std::string* k) {
  k->assign(1,
            kind == model::ObjectKind::kCronJob ? view_key::kCronJobPrefix : view_key::kJobPrefix);
  Append(k, ns);
  k->append(name);
}

inline void OwnerIndexTo(std::string_view ns, std::string_view owner, std::string_view job,
                         std::string* k) {
  k->assign(1, view_key::kOwnerPrefix);
  Append(k, ns);
  Append(k, owner);
  k->append(job);
}

}  // namespace cronledger::store::view_entry
