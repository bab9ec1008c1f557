#pragma once

// The value of a CronJob index entry (`audit` `c` ns `\0` name `\0` time seq) and the Job
// templates it refers to (`audit` `j` ns `\0` name `\0` id): a covering copy of the decision, so
// that a CronJob's decisions over a time range, whole records included, are one sequential read
// of `audit` (docs/ledger.md "Column families and keys", docs/audit.md "Queries"). Internal to
// store/.
//
// Value versions (byte 0):
//   empty   v0, written before index values existed: the decision is read from the decision log.
//   1       v1: 1, omitted bits (kOmittedJobObject, kOmittedStatus), then
//           model::EncodeDecisionRecord of the decision without its Json members. The members it
//           omitted are read from the decision log.
//   2       v2 (written since): 2, member bits (kHasJobObject, kHasStatus), varint length of the
//           record, the record as in v1, then the members it has:
//             Job object: a form byte, then
//               kJobInline:   varint length + the object's CBOR (as the decision log has it);
//               kJobTemplate: the template id (8 bytes, big-endian), then one slot per JobSlot
//                             in order: kSlotKept (the template's value stands), kSlotDerived
//                             (computed from the record; the scheduled-timestamp annotation is
//                             followed by its UTC offset in seconds, a zigzag varint), or
//                             kSlotLiteral + varint length + the string.
//             status: varint length + CBOR.
//   other   read as v0 (the decision log), so a newer layout never breaks an older reader.
//
// A Job template is the CBOR of a Job object whose per-fire-time strings (the JobSlots:
// metadata.name, metadata.creationTimestamp and the scheduled-timestamp annotation, when they are
// strings) are blanked: what reconciler::BuildJob makes of one CronJob spec. Its id is a 64-bit
// FNV-1a of those bytes and its value is kTemplateV1 + the bytes; a template is written once per
// (CronJob, template) in the WriteBatch of the first decision that refers to it, and the writer
// never writes another content under an id it finds stored (JobTemplateWriter). Restoring a Job
// object copies the decoded template and sets the slots: the Json tree is that of the decision
// log's CBOR, node for node (only string values of the same nodes differ between the two CBOR
// encodings), so every output of it is byte-identical.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "model/annotations.h"
#include "model/decision.h"
#include "model/inputs.h"
#include "model/json.h"
#include "model/result.h"

