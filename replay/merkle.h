#pragma once

// The Merkle tree over an audit trail's leaves (docs/reference/records.md "Audit trail tree"), in
// the form of RFC 9162 (Certificate Transparency 2.0) section 2.1: the leaves are the trail's
// leaves, each already SHA-256(0x00 || entry), and an interior node is SHA-256(0x01 || left ||
// right), the same function that chains the trail (replay/trail.h Chain). The tree of n leaves
// splits at the largest power of two below n. A checkpoint carries the tree head beside the chain
// head, so one record can be shown to be in the trail with log2(n) hashes instead of the whole
// trail (an inclusion proof).

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "model/result.h"
#include "store/trail_store.h"

namespace cronledger::replay::merkle {

using store::trail::Hash;

// SHA-256(0x01 || left || right).
Hash Node(const Hash& left, const Hash& right);
// The tree head of no leaves: SHA-256 of nothing.
Hash EmptyRoot();

// The right edge of a growing tree: the roots of its perfect subtrees, largest first (one per
// set bit of the leaf count). Appending is amortized O(1) hashes; the root folds them.
class CompactRange {
 public:
  CompactRange() = default;
  CompactRange(uint64_t size, std::vector<Hash> roots) : size_(size), roots_(std::move(roots)) {}
  void Append(const Hash& leaf);
  Hash Root() const;
  uint64_t size() const { return size_; }
  const std::vector<Hash>& roots() const { return roots_; }

 private:
  uint64_t size_ = 0;
  std::vector<Hash> roots_;
};

// The subtrees whose roots make the audit path of leaf `index` in a tree of `size` leaves, in the
// order the path lists them (nearest the leaf first): [begin, end) leaf ranges.
std::vector<std::pair<uint64_t, uint64_t>> PathRanges(uint64_t index, uint64_t size);

// The audit path of leaf `index` among `size` leaves, from one pass over the leaves in order
// (`scan(add)` calls add(i, leaf) for i = 0..size-1 and stops when add returns false), keeping
// O(log size) hashes. Also returns the tree head. InvalidArgument when index >= size; Corruption
// when the scan gives another number of leaves.
struct Proof {
  std::vector<Hash> path;
  Hash root{};
};
Result<Proof> ProveInclusion(
    uint64_t index, uint64_t size,
    const std::function<Status(const std::function<bool(uint64_t, const Hash&)>&)>& scan);

// RFC 9162 2.1.3.2: whether `path` shows `leaf` at `index` in the tree of `size` leaves whose head
// is `root`.
bool VerifyInclusion(uint64_t index, uint64_t size, const Hash& leaf, const std::vector<Hash>& path,
                     const Hash& root);

}  // namespace cronledger::replay::merkle
