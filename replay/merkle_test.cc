// The trail's Merkle tree (replay/merkle.h) against the definition of RFC 9162 section 2.1
// computed the slow way: every tree size up to 70, every leaf's proof.
#include "replay/merkle.h"

#include <gtest/gtest.h>

#include <bit>

#include "model/sha256.h"
#include "replay/trail.h"

namespace cronledger::replay::merkle {
namespace {

Hash Leaf(uint64_t i) { return trail::DecisionLeaf(i + 1, "record " + std::to_string(i)); }

// MTH(D[begin:end]) by the recursive definition.
Hash Definition(const std::vector<Hash>& leaves, size_t begin, size_t end) {
  if (end == begin) return EmptyRoot();
  if (end - begin == 1) return leaves[begin];
  size_t k = 1;
  while (k * 2 < end - begin) k *= 2;
  return Node(Definition(leaves, begin, begin + k), Definition(leaves, begin + k, end));
}

// PATH(m, D[begin:end]) by the recursive definition.
void DefinitionPath(const std::vector<Hash>& leaves, size_t m, size_t begin, size_t end,
                    std::vector<Hash>* out) {
  if (end - begin <= 1) return;
  size_t k = 1;
  while (k * 2 < end - begin) k *= 2;
  if (m < begin + k) {
    DefinitionPath(leaves, m, begin, begin + k, out);
    out->push_back(Definition(leaves, begin + k, end));
  } else {
    DefinitionPath(leaves, m, begin + k, end, out);
    out->push_back(Definition(leaves, begin, begin + k));
  }
}

Result<Proof> Prove(const std::vector<Hash>& leaves, uint64_t index) {
  return ProveInclusion(index, leaves.size(), [&](const auto& add) {
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (!add(i, leaves[i])) break;
    }
    return Status::Ok();
  });
}

TEST(Merkle, EmptyTreeIsTheHashOfNothing) {
  EXPECT_EQ(trail::Hex(CompactRange().Root()),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Merkle, RootsAndProofsFollowTheDefinition) {
  std::vector<Hash> leaves;
  CompactRange range;
  for (uint64_t n = 1; n <= 70; ++n) {
    leaves.push_back(Leaf(n - 1));
    range.Append(leaves.back());
    const Hash root = Definition(leaves, 0, n);
    ASSERT_EQ(range.Root(), root) << n;
    ASSERT_EQ(range.roots().size(), static_cast<size_t>(std::popcount(n)));
    // A range restored from its roots continues the same way.
    CompactRange restored(range.size(), range.roots());
    restored.Append(Leaf(1000));
    CompactRange copy = range;
    copy.Append(Leaf(1000));
    ASSERT_EQ(restored.Root(), copy.Root());
    for (uint64_t m = 0; m < n; ++m) {
      auto proof = Prove(leaves, m);
      ASSERT_TRUE(proof.ok()) << proof.status().ToString();
      EXPECT_EQ(proof->root, root);
      std::vector<Hash> want;
      DefinitionPath(leaves, m, 0, n, &want);
      ASSERT_EQ(proof->path, want) << n << " " << m;
      EXPECT_TRUE(VerifyInclusion(m, n, leaves[m], proof->path, root)) << n << " " << m;
      // Another leaf, another position, another size, a changed path: all refused.
      EXPECT_FALSE(VerifyInclusion(m, n, Leaf(999), proof->path, root));
      if (n > 1) {
        EXPECT_FALSE(VerifyInclusion((m + 1) % n, n, leaves[m], proof->path, root));
        std::vector<Hash> changed = proof->path;
        changed[0][0] ^= 1;
        EXPECT_FALSE(VerifyInclusion(m, n, leaves[m], changed, root));
        changed.pop_back();
        EXPECT_FALSE(VerifyInclusion(m, n, leaves[m], changed, root));
      }
      // A tree of one more leaf has another head: the path of this tree does not reach it (the
      // size is bound by the head a checkpoint pairs it with, as in RFC 9162).
      std::vector<Hash> grown = leaves;
      grown.push_back(Leaf(n));
      EXPECT_FALSE(VerifyInclusion(m, n + 1, leaves[m], proof->path, Definition(grown, 0, n + 1)))
          << n << " " << m;
    }
  }
}

TEST(Merkle, ProveRefusesAnIndexOutsideAndAShortScan) {
  std::vector<Hash> leaves = {Leaf(0), Leaf(1), Leaf(2)};
  EXPECT_EQ(Prove(leaves, 3).status().code(), Status::Code::kInvalidArgument);
  auto short_scan = ProveInclusion(1, 5, [&](const auto& add) {
    for (size_t i = 0; i < leaves.size(); ++i) add(i, leaves[i]);
    return Status::Ok();
  });
  EXPECT_EQ(short_scan.status().code(), Status::Code::kCorruption);
}

}  // namespace
}  // namespace cronledger::replay::merkle
