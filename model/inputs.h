#pragma once

// The inputs of the ledger (docs/design.md §1 rule 1) and the compact, versioned binary encoding of
// every log record: watch events, ticks, action outcomes, config changes (the input log) and
// decisions (the decision log).
//
// Encoding: byte 0 is the format version (kInputFormatV1), byte 1 the record type, then the
// fields as LEB128 varints (zigzag for signed), length-prefixed byte strings, and times as
// zigzag(seconds) + varint(nanos). A decoder accepts every version it has ever written; a new
// version gets a new number and the old decode path stays (the v1 fixture test pins it).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "model/api_call.h"
#include "model/decision.h"
#include "model/result.h"
#include "model/time.h"

namespace cronledger::model {

struct CronJob;  // model/objects.h
struct Job;

inline constexpr uint8_t kInputFormatV1 = 1;

enum class WatchEventType : uint8_t {
  kAdded = 1,
  kModified = 2,
  kDeleted = 3,
  kBookmark = 4,
};
std::string_view WatchEventTypeName(WatchEventType t);  // "ADDED", ...
Result<WatchEventType> ParseWatchEventType(std::string_view s);

enum class ObjectKind : uint8_t {
  kCronJob = 1,
  kJob = 2,
};
std::string_view ObjectKindName(ObjectKind k);  // "CronJob" | "Job"
Result<ObjectKind> ParseObjectKind(std::string_view s);
// The kind of object an API call is made on.
ObjectKind ObjectKindOf(ApiKind k);

// A Kubernetes watch event, normalized: the identity the view needs plus the raw object bytes as
// received (the JSON of `object`). Bare objects from list output are recorded as kAdded.
struct WatchEvent {
  WatchEventType type = WatchEventType::kAdded;
  ObjectKind kind = ObjectKind::kCronJob;
  std::string api_version;
  std::string namespace_;
  std::string name;  // empty for bookmarks
  std::string uid;   // empty for bookmarks
  std::string resource_version;
  std::string owner_name;  // the controller owner reference (Jobs), empty when none
  std::string owner_uid;
  std::string raw;  // the object's JSON bytes; the store keeps them apart, compressed
  // The object decoded into the typed fields a pass reads (model/job_fields.h) by the decoder that
  // made the event (model::WatchDecoder, which decodes every ADDED and MODIFIED object it accepts
  // to check it): the view in memory keeps it instead of decoding the bytes again. At most one is
  // set, the one of `kind`; both are null when no decoder read the object or its consumer keeps
  // only the bytes. A function of `raw`: not recorded, and equal in every event.
  struct Decoded {
    std::shared_ptr<const CronJob> cron_job;
    std::shared_ptr<const Job> job;
    friend bool operator==(const Decoded&, const Decoded&) { return true; }
  };
  Decoded decoded = {};
  friend bool operator==(const WatchEvent&, const WatchEvent&) = default;
};

// The partitioning key of a watch event (docs/design.md §5): a CronJob by `namespace/name`, a Job
// by `namespace/<controller owner name>` (so a CronJob and its Jobs share a partition), an orphan
// Job by its own name, and a bookmark (no name) by "/". The watch relay produces by it and the
// Kafka source reads by it.
std::string WatchEventKey(const WatchEvent& e);

// A watch event's normalized fields as views (no copies): what log scans and the fold of the view
// read. Valid as long as the bytes or the WatchEvent it views. It has no raw bytes (the log keeps
// them apart from the record).
struct WatchEventRef {
  WatchEventType type = WatchEventType::kAdded;
  ObjectKind kind = ObjectKind::kCronJob;
  std::string_view api_version;
  std::string_view namespace_;
  std::string_view name;
  std::string_view uid;
  std::string_view resource_version;
  std::string_view owner_name;
  std::string_view owner_uid;
  // Set by DecodeWatchEventRef when the record holds the seven fields above (api_version ..
  // owner_uid) each as one length byte and its bytes, back to back: those bytes, which the fields
  // view. The view entries encode the same fields the same way, so the fold can copy them whole
  // (it checks the span against the fields before it does). Empty otherwise (and from Of()).
  std::string_view encoded_fields;
  static WatchEventRef Of(const WatchEvent& e) {
    return {e.type,      e.kind, e.api_version,      e.namespace_,
            e.name,      e.uid,  e.resource_version, e.owner_name,
            e.owner_uid, {}};
  }
};

// One reconcile pass of one CronJob: the `now` it ran at and why it ran.
struct Tick {
  Time now;
  std::string namespace_;
  std::string name;
  std::string trigger;  // "timer", "cronjob-update", "job-delete", "retry", ...
  friend bool operator==(const Tick&, const Tick&) = default;
};

// The result of an action the actuator performed for a committed decision.
struct ActionOutcome {
  Time time;
  // The record that decided the action. For the controller's reconcile passes this is the input
  // seq of the ActionIntent the outcome answers (docs/controller.md).
  uint64_t decision_seq = 0;
  std::string verb;  // "create" | "delete" | "updateStatus" | "get" | "event"
  ObjectKind kind = ObjectKind::kJob;
  std::string namespace_;
  std::string name;
  std::string result;   // "OK" or a Kubernetes status reason: "AlreadyExists", "NotFound", ...
  std::string payload;  // JSON text (the object the API returned, or the error status); may be ""
  friend bool operator==(const ActionOutcome&, const ActionOutcome&) = default;
};

// A decision-relevant configuration value taking effect (e.g. "historyCleanup" = "false").
struct ConfigChange {
  Time time;
  std::string key;
  std::string value;
  friend bool operator==(const ConfigChange&, const ConfigChange&) = default;
};

// An API call a reconcile pass is about to perform (docs/design.md rule 3: decide, record, then
// act). Committed before the call is made; the ActionOutcome whose decision_seq is this record's
// seq follows once the call returned. An intent without an outcome is a call whose fate is unknown
// (the process stopped in between); docs/controller.md describes how recovery treats it.
struct ActionIntent {
  Time time;                // the pass's tick `now`
  uint64_t tick_seq = 0;    // the Tick of the pass
  uint32_t call_index = 0;  // position among the pass's API calls, from 0
  std::string verb;         // "get" | "create" | "delete" | "updateStatus"
  ObjectKind kind = ObjectKind::kJob;
  std::string namespace_;
  std::string name;
  std::string payload;  // the call as canonical JSON (model::EncodeApiCall)
  friend bool operator==(const ActionIntent&, const ActionIntent&) = default;
};

// The end of a reconcile pass, committed in one unit with the pass's decisions and state. A Tick
// without a PassEnd is an interrupted pass: none of its decisions were committed.
struct PassEnd {
  Time time;  // the pass's tick `now`
  uint64_t tick_seq = 0;
  uint64_t view_seq = 0;   // the last input folded into the view the pass read
  std::string namespace_;  // the CronJob
  std::string name;
  std::string uid;
  uint32_t calls = 0;      // API calls the pass made (= its outcomes)
  std::string result;      // "requeue" | "error" | "done"
  std::string accounting;  // the AccountingState after the pass (model::EncodeAccountingState)
  friend bool operator==(const PassEnd&, const PassEnd&) = default;
};

// Append-only: RecordType = index + 1, so new alternatives go at the end.
using Input = std::variant<WatchEvent, Tick, ActionOutcome, ConfigChange, ActionIntent, PassEnd>;

// The record type byte (byte 1 of an encoded record).
enum class RecordType : uint8_t {
  kWatchEvent = 1,
  kTick = 2,
  kActionOutcome = 3,
  kConfigChange = 4,
  kActionIntent = 5,
  kPassEnd = 6,
  kDecision = 16,
};
RecordType InputRecordType(const Input& in);

// Appends the encoding of `in` to `out`.
void EncodeInput(const Input& in, std::string* out);
std::string EncodeInput(const Input& in);
// Corruption on truncated, trailing or unknown bytes; never throws or aborts.
Result<Input> DecodeInput(std::string_view bytes);
// DecodeInput into `*out`, reusing the storage of its strings when it already holds the record's
// type (log scans). On error `*out` is unspecified.
Status DecodeInputInto(std::string_view bytes, Input* out);

// The record type of an encoded input (its byte 1); 0 when `bytes` is shorter than a header.
inline uint8_t EncodedRecordType(std::string_view bytes) {
  return bytes.size() < 2 ? 0 : static_cast<uint8_t>(bytes[1]);
}
// Decodes an encoded watch event record (every format version) into views of `bytes`, without
// copying or allocating; the raw bytes in the record, if any, are checked and skipped. Corruption
// as DecodeInput does, and for a record of another type.
Status DecodeWatchEventRef(std::string_view bytes, WatchEventRef* out);

// Decision log records. Json members (job object, status) are stored as CBOR.
void EncodeDecisionRecord(const Decision& d, std::string* out);
std::string EncodeDecisionRecord(const Decision& d);
Result<Decision> DecodeDecisionRecord(std::string_view bytes);
// The Json members of a decision record as stored: their CBOR bytes (empty when absent), views of
// the record.
struct DecisionMembers {
  std::string_view job_object_cbor;
  std::string_view status_cbor;
};
// DecodeDecisionRecord without decoding the Json members: they are null in the result and
// `*members` views their bytes (what the audit index copies as they are). The CBOR is not checked.
Result<Decision> DecodeDecisionRecordParts(std::string_view bytes, DecisionMembers* members);

// The primitives of the encoding, shared with the store's own records (view entries, quarantine).
class RecordWriter {
 public:
  explicit RecordWriter(std::string* out) : out_(out) {}
  void Byte(uint8_t b) { out_->push_back(static_cast<char>(b)); }
  void Varint(uint64_t v) {
    if (v < 0x80) {  // inline fast path: the common one-byte case (lengths, kinds, flags)
      out_->push_back(static_cast<char>(v));
    } else {
      VarintSlow(v);
    }
  }
  void Signed(int64_t v) {
    Varint((static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63));
  }
  void Bytes(std::string_view s) {
    Varint(s.size());
    out_->append(s);
  }
  void Time(cronledger::Time t);

