#pragma once

// Internal to replay/trail*.cc: the comparison of one log's records with a checkpoint's chain,
// shared by the store and the bundle verification.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "replay/merkle.h"
#include "replay/trail.h"

namespace cronledger::replay::trail {

// InvalidArgument when the checkpoint is an audit store's (a chain names copy_of): it is checked
// with VerifySources, not against one ledger.
Status RejectMergedCheckpoint(const Checkpoint& checkpoint);

// One position of a log: its record (as the recomputed leaf) and/or the trail's entry for it.
struct TrailItem {
  uint64_t seq = 0;
  std::optional<Hash> recomputed;                   // the record is there: its leaf now
  std::optional<store::trail::TrailEntry> claimed;  // the trail's entry for this seq
  std::string name;                                 // how to name it when nothing better is known
  // The record's leaf had it the given seq (an insertion or a deletion that renumbered the
  // records after it shows as their leaves under the neighbouring seq). Called during Add only.
  std::function<Hash(uint64_t)> leaf_at;
};

// Chains the items in the order given and compares with the checkpoint's marks and head. The
// first record that differs is named: an entry whose leaf differs from the record's (altered), a
// record without an entry or with a seq that does not increase (inserted), an entry without a
// record that retention did not remove (removed); when the entries were rewritten too, the
// first seq gap in the first diverging stretch between marks (removed), else that stretch.
class ChainChecker {
 public:
  explicit ChainChecker(const ChainHead& chain);
  void Add(const TrailItem& item);
  // True when the record at `seq` is the first problem found so far (the caller names it).
  bool WantsName(uint64_t seq) const;
  // `names`: record names by seq the caller made for WantsName.
  ChainVerdict Finish(const std::map<uint64_t, std::string>& names);

 private:
  void Problem(ProblemKind kind, const TrailItem& item, std::string detail);

  const ChainHead& chain_;
  ChainVerdict verdict_;
  Hash head_;
  // The Merkle tree of the same leaves, compared with the checkpoint's treeHead when it has one:
  // the chain and the tree a proof is checked against must be of the same records.
  merkle::CompactRange tree_;
  uint64_t count_ = 0;
  std::optional<uint64_t> prev_seq_;
  size_t next_mark_ = 0;
  uint64_t segment_start_ = 0;            // the seq of the last mark that matched
  std::optional<uint64_t> gap_;           // the first missing seq since that mark
  std::optional<TrailProblem> first_;     // the first record-level problem
  std::optional<TrailProblem> diverged_;  // the first stretch whose mark differs
  // After the first altered record (seq s): its entry's leaf and its leaf under seq s+1, to tell
  // by the next record whether the records were renumbered around an insertion or a deletion.
  std::optional<Hash> altered_claimed_;
  std::optional<Hash> altered_as_next_;
};

// The trail entries of one chain of the store, read a page at a time in seq order.
class EntryCursor {
 public:
  EntryCursor(store::Ledger& ledger, std::string_view log);
  // The next entry (seq, entry) without taking it; null at the end.
  Result<const std::pair<uint64_t, store::trail::TrailEntry>*> Peek();
  void Take() { ++pos_; }

 private:
  static constexpr size_t kPage = 4096;
  Status Fill();

  store::Ledger& ledger_;
  std::string log_;
  std::string prefix_;
  std::string from_;
  std::vector<std::pair<uint64_t, store::trail::TrailEntry>> page_;
  size_t pos_ = 0;
  bool done_ = false;
};

// "input 17 (Tick prod/backup)" / "decision 5 (createJob prod/backup)".
std::string RecordName(std::string_view log, uint64_t seq, std::string_view record);

}  // namespace cronledger::replay::trail