namespace cronledger::store::cronjob_index {

inline constexpr uint8_t kV1 = 1;
inline constexpr uint8_t kV2 = 2;
// v1: the members the value left out.
inline constexpr uint8_t kOmittedJobObject = 1;
inline constexpr uint8_t kOmittedStatus = 2;
// v2: the members the value holds.
inline constexpr uint8_t kHasJobObject = 1;
inline constexpr uint8_t kHasStatus = 2;
// v2 Job object forms.
inline constexpr uint8_t kJobInline = 0;
inline constexpr uint8_t kJobTemplate = 1;
// Template values.
inline constexpr uint8_t kTemplateV1 = 1;

// The per-fire-time strings of a Job object that a template leaves blank.
enum JobSlot : uint8_t { kSlotName, kSlotCreationTimestamp, kSlotScheduledAnnotation, kSlotCount };
using model::kScheduledTimestampAnnotation;
// Slot tags.
inline constexpr uint8_t kSlotKept = 0;
inline constexpr uint8_t kSlotDerived = 1;
inline constexpr uint8_t kSlotLiteral = 2;

// The slots of a Job object that are present as strings (null where not). Pointers into `job`.
std::array<std::string*, kSlotCount> FindSlots(model::Json& job);

// The template of a Job object from its CBOR as the decision record stores it, without decoding
// it: in `*template_cbor` the CBOR of the object with its slots' strings blanked (""), and the
// slots' strings, viewing `job_cbor` (nullopt where FindSlots finds none). False when the CBOR is
// not in the form the record's encoder writes (the caller then keeps the object inline).
using CborSlots = std::array<std::optional<std::string_view>, kSlotCount>;
bool TemplateOfCbor(std::string_view job_cbor, std::string* template_cbor, CborSlots* slots);
uint64_t TemplateId(std::string_view template_cbor);
std::string TemplateValue(std::string_view template_cbor);
// A template value decoded; Corruption when malformed or of an unknown version.
Result<model::Json> DecodeTemplateValue(std::string_view value);

// A v2 Job object member, not decoded yet: views into the index value.
struct JobObjectRef {
  uint8_t form = kJobInline;
  std::string_view cbor;  // kJobInline
  uint64_t template_id = 0;
  struct Slot {
    uint8_t tag = kSlotKept;
    std::string_view literal;
    int64_t offset = 0;  // kSlotScheduledAnnotation, derived
  };
  std::array<Slot, kSlotCount> slots;
};

struct IndexValue {
  uint8_t version = 0;  // 0: empty or unknown (read the decision log), 1 or 2
  uint8_t omitted = 0;  // v1: the members only the decision log holds
  // v2, decoded only when asked for (members):
  bool has_job_object = false;
  JobObjectRef job_object;
  bool has_status = false;
  std::string_view status_cbor;
};

// Decodes the record part of a CronJob index value into `*d` (Json members null) and, with
// `members`, the views of its v2 members. Version 0 (and `*d` untouched) for an empty value or an
// unknown version; Corruption for a malformed v1 or v2 value.
Result<IndexValue> DecodeIndexValue(std::string_view bytes, model::Decision* d, bool members);

// Decodes CBOR (an inline Job object or a status); Corruption when malformed.
Result<model::Json> DecodeCbor(std::string_view cbor, std::string_view what);

// The Job object of `ref` (kJobTemplate) from its decoded template and the decision's record.
// Corruption when the template lacks a slot the value sets or has one the value keeps.
Status RestoreJobObject(const JobObjectRef& ref, const model::Json& tmpl, const model::Decision& d,
                        model::Json* out);

// The v1 value of `d` (what builds before v2 wrote; tests write it to make old stores). d's Json
// members are moved out while the record is encoded and moved back.
void EncodeV1(model::Decision& d, std::string* out);

// Where JobTemplateWriter finds and writes templates: the store's latest state and the WriteBatch
// of the unit being written.
class TemplateStore {
 public:
  virtual ~TemplateStore() = default;
  virtual Result<std::optional<std::string>> Get(std::string_view key) = 0;
  virtual Status Put(std::string_view key, std::string_view value) = 0;
};

struct TemplateWriterStats {
  uint64_t templated = 0;  // Job objects written as a template reference
  uint64_t inline_ = 0;    // Job objects written inline
  uint64_t templates_put = 0;
  uint64_t template_gets = 0;
};

// Writes v2 values. Not thread-safe: the ledger calls it from its audit indexer only.
//
// A Job object is written as a reference to its template, which is looked up in the store and,
// when absent, Put in the same WriteBatch as the decision; an id found stored with other bytes (a
// hash collision) leaves that template's objects inline. So a value is a function of the decision
// and of the templates stored before it, and the index rebuilt from the decision log in seq order
// is the one the indexer wrote, byte for byte. Per CronJob the writer remembers the last template
// and what the store showed of it, which saves the lookups and changes no value. Nothing is
// trusted that the store has not shown: a template Put in a unit whose write may have failed is
// looked up again by the next unit that uses it (and Put again if missing).
class JobTemplateWriter {
 public:
  // Encodes the v2 value of the decision record whose Json members are null in `d` and stored as
  // `members` (model::DecodeDecisionRecordParts of the record) into `*out`, copying the members'
  // bytes and taking the Job object's template from them without decoding them. `unit`
  // identifies the unit of work (one WriteBatch): a template Put for an earlier unit is looked up
  // in `store` again.
  Status EncodeStored(const model::Decision& d, const model::DecisionMembers& members,
                      uint64_t unit, TemplateStore& store, std::string* out);
  const TemplateWriterStats& stats() const { return stats_; }

 private:
  enum class State : uint8_t { kUnknown, kPending, kStored, kUnusable };
  struct Entry {
    std::string template_cbor;
    uint64_t id = 0;
    State state = State::kUnknown;
    uint64_t unit = 0;  // kPending: the unit that Put it
  };
  // The template to refer to for a Job object with template `template_cbor_`, or nullopt (inline,
  // after a hash collision).
  Result<std::optional<uint64_t>> Choose(const model::CronJobRef& cj, uint64_t unit,
                                         TemplateStore& store);
  Status EnsureStored(const model::CronJobRef& cj, Entry* e, uint64_t unit, TemplateStore& store);

  // What is remembered is forgotten at once when the templates held exceed this many bytes.
  static constexpr size_t kMaxBytes = size_t{64} << 20;
  std::unordered_map<std::string, Entry> by_cron_job_;  // key: ns "\0" name
  size_t bytes_ = 0;                                    // of the entries' keys and templates
  std::string key_, record_, template_cbor_, value_;    // reused buffers
  TemplateWriterStats stats_;
};

}  // namespace cronledger::store::cronjob_index
