#pragma once

// The payloads of the Kafka streams (docs/kafka.md "Payloads"):
//   P.decisions  the decision record exactly as model::EncodeDecision writes it (docs/design.md §4)
//   P.ledger     one input record of the ledger as JSON (EncodeLedgerRecord below)
// Both carry the headers `cronledger-schema` (kDecisionSchema / kLedgerSchema) and
// `cronledger-seq` (the record's decimal seq), and are keyed by CronJob (KeyOfDecision,
// emit::OutboxEmitter for inputs).

#include <string>
#include <string_view>

#include "model/decision.h"
#include "model/json.h"
#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::emit {

inline constexpr std::string_view kSchemaHeader = "cronledger-schema";
inline constexpr std::string_view kSeqHeader = "cronledger-seq";
inline constexpr std::string_view kSourceHeader = "cronledger-source";  // OutboxEmitterOptions
inline constexpr std::string_view kDecisionSchema = "cronledger.decision/v1";
inline constexpr std::string_view kLedgerSchema = "cronledger.ledger/v1";
// P.checkpoints: an audit trail checkpoint (replay/trail.h CheckpointJson), keyed by source.
inline constexpr std::string_view kCheckpointSchema = "cronledger.checkpoint/v1";

// Records that belong to no CronJob (bookmarks, configuration changes) use this key: the
// `namespace/name` form with both parts empty. A fixed key keeps them on one partition, in order.
inline constexpr std::string_view kClusterKey = "/";

// `namespace/name` of the decision's CronJob.
std::string KeyOfDecision(const model::Decision& d);

// One input record as JSON: {"seq", "recordedAt", "type", ...the input's fields}. Every field is
// kept exactly (a watch event's object as its raw JSON text in "raw", API payloads as text), so
// DecodeLedgerRecord(EncodeLedgerRecord(r)) == r; the ledger can be rebuilt from the topic.
model::Json EncodeLedgerRecord(const store::LogRecord& record);
// InvalidArgument naming the field for anything malformed; never throws.
Result<store::LogRecord> DecodeLedgerRecord(const model::Json& j);

}  // namespace cronledger::emit
