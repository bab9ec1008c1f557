// The trail's Merkle tree (replay/merkle.h).
#include "replay/merkle.h"

#include <algorithm>
#include <cstring>

#include "model/sha256.h"
#include "replay/trail.h"

namespace cronledger::replay::merkle {

Hash Node(const Hash& left, const Hash& right) { return trail::Chain(left, right); }

Hash EmptyRoot() {
  const model::Sha256::Digest d = model::Sha256::Hash(std::string_view());
  Hash h;
  std::memcpy(h.data(), d.data(), h.size());
  return h;
}

void CompactRange::Append(const Hash& leaf) {
  Hash h = leaf;
  for (uint64_t n = size_; (n & 1) != 0; n >>= 1) {
    h = Node(roots_.back(), h);
    roots_.pop_back();
  }
  roots_.push_back(h);
  ++size_;
}

Hash CompactRange::Root() const {
  if (roots_.empty()) return EmptyRoot();
  Hash r = roots_.back();
  for (size_t i = roots_.size() - 1; i-- > 0;) r = Node(roots_[i], r);
  return r;
}

namespace {

// The largest power of two below n (n >= 2).
uint64_t SplitPoint(uint64_t n) {
  uint64_t k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

void AddPathRanges(uint64_t index, uint64_t begin, uint64_t end,
                   std::vector<std::pair<uint64_t, uint64_t>>* out) {
  if (end - begin <= 1) return;
  const uint64_t k = SplitPoint(end - begin);
  if (index < begin + k) {
    AddPathRanges(index, begin, begin + k, out);
    out->emplace_back(begin + k, end);
  } else {
    AddPathRanges(index, begin + k, end, out);
    out->emplace_back(begin, begin + k);
  }
}

}  // namespace

std::vector<std::pair<uint64_t, uint64_t>> PathRanges(uint64_t index, uint64_t size) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  if (index < size) AddPathRanges(index, 0, size, &out);
  return out;
}

Result<Proof> ProveInclusion(
    uint64_t index, uint64_t size,
    const std::function<Status(const std::function<bool(uint64_t, const Hash&)>&)>& scan) {
  if (index >= size) {
    return Status::InvalidArgument("leaf " + std::to_string(index) + " is not among the " +
                                   std::to_string(size) + " leaves of the tree");
  }
  const auto ranges = PathRanges(index, size);
  std::vector<size_t> by_begin(ranges.size());
  for (size_t i = 0; i < by_begin.size(); ++i) by_begin[i] = i;
  std::sort(by_begin.begin(), by_begin.end(),
            [&](size_t a, size_t b) { return ranges[a].first < ranges[b].first; });
  std::vector<CompactRange> subtrees(ranges.size());
  CompactRange whole;
  size_t cursor = 0;
  uint64_t seen = 0;
  bool in_order = true;
  CL_RETURN_IF_ERROR(scan([&](uint64_t i, const Hash& leaf) {
    if (i != seen) {
      in_order = false;
      return false;
    }
    ++seen;
    whole.Append(leaf);
    while (cursor < by_begin.size() && ranges[by_begin[cursor]].second <= i) ++cursor;
    if (cursor < by_begin.size() && ranges[by_begin[cursor]].first <= i) {
      subtrees[by_begin[cursor]].Append(leaf);
    }
    return seen < size;
  }));
  if (!in_order || seen != size) {
    return Status::Corruption("the trail gave " + std::to_string(seen) + " leaves in order, not " +
                              std::to_string(size));
  }
  Proof out;
  out.root = whole.Root();
  for (const CompactRange& r : subtrees) out.path.push_back(r.Root());
  return out;
}

bool VerifyInclusion(uint64_t index, uint64_t size, const Hash& leaf, const std::vector<Hash>& path,
                     const Hash& root) {
  if (index >= size) return false;
  uint64_t fn = index;
  uint64_t sn = size - 1;
  Hash r = leaf;
  for (const Hash& p : path) {
    if (sn == 0) return false;
    if ((fn & 1) != 0 || fn == sn) {
      r = Node(p, r);
      while ((fn & 1) == 0 && fn != 0) {
        fn >>= 1;
        sn >>= 1;
      }
    } else {
      r = Node(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  return sn == 0 && r == root;
}

}  // namespace cronledger::replay::merkle
