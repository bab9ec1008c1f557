#pragma once

// The audit trail (docs/audit.md "Prove the trail was not edited"; the chain's exact definition
// is in docs/reference/records.md "Audit trail chain"): a SHA-256 hash chain per source and log
// over every ledger record, in seq order.
//
//   genesis  = SHA-256(0x02 || "cronledger-trail-v1" || 0x00 || source || 0x00 || log)
//   leaf     = SHA-256(0x00 || "cronledger-trail-v1/input" || 0x00 || be64(seq) ||
//                      be64(recorded_at, unix ns) || be64(len(record)) || record || raw)
//              raw = 0x00 (none) | 0x01 || SHA-256(raw object bytes) | 0x02 (pruned, unknown)
//            = SHA-256(0x00 || "cronledger-trail-v1/decision" || 0x00 || be64(seq) ||
//                      be64(len(record)) || record)
//   head_i   = SHA-256(0x01 || head_{i-1} || leaf_i),   head_0 = genesis
//
// `record` is the record's bytes exactly as the ledger stores them. The controller never hashes:
// UpdateTrail chains the records written since the last update (from the head kept in the
// store's meta data, store/trail_store.h) and keeps each record's leaf and every
// mark_every-th head, so a checkpoint costs O(new records) and verification can name the first
// record that differs.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/json.h"
#include "model/result.h"
#include "model/time.h"
#include "store/ledger.h"
#include "store/trail_store.h"

