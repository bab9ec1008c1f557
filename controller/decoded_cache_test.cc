// The decoded-object cache on its own: hits only at the same source_seq, bounded with LRU
// eviction, Forget, and disabled at capacity 0.

#include "controller/decoded_cache.h"

#include <gtest/gtest.h>

#include <memory>

namespace cronledger::controller {
namespace {

std::shared_ptr<const model::Job> JobNamed(const std::string& name) {
  auto job = std::make_shared<model::Job>();
  job->metadata.name = name;
  return job;
}

TEST(DecodedCacheTest, HitsOnlyAtTheSameSourceSeq) {
  DecodedCache cache(8);
  cache.PutJob("ns", "j", 10, JobNamed("j@10"));
  ASSERT_NE(cache.GetJob("ns", "j", 10), nullptr);
  EXPECT_EQ(cache.GetJob("ns", "j", 10)->metadata.name, "j@10");
  EXPECT_EQ(cache.GetJob("ns", "j", 11), nullptr);      // modified since: other bytes
  EXPECT_EQ(cache.GetJob("other", "j", 10), nullptr);   // another namespace
  EXPECT_EQ(cache.GetCronJob("ns", "j", 10), nullptr);  // another kind
  cache.PutJob("ns", "j", 11, JobNamed("j@11"));        // replaces the entry
  EXPECT_EQ(cache.GetJob("ns", "j", 10), nullptr);
  EXPECT_EQ(cache.GetJob("ns", "j", 11)->metadata.name, "j@11");
  const DecodedCacheStats s = cache.Stats();
  EXPECT_EQ(s.objects, 1u);
  EXPECT_EQ(s.hits, 3u);
  EXPECT_EQ(s.misses, 4u);
}

TEST(DecodedCacheTest, EvictsTheLeastRecentlyUsedBeyondItsBound) {
  DecodedCache cache(2);
  cache.PutJob("ns", "a", 1, JobNamed("a"));
  cache.PutJob("ns", "b", 2, JobNamed("b"));
  ASSERT_NE(cache.GetJob("ns", "a", 1), nullptr);  // b is now the least recently used
  cache.PutJob("ns", "c", 3, JobNamed("c"));
  EXPECT_EQ(cache.GetJob("ns", "b", 2), nullptr);
  EXPECT_NE(cache.GetJob("ns", "a", 1), nullptr);
  EXPECT_NE(cache.GetJob("ns", "c", 3), nullptr);
  EXPECT_EQ(cache.Stats().objects, 2u);
  EXPECT_EQ(cache.Stats().evictions, 1u);
  // A pass holding an evicted object keeps it alive.
  auto held = cache.GetJob("ns", "a", 1);
  cache.PutJob("ns", "d", 4, JobNamed("d"));
  cache.PutJob("ns", "e", 5, JobNamed("e"));
  EXPECT_EQ(cache.GetJob("ns", "a", 1), nullptr);
  EXPECT_EQ(held->metadata.name, "a");
}

TEST(DecodedCacheTest, ForgetDropsAnObjectAndZeroCapacityHoldsNothing) {
  DecodedCache cache(4);
  cache.PutJob("ns", "a", 1, JobNamed("a"));
  cache.Forget(model::ObjectKind::kJob, "ns", "a");
  EXPECT_EQ(cache.GetJob("ns", "a", 1), nullptr);
  EXPECT_EQ(cache.Stats().objects, 0u);
  DecodedCache off(0);
  EXPECT_FALSE(off.enabled());
  off.PutJob("ns", "a", 1, JobNamed("a"));
  EXPECT_EQ(off.GetJob("ns", "a", 1), nullptr);
  EXPECT_EQ(off.Stats().objects, 0u);
}

TEST(DecodedCacheTest, AccountingStatesAreValidForTheirExactBytes) {
  DecodedCache cache(4);
  auto a = std::make_shared<CachedAccounting>();
  a->blob = R"({"accounting":{},"uid":"u1"})";
  a->uid = "u1";
  a->state.pending_reason = "x";
  cache.PutAccounting("ns/cj", a);
  ASSERT_NE(cache.GetAccounting("ns/cj", a->blob), nullptr);
  EXPECT_EQ(cache.GetAccounting("ns/cj", a->blob)->state.pending_reason, "x");
  // Other bytes (another writer, a commit that did not happen): not held.
  EXPECT_EQ(cache.GetAccounting("ns/cj", R"({"accounting":{},"uid":"u2"})"), nullptr);
  EXPECT_EQ(cache.GetAccounting("ns/other", a->blob), nullptr);
  // Deleting the CronJob drops its accounting state too.
  cache.Forget(model::ObjectKind::kCronJob, "ns", "cj");
  EXPECT_EQ(cache.GetAccounting("ns/cj", a->blob), nullptr);
}

}  // namespace
}  // namespace cronledger::controller
