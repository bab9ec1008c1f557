#include "model/inputs.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "model/byte_sink.h"
#include "model/varint.h"

namespace cronledger::model {
namespace {

constexpr std::array<std::pair<WatchEventType, std::string_view>, 4> kEventTypes = {{
    {WatchEventType::kAdded, "ADDED"},
    {WatchEventType::kModified, "MODIFIED"},
    {WatchEventType::kDeleted, "DELETED"},
    {WatchEventType::kBookmark, "BOOKMARK"},
}};

Status Truncated(std::string_view what) {
  return Status::Corruption(std::string(what) + ": truncated or malformed record");
}

void EncodeWatchEvent(const WatchEvent& e, RecordWriter* w) {
  w->Byte(static_cast<uint8_t>(e.type));
  w->Byte(static_cast<uint8_t>(e.kind));
  w->Bytes(e.api_version);
  w->Bytes(e.namespace_);
  w->Bytes(e.name);
  w->Bytes(e.uid);
  w->Bytes(e.resource_version);
  w->Bytes(e.owner_name);
  w->Bytes(e.owner_uid);
  w->Bytes(e.raw);
}

// The event type and object kind that start a v1 watch event record.
Status DecodeWatchEventHeaderV1(RecordReader* r, WatchEventType* type, ObjectKind* kind) {
  uint8_t t = 0;
  uint8_t k = 0;
  if (!r->Byte(&t) || !r->Byte(&k)) return Truncated("watch event");
  if (t < 1 || t > 4) return Status::Corruption("watch event: unknown event type");
  if (k < 1 || k > 2) return Status::Corruption("watch event: unknown object kind");
  *type = static_cast<WatchEventType>(t);
  *kind = static_cast<ObjectKind>(k);
  return Status::Ok();
}

// Decodes into `e`, reusing its strings' storage (scans decode millions of records).
Status DecodeWatchEventV1Into(RecordReader* r, WatchEvent* e) {
  CL_RETURN_IF_ERROR(DecodeWatchEventHeaderV1(r, &e->type, &e->kind));
  if (!r->String(&e->api_version) || !r->String(&e->namespace_) || !r->String(&e->name) ||
      !r->String(&e->uid) || !r->String(&e->resource_version) || !r->String(&e->owner_name) ||
      !r->String(&e->owner_uid) || !r->String(&e->raw)) {
    return Truncated("watch event");
  }
  return Status::Ok();
}

Status DecodeWatchEventRefV1(RecordReader* r, WatchEventRef* e) {
  std::string_view raw;
  CL_RETURN_IF_ERROR(DecodeWatchEventHeaderV1(r, &e->type, &e->kind));
  if (!r->Bytes(&e->api_version) || !r->Bytes(&e->namespace_) || !r->Bytes(&e->name) ||
      !r->Bytes(&e->uid) || !r->Bytes(&e->resource_version) || !r->Bytes(&e->owner_name) ||
      !r->Bytes(&e->owner_uid) || !r->Bytes(&raw)) {
    return Truncated("watch event");
  }
  return Status::Ok();
}

// The record decoders below decode into `*out`, reusing its strings' storage (a log scan decodes
// every record into a holder of its type); every field is assigned.
Status DecodeTickV1Into(RecordReader* r, Tick* t) {
  if (!r->Time(&t->now) || !r->String(&t->namespace_) || !r->String(&t->name) ||
      !r->String(&t->trigger)) {
    return Truncated("tick");
  }
  return Status::Ok();
}

Status DecodeActionOutcomeV1Into(RecordReader* r, ActionOutcome* a) {
  uint8_t kind = 0;
  if (!r->Time(&a->time) || !r->Varint(&a->decision_seq) || !r->String(&a->verb) ||
      !r->Byte(&kind) || !r->String(&a->namespace_) || !r->String(&a->name) ||
      !r->String(&a->result) || !r->String(&a->payload)) {
    return Truncated("action outcome");
  }
  if (kind < 1 || kind > 2) return Status::Corruption("action outcome: unknown object kind");
  a->kind = static_cast<ObjectKind>(kind);
  return Status::Ok();
}

Status DecodeConfigChangeV1Into(RecordReader* r, ConfigChange* c) {
  if (!r->Time(&c->time) || !r->String(&c->key) || !r->String(&c->value)) {
    return Truncated("config change");
  }
  return Status::Ok();
}

void EncodeActionIntent(const ActionIntent& a, RecordWriter* w) {
  w->Time(a.time);
  w->Varint(a.tick_seq);
  w->Varint(a.call_index);
  w->Bytes(a.verb);
  w->Byte(static_cast<uint8_t>(a.kind));
  w->Bytes(a.namespace_);
  w->Bytes(a.name);
  w->Bytes(a.payload);
}

Status DecodeActionIntentV1Into(RecordReader* r, ActionIntent* a) {
  uint64_t index = 0;
  uint8_t kind = 0;
  if (!r->Time(&a->time) || !r->Varint(&a->tick_seq) || !r->Varint(&index) ||
      !r->String(&a->verb) || !r->Byte(&kind) || !r->String(&a->namespace_) ||
      !r->String(&a->name) || !r->String(&a->payload)) {
    return Truncated("action intent");
  }
  if (kind < 1 || kind > 2) return Status::Corruption("action intent: unknown object kind");
  if (index > UINT32_MAX) return Status::Corruption("action intent: call index out of range");
  a->kind = static_cast<ObjectKind>(kind);
  a->call_index = static_cast<uint32_t>(index);
  return Status::Ok();
}

void EncodePassEnd(const PassEnd& p, RecordWriter* w) {
  w->Time(p.time);
  w->Varint(p.tick_seq);
  w->Varint(p.view_seq);
  w->Bytes(p.namespace_);
  w->Bytes(p.name);
  w->Bytes(p.uid);
  w->Varint(p.calls);
  w->Bytes(p.result);
  w->Bytes(p.accounting);
}

Status DecodePassEndV1Into(RecordReader* r, PassEnd* p) {
  uint64_t calls = 0;
  if (!r->Time(&p->time) || !r->Varint(&p->tick_seq) || !r->Varint(&p->view_seq) ||
      !r->String(&p->namespace_) || !r->String(&p->name) || !r->String(&p->uid) ||
      !r->Varint(&calls) || !r->String(&p->result) || !r->String(&p->accounting)) {
    return Truncated("pass end");
  }
  if (calls > UINT32_MAX) return Status::Corruption("pass end: call count out of range");
  p->calls = static_cast<uint32_t>(calls);
  return Status::Ok();
}

// Decision flags: which optional members are present.
enum DecisionFlag : uint64_t {
  kHasScheduledTime = 1 << 0,
  kHasJobName = 1 << 1,
  kHasJobObject = 1 << 2,
  kHasEventType = 1 << 3,
  kHasMessage = 1 << 4,
  kHasRequeueAfter = 1 << 5,
  kHasStatus = 1 << 6,
  kHasTimeZone = 1 << 7,
  kHasStartingDeadline = 1 << 8,
  kSuspend = 1 << 9,
  kHasRangeEnd = 1 << 10,  // appended last, so records without it keep their v1 layout
};

// What RecordWriter::Bytes writes for Json::to_cbor's bytes (a varint length, then the CBOR),
// written in place: the CBOR (AppendCbor, the same bytes) goes after a one-byte length and is
// moved right when its length needs more bytes.
void PutJson(const Json& j, ByteSink* w) {
  const size_t at = w->size();
  w->Byte(0);
  AppendCbor(j, w);
  const size_t n = w->size() - at - 1;
  if (n < 0x80) {
    *w->at(at) = static_cast<char>(n);
    return;
  }
  char len[10];
  size_t k = 0;
  for (uint64_t v = n;; v >>= 7) {
    if (v < 0x80) {
      len[k++] = static_cast<char>(v);
      break;
    }
    len[k++] = static_cast<char>((v & 0x7f) | 0x80);
  }
  w->Need(k - 1);
  std::memmove(w->at(at + k), w->at(at + 1), n);
  std::memcpy(w->at(at), len, k);
  w->Advance(w->at(at + k + n));
}

bool GetJson(RecordReader* r, Json* out) {
  std::string_view bytes;
  if (!r->Bytes(&bytes)) return false;
  Json j = Json::from_cbor(bytes.begin(), bytes.end(), /*strict=*/true, /*allow_exceptions=*/false);
  if (j.is_discarded()) return false;
  *out = std::move(j);
  return true;
}

}  // namespace

void RecordWriter::VarintSlow(uint64_t v) {
  while (v >= 0x80) {
    out_->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_->push_back(static_cast<char>(v));
}

void RecordWriter::Time(cronledger::Time t) {
  Signed(t.unix_seconds());
  Varint(static_cast<uint64_t>(t.nanos()));
}

std::string_view WatchEventTypeName(WatchEventType t) {
  for (const auto& [type, name] : kEventTypes) {
    if (type == t) return name;
  }
  return "UNKNOWN";
}

Result<WatchEventType> ParseWatchEventType(std::string_view s) {
  for (const auto& [type, name] : kEventTypes) {
    if (name == s) return type;
  }
  return Status::InvalidArgument("unknown watch event type \"" + std::string(s) + "\"");
}

std::string_view ObjectKindName(ObjectKind k) {
  return k == ObjectKind::kCronJob ? "CronJob" : "Job";
}

ObjectKind ObjectKindOf(ApiKind k) {
  return k == ApiKind::kJob ? ObjectKind::kJob : ObjectKind::kCronJob;
}

Result<ObjectKind> ParseObjectKind(std::string_view s) {
  if (s == "CronJob") return ObjectKind::kCronJob;
  if (s == "Job") return ObjectKind::kJob;
  return Status::InvalidArgument("unknown kind \"" + std::string(s) + "\"");
}

RecordType InputRecordType(const Input& in) { return static_cast<RecordType>(in.index() + 1); }

void EncodeInput(const Input& in, std::string* out) {
  RecordWriter w(out);
  w.Byte(kInputFormatV1);
  w.Byte(static_cast<uint8_t>(InputRecordType(in)));
  std::visit(
      [&w](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, WatchEvent>) {
          EncodeWatchEvent(v, &w);
        } else if constexpr (std::is_same_v<T, Tick>) {
          w.Time(v.now);
          w.Bytes(v.namespace_);
          w.Bytes(v.name);
          w.Bytes(v.trigger);
        } else if constexpr (std::is_same_v<T, ActionOutcome>) {
          w.Time(v.time);
          w.Varint(v.decision_seq);
          w.Bytes(v.verb);
          w.Byte(static_cast<uint8_t>(v.kind));
          w.Bytes(v.namespace_);
          w.Bytes(v.name);
          w.Bytes(v.result);
          w.Bytes(v.payload);
        } else if constexpr (std::is_same_v<T, ConfigChange>) {
          w.Time(v.time);
          w.Bytes(v.key);
          w.Bytes(v.value);
        } else if constexpr (std::is_same_v<T, ActionIntent>) {
          EncodeActionIntent(v, &w);
        } else {
          static_assert(std::is_same_v<T, PassEnd>);
          EncodePassEnd(v, &w);
        }
      },
      in);
}

std::string EncodeInput(const Input& in) {
  std::string out;
  EncodeInput(in, &out);
  return out;
}

namespace {

// The format version (must be v1) and record type that start every record; `what` names the
// record in errors.
Status ReadRecordHeader(RecordReader* r, std::string_view what, uint8_t* type) {
  uint8_t version = 0;
  if (!r->Byte(&version) || !r->Byte(type)) return Truncated(what);
  if (version != kInputFormatV1) {
    return Status::Corruption(std::string(what) + ": unsupported format version " +
                              std::to_string(version));
  }
  return Status::Ok();
}

}  // namespace

Result<Input> DecodeInput(std::string_view bytes) {
  Input in;
  CL_RETURN_IF_ERROR(DecodeInputInto(bytes, &in));
  return in;
}

namespace {

// `*out` as a T: the alternative it holds when it is one (its strings keep their storage), a new
// one otherwise.
template <typename T>
T* Holder(Input* out) {
  if (auto* held = std::get_if<T>(out)) return held;
  return &out->emplace<T>();
}

}  // namespace

Status DecodeInputInto(std::string_view bytes, Input* out) {
  RecordReader r(bytes);
  uint8_t type = 0;
  CL_RETURN_IF_ERROR(ReadRecordHeader(&r, "input", &type));
  Status s;
  switch (static_cast<RecordType>(type)) {
    case RecordType::kWatchEvent:
      s = DecodeWatchEventV1Into(&r, Holder<WatchEvent>(out));
      break;
    case RecordType::kTick:
      s = DecodeTickV1Into(&r, Holder<Tick>(out));
      break;
    case RecordType::kActionOutcome:
      s = DecodeActionOutcomeV1Into(&r, Holder<ActionOutcome>(out));
      break;
    case RecordType::kConfigChange:
      s = DecodeConfigChangeV1Into(&r, Holder<ConfigChange>(out));
      break;
    case RecordType::kActionIntent:
      s = DecodeActionIntentV1Into(&r, Holder<ActionIntent>(out));
      break;
    case RecordType::kPassEnd:
      s = DecodePassEndV1Into(&r, Holder<PassEnd>(out));
      break;
    default:  // kDecision and types no version defines
      return Status::Corruption("input: unknown record type " + std::to_string(type));
  }
  CL_RETURN_IF_ERROR(s);
  if (!r.done()) return Status::Corruption("input: trailing bytes");
  return Status::Ok();
}

namespace {

// The fast path of DecodeWatchEventRef: one pass over the v1 layout with the varints and bounds
// checked inline (log scans decode millions of records; RecordReader's per-field calls cost more
// than the fields). False for anything it does not accept as a whole well-formed v1 watch event,
// which the reader-based path then decodes (or rejects with its precise error).
bool DecodeWatchEventRefFast(std::string_view bytes, WatchEventRef* out) {
  const char* p = bytes.data();
  const char* const end = p + bytes.size();
  if (bytes.size() < 4 || static_cast<uint8_t>(p[0]) != kInputFormatV1 ||
      static_cast<uint8_t>(p[1]) != static_cast<uint8_t>(RecordType::kWatchEvent)) {
    return false;
  }
  const auto t = static_cast<uint8_t>(p[2]);
  const auto k = static_cast<uint8_t>(p[3]);
  if (t < 1 || t > 4 || k < 1 || k > 2) return false;
  p += 4;
  const char* const fields = p;
  std::string_view raw;
  if (!varint::GetBytes(&p, end, &out->api_version) ||
      !varint::GetBytes(&p, end, &out->namespace_) || !varint::GetBytes(&p, end, &out->name) ||
      !varint::GetBytes(&p, end, &out->uid) || !varint::GetBytes(&p, end, &out->resource_version) ||
      !varint::GetBytes(&p, end, &out->owner_name) || !varint::GetBytes(&p, end, &out->owner_uid)) {
    return false;
  }
  const char* const fields_end = p;
  if (!varint::GetBytes(&p, end, &raw) || p != end) return false;
  out->type = static_cast<WatchEventType>(t);
  out->kind = static_cast<ObjectKind>(k);
  // One length byte per field: seven bytes besides the fields' own.
  const size_t field_bytes = out->api_version.size() + out->namespace_.size() + out->name.size() +
                             out->uid.size() + out->resource_version.size() +
                             out->owner_name.size() + out->owner_uid.size();
  out->encoded_fields = static_cast<size_t>(fields_end - fields) == 7 + field_bytes
                            ? std::string_view(fields, fields_end - fields)
                            : std::string_view();
  return true;
}

}  // namespace

Status DecodeWatchEventRef(std::string_view bytes, WatchEventRef* out) {
  if (DecodeWatchEventRefFast(bytes, out)) return Status::Ok();
  out->encoded_fields = {};
  RecordReader r(bytes);
  uint8_t type = 0;
  CL_RETURN_IF_ERROR(ReadRecordHeader(&r, "input", &type));
  if (type != static_cast<uint8_t>(RecordType::kWatchEvent)) {
    return Status::Corruption("input: record type " + std::to_string(type) +
                              " is not a watch event");
  }
  CL_RETURN_IF_ERROR(DecodeWatchEventRefV1(&r, out));
  if (!r.done()) return Status::Corruption("input: trailing bytes");
  return Status::Ok();
}

void EncodeDecisionRecord(const Decision& d, std::string* out) {
  ByteSink w(out);  // RecordWriter's bytes through a raw cursor
  w.Byte(kInputFormatV1);
  w.Byte(static_cast<uint8_t>(RecordType::kDecision));
  uint64_t flags = 0;
  if (d.scheduled_time) flags |= kHasScheduledTime;
  if (d.job_name) flags |= kHasJobName;
  if (!d.job_object.is_null()) flags |= kHasJobObject;
  if (d.event_type) flags |= kHasEventType;
  if (d.message) flags |= kHasMessage;
  if (d.requeue_after) flags |= kHasRequeueAfter;
  if (!d.status.is_null()) flags |= kHasStatus;
  if (d.policy.time_zone) flags |= kHasTimeZone;
  if (d.policy.starting_deadline_seconds) flags |= kHasStartingDeadline;
  if (d.policy.suspend) flags |= kSuspend;
  if (d.range_end) flags |= kHasRangeEnd;
  w.Varint(flags);
  w.Varint(d.seq);
  w.Time(d.time);
  w.Bytes(d.cron_job.namespace_);
  w.Bytes(d.cron_job.name);
  w.Bytes(d.cron_job.uid);
  w.Byte(static_cast<uint8_t>(d.action));
  if (d.scheduled_time) w.Time(*d.scheduled_time);
  w.Bytes(d.reason);
  if (d.job_name) w.Bytes(*d.job_name);
  if (!d.job_object.is_null()) PutJson(d.job_object, &w);
  if (d.event_type) w.Bytes(*d.event_type);
  if (d.message) w.Bytes(*d.message);
  if (d.requeue_after) w.Signed(d.requeue_after->count());
  if (!d.status.is_null()) PutJson(d.status, &w);
  w.Varint(d.cause.tick_seq);
  w.Varint(d.cause.input_seq);
  w.Bytes(d.cause.trigger);
  w.Bytes(d.policy.schedule);
  if (d.policy.time_zone) w.Bytes(*d.policy.time_zone);
  w.Bytes(d.policy.concurrency_policy);
  if (d.policy.starting_deadline_seconds) w.Signed(*d.policy.starting_deadline_seconds);
  if (d.range_end) w.Time(*d.range_end);
}

std::string EncodeDecisionRecord(const Decision& d) {
  std::string out;
  EncodeDecisionRecord(d, &out);
  return out;
}

namespace {

// A Json member as stored: its CBOR bytes (members != null), or decoded into *out.
bool GetMember(RecordReader* r, DecisionMembers* members, std::string_view DecisionMembers::*bytes,
               Json* out) {
  if (members == nullptr) return GetJson(r, out);
  return r->Bytes(&(members->*bytes));
}

// DecodeDecisionRecord, and with `members` its Json members left null and viewed as stored.
Result<Decision> DecodeDecision(std::string_view bytes, DecisionMembers* members) {
  RecordReader r(bytes);
  uint8_t type = 0;
  uint64_t flags = 0;
  uint8_t action = 0;
  Decision d;
  CL_RETURN_IF_ERROR(ReadRecordHeader(&r, "decision", &type));
  if (type != static_cast<uint8_t>(RecordType::kDecision)) {
    return Status::Corruption("decision: wrong record type " + std::to_string(type));
  }
  bool ok = r.Varint(&flags) && r.Varint(&d.seq) && r.Time(&d.time) &&
            r.String(&d.cron_job.namespace_) && r.String(&d.cron_job.name) &&
            r.String(&d.cron_job.uid) && r.Byte(&action);
  if (ok && (flags & kHasScheduledTime)) ok = r.Time(&d.scheduled_time.emplace());
  ok = ok && r.String(&d.reason);
  if (ok && (flags & kHasJobName)) ok = r.String(&d.job_name.emplace());
  if (ok && (flags & kHasJobObject)) {
    ok = GetMember(&r, members, &DecisionMembers::job_object_cbor, &d.job_object);
  }
  if (ok && (flags & kHasEventType)) ok = r.String(&d.event_type.emplace());
  if (ok && (flags & kHasMessage)) ok = r.String(&d.message.emplace());
  int64_t n = 0;
  if (ok && (flags & kHasRequeueAfter) && (ok = r.Signed(&n))) d.requeue_after = Duration(n);
  if (ok && (flags & kHasStatus)) {
    ok = GetMember(&r, members, &DecisionMembers::status_cbor, &d.status);
  }
  ok = ok && r.Varint(&d.cause.tick_seq) && r.Varint(&d.cause.input_seq) &&
       r.String(&d.cause.trigger) && r.String(&d.policy.schedule);
  if (ok && (flags & kHasTimeZone)) ok = r.String(&d.policy.time_zone.emplace());
  ok = ok && r.String(&d.policy.concurrency_policy);
  if (ok && (flags & kHasStartingDeadline) && (ok = r.Signed(&n))) {
    d.policy.starting_deadline_seconds = n;
  }
  if (ok && (flags & kHasRangeEnd)) ok = r.Time(&d.range_end.emplace());
  if (!ok) return Truncated("decision");
  if (!r.done()) return Status::Corruption("decision: trailing bytes");
  if (action > static_cast<uint8_t>(DecisionAction::kRequeue)) {
    return Status::Corruption("decision: unknown action " + std::to_string(action));
  }
  d.action = static_cast<DecisionAction>(action);
  d.policy.suspend = (flags & kSuspend) != 0;
  return d;
}

}  // namespace

Result<Decision> DecodeDecisionRecord(std::string_view bytes) {
  return DecodeDecision(bytes, nullptr);
}

Result<Decision> DecodeDecisionRecordParts(std::string_view bytes, DecisionMembers* members) {
  *members = DecisionMembers();
  return DecodeDecision(bytes, members);
}

std::string WatchEventKey(const WatchEvent& e) {
  if (e.name.empty()) return "/";
  const bool owned = e.kind == ObjectKind::kJob && !e.owner_name.empty();
  return e.namespace_ + "/" + (owned ? e.owner_name : e.name);
}

}  // namespace cronledger::model
