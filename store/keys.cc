#include "store/keys.h"

#include "model/inputs.h"

namespace cronledger::store::keys {

void PutBe64(std::string* out, uint64_t v) {
  for (int shift = 56; shift >= 0; shift -= 8) out->push_back(static_cast<char>(v >> shift));
}

std::string Be64(uint64_t v) {
  std::string out;
  PutBe64(&out, v);
  return out;
}

bool GetBe64(std::string_view in, uint64_t* v) {
  if (in.size() != 8) return false;
  uint64_t r = 0;
  for (char c : in) r = (r << 8) | static_cast<uint8_t>(c);
  *v = r;
  return true;
}

void PutTimeKey(std::string* out, Time t) {
  PutBe64(out, static_cast<uint64_t>(t.UnixNanosSaturated()) ^ (uint64_t{1} << 63));
}

std::string SourceKey(std::string_view source) { return "source/" + std::string(source); }

std::string ByCronJobPrefix(std::string_view ns, std::string_view name) {
  std::string k = "c";
  k.append(ns).push_back('\0');
  k.append(name).push_back('\0');
  return k;
}

std::string ByActionPrefix(model::DecisionAction action) {
  std::string k = "a";
  k.push_back(static_cast<char>(action));
  return k;
}

std::string ByReasonPrefix(std::string_view reason) {
  std::string k = "r";
  k.append(reason).push_back('\0');
  return k;
}

std::string ByTimePrefix() { return "t"; }

bool SeqOfIndexKey(std::string_view key, uint64_t* seq) {
  if (key.size() < 16) return false;
  return GetBe64(key.substr(key.size() - 8), seq);
}

std::string JobTemplateKey(std::string_view ns, std::string_view name, uint64_t id) {
  std::string k = "j";
  k.append(ns).push_back('\0');
  k.append(name).push_back('\0');
  PutBe64(&k, id);
  return k;
}

void EncodeLogValueTo(Time recorded_at, uint8_t flags, const model::Input& in, std::string* out) {
  out->clear();
  model::RecordWriter w(out);
  w.Byte(kLogEnvelopeV1);
  w.Time(recorded_at);
  w.Byte(flags);
  model::EncodeInput(in, out);
}

std::string EncodeLogValue(Time recorded_at, uint8_t flags, const model::Input& in) {
  std::string out;
  EncodeLogValueTo(recorded_at, flags, in, &out);
  return out;
}

Result<LogValue> DecodeLogValue(std::string_view bytes) {
  model::RecordReader r(bytes);
  LogValue v;
  uint8_t version = 0;
  if (!(r.Byte(&version) && version == kLogEnvelopeV1 && r.Time(&v.recorded_at) &&
        r.Byte(&v.flags))) {
    return Status::Corruption("input log: malformed envelope");
  }
  v.input = r.rest();
  return v;
}

bool LogValueInput(std::string_view bytes, std::string_view* input) {
  // version, recorded_at (two varints: zigzag seconds, nanos), flags.
  if (bytes.empty() || static_cast<uint8_t>(bytes[0]) != kLogEnvelopeV1) return false;
  size_t i = 1;
  for (int varint = 0; varint < 2; ++varint) {
    const size_t start = i;
    while (i < bytes.size() && (static_cast<uint8_t>(bytes[i]) & 0x80) != 0) ++i;
    if (i >= bytes.size() || i - start >= 10) return false;  // truncated or over 64 bits
    ++i;
  }
  if (i >= bytes.size()) return false;  // no flags byte
  *input = bytes.substr(i + 1);
  return true;
}

std::string EncodeQuarantine(const QuarantineEntry& q) {
  std::string out;
  model::RecordWriter w(&out);
  w.Byte(kLogEnvelopeV1);
  w.Time(q.recorded_at);
  w.Bytes(q.reason);
  w.Bytes(q.source);
  w.Bytes(q.raw);
  return out;
}

Result<QuarantineEntry> DecodeQuarantine(uint64_t id, std::string_view bytes) {
  model::RecordReader r(bytes);
  QuarantineEntry q;
  q.id = id;
  uint8_t version = 0;
  if (!(r.Byte(&version) && version == kLogEnvelopeV1 && r.Time(&q.recorded_at) &&
        r.String(&q.reason) && r.String(&q.source) && r.String(&q.raw) && r.done())) {
    return Status::Corruption("quarantine: malformed entry");
  }
  return q;
}

}  // namespace cronledger::store::keys
