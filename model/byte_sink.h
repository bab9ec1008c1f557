#pragma once

// ByteSink: appends to a std::string through a raw cursor into the string's own storage (grown
// ahead, cut back to what was written when the sink goes away). std::string's push_back and append
// are out-of-line calls in libstdc++ (its extern template), one per character or field; the
// canonical decision bytes and the decision record are written per field and per character of
// every embedded Json value, once per derived decision by `replay --verify`.
//
// Also the record primitives of RecordWriter (model/inputs.h) — the same bytes — and the CBOR of a
// Json value exactly as Json::to_cbor writes it.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "model/json.h"
#include "model/time.h"

namespace cronledger::model {

class ByteSink {
 public:
  explicit ByteSink(std::string* s) : s_(s) { Attach(); }
  ~ByteSink() { Detach(); }
  ByteSink(const ByteSink&) = delete;
  ByteSink& operator=(const ByteSink&) = delete;

  // Room for n more bytes at the returned cursor; Advance() to the end of what was written there.
  char* Need(size_t n) {
    if (static_cast<size_t>(end_ - p_) < n) Grow(n);
    return p_;
  }
  void Advance(char* to) { p_ = to; }
  size_t size() const { return static_cast<size_t>(p_ - s_->data()); }
  char* at(size_t pos) { return s_->data() + pos; }

  void Put(char c) {
    Need(1);
    *p_++ = c;
  }
  void Put(std::string_view v) {
    Need(v.size());
    std::memcpy(p_, v.data(), v.size());
    p_ += v.size();
  }
  // Writers that take the string itself (nlohmann's serializers): the string ends at the cursor
  // while f runs, and what f appends is kept.
  template <typename F>
  void WithString(F&& f) {
    Detach();
    f(s_);
    Attach();
  }

  // RecordWriter's encoding (model/inputs.h): LEB128 varints, zigzag for signed values,
  // length-prefixed bytes, a time as signed seconds then nanoseconds.
  void Byte(uint8_t b) { Put(static_cast<char>(b)); }
  void Varint(uint64_t v) {
    char* p = Need(10);
    while (v >= 0x80) {
      *p++ = static_cast<char>((v & 0x7f) | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<char>(v);
    p_ = p;
  }
  void Signed(int64_t v) {
    Varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  void Bytes(std::string_view s) {
    Varint(s.size());
    Put(s);
  }
  void Time(cronledger::Time t) {
    Signed(t.unix_seconds());
    Varint(static_cast<uint64_t>(t.nanos()));
  }

 private:
  void Attach() {
    const size_t pos = s_->size();
    s_->resize(pos + 512);
    p_ = s_->data() + pos;
    end_ = s_->data() + s_->size();
  }
  void Detach() { s_->resize(size()); }
  [[gnu::noinline]] void Grow(size_t n) {
    const size_t pos = size();
    s_->resize(std::max(s_->size() * 2, pos + n + 512));
    p_ = s_->data() + pos;
    end_ = s_->data() + s_->size();
  }

  std::string* s_;
  char* p_ = nullptr;
  char* end_ = nullptr;
};

// The CBOR of `j`, exactly the bytes Json::to_cbor writes (nlohmann's binary_writer): null,
// booleans, integers, strings, arrays and objects written here, doubles and binary values through
// binary_writer itself. Defined in model/decision.cc.
void AppendCbor(const Json& j, ByteSink* out);

}  // namespace cronledger::model
