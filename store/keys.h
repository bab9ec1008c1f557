#pragma once

// Key and record encodings of the RocksDB ledger (internal to store/; docs/ledger.md).

#include <cstdint>
#include <string>
#include <string_view>

#include "model/decision.h"
#include "model/result.h"
#include "model/time.h"
#include "store/ledger.h"

namespace cronledger::store::keys {

// Big-endian, so byte order is numeric order.
std::string Be64(uint64_t v);
void PutBe64(std::string* out, uint64_t v);
bool GetBe64(std::string_view in, uint64_t* v);
// An instant as 8 bytes that sort like the instant (unix nanoseconds, sign bit flipped).
void PutTimeKey(std::string* out, Time t);

// Meta keys.
inline constexpr std::string_view kSchemaVersion = "schema_version";
inline constexpr std::string_view kLastInputSeq = "last_input_seq";
inline constexpr std::string_view kLastDecisionSeq = "last_decision_seq";
inline constexpr std::string_view kLastQuarantineId = "last_quarantine_id";
std::string SourceKey(std::string_view source);  // "source/" + source

// Audit index keys (decisions column family "audit"). Each ends in time(8) + seq(8).
std::string ByCronJobPrefix(std::string_view ns, std::string_view name);
std::string ByActionPrefix(model::DecisionAction action);
std::string ByReasonPrefix(std::string_view reason);
std::string ByTimePrefix();
// The decision seq at the end of an index key.
bool SeqOfIndexKey(std::string_view key, uint64_t* seq);

// The audit index's watermark (in the "audit" column family, Be64): every decision up to this seq
// has its index entries; written in the batch that writes them (store/audit_indexer.cc). Absent in
// a store whose index was written in its commits (all of it indexed).
inline constexpr std::string_view kIndexedThrough = "w";

// A Job template of a CronJob (`j` ns name id(8)): what CronJob index values (v2) refer to
// (store/cronjob_index.h).
std::string JobTemplateKey(std::string_view ns, std::string_view name, uint64_t id);

// Input log value: version, recorded_at, flags, then the model encoding (raw bytes stripped).
inline constexpr uint8_t kLogEnvelopeV1 = 1;
inline constexpr uint8_t kFlagRawPruned = 1;
std::string EncodeLogValue(Time recorded_at, uint8_t flags, const model::Input& in);
void EncodeLogValueTo(Time recorded_at, uint8_t flags, const model::Input& in, std::string* out);
struct LogValue {
  Time recorded_at;
  uint8_t flags = 0;
  std::string_view input;  // the model encoding
};
Result<LogValue> DecodeLogValue(std::string_view bytes);
// The model encoding of an input log value, its envelope skipped without decoding recorded_at
// (log scans that only fold): false when the envelope is malformed.
bool LogValueInput(std::string_view bytes, std::string_view* input);

std::string EncodeQuarantine(const QuarantineEntry& q);
Result<QuarantineEntry> DecodeQuarantine(uint64_t id, std::string_view bytes);

}  // namespace cronledger::store::keys
