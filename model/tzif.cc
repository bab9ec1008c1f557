#include "model/tzif.h"

#include <array>

namespace cronledger::model {
namespace {

constexpr int64_t kAlpha = INT64_MIN;  // Go's alpha: "the beginning of time"

// A bounds-checked reader; once a read fails every later read fails (Go's dataIO.error).
class Reader {
 public:
  explicit Reader(std::string_view data) : data_(data) {}
  std::string_view Read(size_t n) {
    if (failed_ || n > data_.size()) {
      failed_ = true;
      data_ = {};
      return {};
    }
    std::string_view out = data_.substr(0, n);
    data_.remove_prefix(n);
    return out;
  }
  bool Big4(uint32_t* v) {
    std::string_view p = Read(4);
    if (p.size() != 4) return false;
    *v = 0;
    for (char c : p) *v = (*v << 8) | static_cast<uint8_t>(c);
    return true;
  }
  bool Big8(uint64_t* v) {
    std::string_view p = Read(8);
    if (p.size() != 8) return false;
    *v = 0;
    for (char c : p) *v = (*v << 8) | static_cast<uint8_t>(c);
    return true;
  }
  bool Byte(uint8_t* v) {
    std::string_view p = Read(1);
    if (p.size() != 1) return false;
    *v = static_cast<uint8_t>(p[0]);
    return true;
  }
  bool failed() const { return failed_; }
  std::string_view rest() const { return data_; }

 private:
  std::string_view data_;
  bool failed_ = false;
};

Status BadData() { return Status::Corruption("malformed time zone information"); }

enum Count { kUtcLocal = 0, kStdWall, kLeap, kTime, kZone, kChar };

bool ReadCounts(Reader* d, std::array<size_t, 6>* n) {
  for (size_t& v : *n) {
    uint32_t x = 0;
    if (!d->Big4(&x)) return false;
    v = x;
  }
  return true;
}

// Go's byteString: the abbreviation runs to the first NUL.
std::string CString(std::string_view s) { return std::string(s.substr(0, s.find('\0'))); }

}  // namespace

Result<TzifData> ParseTzif(std::string_view bytes) {
  Reader d(bytes);
  if (d.Read(4) != "TZif") return BadData();
  std::string_view header = d.Read(16);
  if (header.size() != 16) return BadData();
  int version = 0;
  switch (header[0]) {
    case '\0':
      version = 1;
      break;
    case '2':
      version = 2;
      break;
    case '3':
      version = 3;
      break;
    default:
      return BadData();
  }
  std::array<size_t, 6> n{};
  if (!ReadCounts(&d, &n)) return BadData();
  bool is64 = false;
  if (version > 1) {
    // Skip the 32-bit body and the second header, then read the 64-bit counts (they may differ).
    const size_t skip = n[kTime] * 4 + n[kTime] + n[kZone] * 6 + n[kChar] + n[kLeap] * 8 +
                        n[kStdWall] + n[kUtcLocal] + 4 + 16;
    d.Read(skip);
    is64 = true;
    if (!ReadCounts(&d, &n)) return BadData();
  }
  const size_t size = is64 ? 8 : 4;
  Reader txtimes(d.Read(n[kTime] * size));
  std::string_view txzones = d.Read(n[kTime]);
  Reader zonedata(d.Read(n[kZone] * 6));
  std::string_view abbrev = d.Read(n[kChar]);
  d.Read(n[kLeap] * (size + 4));
  d.Read(n[kStdWall]);
  d.Read(n[kUtcLocal]);
  if (d.failed()) return BadData();

  TzifData out;
  std::string_view rest = d.rest();
  if (rest.size() > 2 && rest.front() == '\n' && rest.back() == '\n') {
    out.extend = std::string(rest.substr(1, rest.size() - 2));
  }
  // Go rejects files without zones: there is nothing useful in them.
  if (n[kZone] == 0) return BadData();
  out.zones.resize(n[kZone]);
  for (TzifZone& z : out.zones) {
    uint32_t off = 0;
    uint8_t isdst = 0;
    uint8_t idx = 0;
    if (!zonedata.Big4(&off) || !zonedata.Byte(&isdst) || !zonedata.Byte(&idx)) return BadData();
    if (idx >= abbrev.size()) return BadData();
    z.offset = static_cast<int32_t>(off);
    z.is_dst = isdst != 0;
    z.abbreviation = CString(abbrev.substr(idx));
  }
  out.transitions.resize(n[kTime]);
  for (size_t i = 0; i < n[kTime]; ++i) {
    TzifTransition& tx = out.transitions[i];
    if (is64) {
      uint64_t v = 0;
      if (!txtimes.Big8(&v)) return BadData();
      tx.when = static_cast<int64_t>(v);
    } else {
      uint32_t v = 0;
      if (!txtimes.Big4(&v)) return BadData();
      tx.when = static_cast<int32_t>(v);
    }
    const auto idx = static_cast<uint8_t>(txzones[i]);
    if (idx >= out.zones.size()) return BadData();
    tx.index = idx;
  }
  // Fixed zones such as Etc/GMT+5 have no transitions: Go adds one covering all time.
  if (out.transitions.empty()) out.transitions.push_back({kAlpha, 0});
  return out;
}

}  // namespace cronledger::model