 private:
  void VarintSlow(uint64_t v);
  std::string* out_;
};

// Reads what RecordWriter wrote. Every getter fails (returns false) on truncated input and leaves
// the reader failed; check ok() or the return value.
class RecordReader {
 public:
  explicit RecordReader(std::string_view in) : in_(in) {}
  bool Byte(uint8_t* b) {
    if (!ok_ || in_.empty()) return Fail();
    *b = static_cast<uint8_t>(in_[0]);
    in_.remove_prefix(1);
    return true;
  }
  bool Varint(uint64_t* v) {
    // Inline fast path for one-byte values (field lengths); the general case is out of line.
    if (ok_ && !in_.empty() && static_cast<uint8_t>(in_[0]) < 0x80) {
      *v = static_cast<uint8_t>(in_[0]);
      in_.remove_prefix(1);
      return true;
    }
    return VarintSlow(v);
  }
  bool Signed(int64_t* v) {
    uint64_t u = 0;
    if (!Varint(&u)) return false;
    *v = static_cast<int64_t>((u >> 1) ^ (~(u & 1) + 1));
    return true;
  }
  bool Bytes(std::string_view* s) {
    uint64_t n = 0;
    if (!Varint(&n)) return false;
    if (n > in_.size()) return Fail();
    *s = in_.substr(0, n);
    in_.remove_prefix(n);
    return true;
  }
  bool String(std::string* s) {
    std::string_view v;
    if (!Bytes(&v)) return false;
    s->assign(v);
    return true;
  }
  bool Time(cronledger::Time* t) {
    int64_t sec = 0;
    uint64_t nanos = 0;
    if (!Signed(&sec) || !Varint(&nanos)) return false;
    if (nanos >= 1000000000) return Fail();
    *t = cronledger::Time::FromUnix(sec, static_cast<int32_t>(nanos));
    return true;
  }
  bool ok() const { return ok_; }
  bool done() const { return in_.empty(); }
  std::string_view rest() const { return in_; }

 private:
  bool Fail() { return ok_ = false; }
  // Defined here (not in inputs.cc) so that the record decoders inline it: the readers are on
  // the replay's scanning thread for every field of every record.
  bool VarintSlow(uint64_t* v) {
    uint64_t result = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
      if (!ok_ || in_.empty()) return Fail();
      const auto byte = static_cast<uint8_t>(in_[0]);
      in_.remove_prefix(1);
      if (shift == 63 && byte > 1) return Fail();  // would overflow 64 bits
      result |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) {
        *v = result;
        return true;
      }
    }
    return Fail();
  }
  std::string_view in_;
  bool ok_ = true;
};

}  // namespace cronledger::model
