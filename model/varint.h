#pragma once

// The record encoding's unsigned LEB128 varints and length-prefixed bytes (model/inputs.h's
// RecordWriter), read inline: for the hot loops that decode millions of records (the log scan's
// watch event decode, the view entries' decode), where RecordReader's per-field calls cost more
// than the fields.

#include <cstdint>
#include <string_view>

namespace cronledger::model::varint {

// Reads a varint at *p (advanced past it): false when truncated or over 64 bits.
[[gnu::always_inline]] inline bool Get(const char** p, const char* end, uint64_t* v) {
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

// Reads a varint length and that many bytes (a view into [*p, end)): false when truncated.
[[gnu::always_inline]] inline bool GetBytes(const char** p, const char* end, std::string_view* s) {
  uint64_t n = 0;
  if (!Get(p, end, &n) || n > static_cast<uint64_t>(end - *p)) return false;
  *s = std::string_view(*p, n);
  *p += n;
  return true;
}

}  // namespace cronledger::model::varint