namespace cronledger::replay::trail {

using store::trail::Hash;

inline constexpr std::string_view kTrailFormat = "cronledger-trail-v1";

enum class RawKind : uint8_t { kNone = 0, kDigest = 1, kPrunedUnknown = 2 };

Hash Genesis(std::string_view source, std::string_view log);
Hash InputLeaf(uint64_t seq, Time recorded_at, std::string_view record, RawKind raw_kind,
               const Hash& raw_digest);
Hash DecisionLeaf(uint64_t seq, std::string_view record);
Hash Chain(const Hash& head, const Hash& leaf);
std::string Hex(const Hash& h);
Result<Hash> ParseHex(std::string_view hex);

// One chain's head as a checkpoint records it.
struct ChainHead {
  // On a checkpoint of an audit store: the source whose copy this chain covers (the chain itself
  // is the copy's, so `source` is the copy's as well). Unset on a checkpoint of one ledger.
  std::optional<std::string> copy_of;
  std::string source;
  std::string log;  // "inputs" | "decisions"
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint64_t records = 0;  // leaves chained (records removed by retention included)
  Hash head{};
  // The Merkle tree head over the same leaves (replay/merkle.h), for inclusion proofs. Unset in a
  // checkpoint written before the trail kept its tree.
  std::optional<Hash> tree_head;
  uint64_t mark_every = 0;
  std::vector<store::trail::TrailMark> marks;  // marks[k] is the head after leaf (k+1)*mark_every
};

struct Checkpoint {
  Time taken_at;
  std::vector<ChainHead> chains;
};

struct UpdateOptions {
  // An intermediate head is kept after every this many leaves (fixed when a chain starts; a
  // later value is ignored). Default: 4096.
  uint64_t mark_every = 4096;
  // Write what was computed to the store (false: compute in memory only, e.g. on a read-only
  // ledger). Default: true.
  bool persist = true;
};

// Chains the records of `ledger` (source "local") written since the last update, both logs,
// and returns the heads. Each write of entries, marks and the new state is one atomic batch, so
// an interrupted update resumes where its last batch ended.
Result<Checkpoint> UpdateTrail(store::Ledger& ledger, const UpdateOptions& options, Time now);
// True when the store keeps a trail of its inputs (UpdateTrail ran once).
Result<bool> HasTrail(store::Ledger& ledger);

model::Json CheckpointJson(const Checkpoint& c);
// InvalidArgument naming what is wrong; never throws.
Result<Checkpoint> ParseCheckpoint(std::string_view text);

// --- verification ---

// kTreeHead: every record is as the chain says, but the checkpoint's treeHead is not the tree of
// those records.
enum class ProblemKind { kAltered, kRemoved, kInserted, kUnlocated, kTreeHead };
std::string_view ProblemKindName(ProblemKind k);  // "altered" | "removed" | "inserted" | ...

struct TrailProblem {
  ProblemKind kind = ProblemKind::kAltered;
  uint64_t seq = 0;       // the record's seq (kUnlocated: the end of the range)
  uint64_t from_seq = 0;  // kUnlocated: the range starts after this seq
  std::string record;     // what the record is, e.g. "input 17 (Tick prod/backup)"
  std::string detail;
};

struct ChainVerdict {
  std::optional<std::string> copy_of;  // as in the checkpoint's chain
  std::string source;
  std::string log;
  bool intact = false;
  uint64_t verified = 0;              // leaves recomputed and chained up to the checkpoint
  uint64_t removed_by_retention = 0;  // of those, leaves taken from the store (record deleted)
  uint64_t not_covered = 0;           // records after the checkpoint's last seq
  std::optional<TrailProblem> problem;
};

struct TrailVerdict {
  std::vector<ChainVerdict> chains;
  std::vector<std::string> notes;  // e.g. a bundle whose checksum no longer matches
  bool intact() const;
};

// Recomputes the store's chains and compares them with the checkpoint.
Result<TrailVerdict> VerifyStore(store::Ledger& ledger, const Checkpoint& checkpoint);
// The same for a trail bundle (`cronledger export --trail`). Corruption when it is not one.
Result<TrailVerdict> VerifyBundle(std::string_view bundle, const Checkpoint& checkpoint);

// An audit store's copies, or a bundle set's sections, against a checkpoint of an audit store:
// each copy is checked with the checkpoint's chains whose copy_of names it, by `verify`
// (VerifyStore on the copy, VerifyBundle on the section). A source the checkpoint names that
// `present` lacks is a chain verdict "removed" (the whole copy is gone); a present source the
// checkpoint does not name is a note (its first records came after the checkpoint). InvalidArgument
// for a checkpoint of one ledger (no copy_of).
Result<TrailVerdict> VerifySources(
    const Checkpoint& checkpoint, const std::vector<std::string>& present,
    const std::function<Result<TrailVerdict>(const std::string& source, const Checkpoint&)>&
        verify);

model::Json VerdictJson(const TrailVerdict& v);

// --- inclusion proofs (replay/merkle.h) ---

inline constexpr std::string_view kProofFormat = "cronledger-inclusion-v1";

// That one decision is in the trail a checkpoint names (`cronledger prove`), checkable with the
// checkpoint alone (`cronledger verify-proof`): the decision's record bytes, its leaf's position
// in the chain's Merkle tree, and the audit path to the checkpoint's tree head.
struct InclusionProof {
  std::optional<std::string> copy_of;  // the chain's, as in the checkpoint
  std::string source;
  std::string log;  // "decisions"
  uint64_t seq = 0;
  uint64_t leaf_index = 0;
  uint64_t tree_size = 0;
  Hash tree_head{};
  std::string record;  // the decision record exactly as the ledger stores it
  std::vector<Hash> path;
};

// The proof that decision `seq` of `ledger` is in `chain` (a checkpoint's chain of the ledger's
// decisions, with its tree head). NotFound when the chain does not cover that seq;
// FailedPrecondition when the checkpoint has no tree head, the record was removed by retention,
// or the store's trail no longer gives the checkpoint's tree head; Corruption when the record's
// bytes differ from those the trail chained. Reads the chain's entries twice (O(records)).
Result<InclusionProof> ProveDecision(store::Ledger& ledger, const ChainHead& chain, uint64_t seq);

// The proof as `prove` prints it: {"format", "copyOf"?, "source", "log", "seq", "leafIndex",
// "treeSize", "treeHead", "record" (base64), "decision" (the record decoded, for people),
// "auditPath": [hex, ...]}.
model::Json ProofJson(const InclusionProof& p);
// The proof's record decoded, as ProofJson's "decision" (null when it does not decode).
model::Json ProofDecision(const InclusionProof& p);
// InvalidArgument naming what is wrong; never throws. A "decision" that is not the record's
// decoding is an error too: the readable part must not say something the bytes do not.
Result<InclusionProof> ParseProof(std::string_view text);
// Ok when the proof's record is in the tree of the checkpoint's matching chain (same copyOf,
// source and log, same size); FailedPrecondition naming why not.
Status VerifyProof(const InclusionProof& proof, const Checkpoint& checkpoint);

// A trail bundle (`cronledger export --trail`): a bundle (replay/bundle.h, version 1) of every
// record of the store, each input and decision line with its trail leaf ("leaf", hex; absent for
// records the trail has not chained yet) and, for a watch event whose raw bytes were pruned, the
// digest the leaf covers ("rawSha256"); a record removed by retention is a line
// {"removed":SEQ,"log":"inputs","leaf":HEX}. Its header has "trail":{"format","source"}. It
// replays like an unscoped bundle. `schema_version` and `tzdata` come from `header`.
Result<std::string> ExportTrailBundle(store::Ledger& ledger, int schema_version,
                                      const std::string& tzdata);

}  // namespace cronledger::replay::trail
