#include "store/view.h"

#include <gtest/gtest.h>

#include "store/test_util.h"

namespace cronledger::store {
namespace {

using model::WatchEventType;
using testing::CronJobEvent;
using testing::JobEvent;

std::optional<ObjectEntry> Entry(MemViewStore& v, model::ObjectKind kind, const std::string& ns,
                                 const std::string& name) {
  auto bytes = v.Get(view_key::Object(kind, ns, name));
  if (!bytes.ok() || !bytes->has_value()) return std::nullopt;
  auto e = DecodeObjectEntry(**bytes);
  return e.ok() ? std::optional<ObjectEntry>(*e) : std::nullopt;
}

bool HasOwnerIndex(MemViewStore& v, const std::string& ns, const std::string& owner,
                   const std::string& job) {
  auto bytes = v.Get(view_key::OwnerIndex(ns, owner, job));
  return bytes.ok() && bytes->has_value();
}

TEST(FoldTest, AddedAndModifiedUpsertDeletedRemoves) {
  MemViewStore v;
  ASSERT_TRUE(
      FoldWatchEvent(CronJobEvent(WatchEventType::kAdded, "ns", "a", "u1", "1"), 1, &v).ok());
  auto e = Entry(v, model::ObjectKind::kCronJob, "ns", "a");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->uid, "u1");
  EXPECT_EQ(e->source_seq, 1u);
  ASSERT_TRUE(
      FoldWatchEvent(CronJobEvent(WatchEventType::kModified, "ns", "a", "u1", "2"), 2, &v).ok());
  e = Entry(v, model::ObjectKind::kCronJob, "ns", "a");
  EXPECT_EQ(e->resource_version, "2");
  EXPECT_EQ(e->source_seq, 2u);
  ASSERT_TRUE(
      FoldWatchEvent(CronJobEvent(WatchEventType::kDeleted, "ns", "a", "u1", "3"), 3, &v).ok());
  EXPECT_FALSE(Entry(v, model::ObjectKind::kCronJob, "ns", "a"));
  // Only the resourceVersion of the watch remains.
  ASSERT_EQ(v.entries().size(), 1u);
  auto rv = DecodeResourceVersionEntry(v.entries().begin()->second);
  ASSERT_TRUE(rv.ok());
  EXPECT_EQ(*rv, (ResourceVersionEntry{"3", 3}));
}

TEST(FoldTest, DeletedOfAnotherIncarnationKeepsTheNewObject) {
  MemViewStore v;
  ASSERT_TRUE(
      FoldWatchEvent(CronJobEvent(WatchEventType::kAdded, "ns", "a", "new", "5"), 1, &v).ok());
  ASSERT_TRUE(
      FoldWatchEvent(CronJobEvent(WatchEventType::kDeleted, "ns", "a", "old", "6"), 2, &v).ok());
  auto e = Entry(v, model::ObjectKind::kCronJob, "ns", "a");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->uid, "new");
}

TEST(FoldTest, BookmarkOnlyMovesTheResourceVersion) {
  MemViewStore v;
  ASSERT_TRUE(
      FoldWatchEvent(CronJobEvent(WatchEventType::kAdded, "ns", "a", "u", "5"), 1, &v).ok());
  model::WatchEvent bookmark;
  bookmark.type = WatchEventType::kBookmark;
  bookmark.kind = model::ObjectKind::kCronJob;
  bookmark.api_version = "batch/v1";
  bookmark.resource_version = "99";
  ASSERT_TRUE(FoldWatchEvent(bookmark, 2, &v).ok());
  EXPECT_EQ(Entry(v, model::ObjectKind::kCronJob, "ns", "a")->resource_version, "5");
  auto rv = DecodeResourceVersionEntry(v.Get(view_key::Resource("batch/v1/CronJob"))->value_or(""));
  ASSERT_TRUE(rv.ok());
  EXPECT_EQ(rv->resource_version, "99");
  EXPECT_EQ(rv->source_seq, 2u);
}

TEST(FoldTest, JobsAreIndexedByControllerOwnerAndReindexedOnChange) {
  MemViewStore v;
  ASSERT_TRUE(
      FoldWatchEvent(JobEvent(WatchEventType::kAdded, "ns", "j1", "u", "1", "a"), 1, &v).ok());
  EXPECT_TRUE(HasOwnerIndex(v, "ns", "a", "j1"));
  ASSERT_TRUE(
      FoldWatchEvent(JobEvent(WatchEventType::kModified, "ns", "j1", "u", "2", "b"), 2, &v).ok());
  EXPECT_FALSE(HasOwnerIndex(v, "ns", "a", "j1"));
  EXPECT_TRUE(HasOwnerIndex(v, "ns", "b", "j1"));
  ASSERT_TRUE(
      FoldWatchEvent(JobEvent(WatchEventType::kModified, "ns", "j1", "u", "3", ""), 3, &v).ok());
  EXPECT_FALSE(HasOwnerIndex(v, "ns", "b", "j1"));
  ASSERT_TRUE(
      FoldWatchEvent(JobEvent(WatchEventType::kModified, "ns", "j1", "u", "4", "c"), 4, &v).ok());
  ASSERT_TRUE(
      FoldWatchEvent(JobEvent(WatchEventType::kDeleted, "ns", "j1", "u", "5", "c"), 5, &v).ok());
  EXPECT_FALSE(HasOwnerIndex(v, "ns", "c", "j1"));
  EXPECT_FALSE(Entry(v, model::ObjectKind::kJob, "ns", "j1"));
}

TEST(FoldTest, EntriesRoundTrip) {
  ObjectEntry e{model::ObjectKind::kJob, "batch/v1", "ns", "n", "u", "7", "o", "ou", 99};
  auto decoded = DecodeObjectEntry(EncodeObjectEntry(e));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(*decoded, e);
  EXPECT_FALSE(DecodeObjectEntry(EncodeObjectEntry(e).substr(1)).ok());
  ResourceVersionEntry r{"123", 4};
  EXPECT_EQ(*DecodeResourceVersionEntry(EncodeResourceVersionEntry(r)), r);
}

TEST(FoldTest, DescribeKeys) {
  EXPECT_EQ(view_key::Describe(view_key::Object(model::ObjectKind::kCronJob, "ns", "a")),
            "cronjob ns/a");
  EXPECT_EQ(view_key::Describe(view_key::OwnerIndex("ns", "a", "j")), "jobs-by-owner ns/a/j");
}

}  // namespace
}  // namespace cronledger::store
