#include "store/view.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <random>

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

// The entry encoders write what RecordWriter writes (the v1 layout), also for multi-byte
// lengths and sequence numbers, and every truncation of an entry is rejected.
TEST(FoldTest, EntriesAreEncodedAsRecordWriterWritesThem) {
  for (const uint64_t seq : {0ull, 127ull, 128ull, 300ull, 1ull << 35, ~0ull}) {
    for (const size_t len : {0u, 1u, 127u, 128u, 20000u}) {
      const std::string s(len, 'x');
      ObjectEntry e{model::ObjectKind::kCronJob, "batch/v1", s, "n", s, "7", "", s, seq};
      std::string want;
      model::RecordWriter w(&want);
      w.Byte(1);
      w.Byte(static_cast<uint8_t>(e.kind));
      for (const std::string* f : {&e.api_version, &e.namespace_, &e.name, &e.uid,
                                   &e.resource_version, &e.owner_name, &e.owner_uid}) {
        w.Bytes(*f);
      }
      w.Varint(seq);
      const std::string got = EncodeObjectEntry(e);
      EXPECT_EQ(got, want) << seq << " " << len;
      EXPECT_EQ(*DecodeObjectEntry(got), e);
      std::string want_rv;
      model::RecordWriter rv(&want_rv);
      rv.Byte(1);
      rv.Bytes(s);
      rv.Varint(seq);
      EXPECT_EQ(EncodeResourceVersionEntry({s, seq}), want_rv);
      // The fold reads a prior entry with its own decoder: a truncated one is corrupt.
      if (len == 128 && seq == 300) {
        for (size_t cut = 0; cut < got.size(); ++cut) {
          FlatViewStore flat;
          flat.Put(view_key::Object(model::ObjectKind::kCronJob, s, "n"), got.substr(0, cut));
          model::WatchEvent ev = CronJobEvent(model::WatchEventType::kModified, s, "n", "u", "8");
          EXPECT_TRUE(flat.Fold(model::WatchEventRef::Of(ev), 9).IsCorruption()) << cut;
        }
      }
    }
  }
}

TEST(FoldTest, DescribeKeys) {
  EXPECT_EQ(view_key::Describe(view_key::Object(model::ObjectKind::kCronJob, "ns", "a")),
            "cronjob ns/a");
  EXPECT_EQ(view_key::Describe(view_key::OwnerIndex("ns", "a", "j")), "jobs-by-owner ns/a/j");
}

// The hash-map view (rebuild's scratch) folds to exactly the ordered view's entries.
TEST(FoldTest, FlatViewEqualsMemView) {
  MemViewStore mem;
  FlatViewStore flat;
  uint64_t seq = 0;
  auto fold = [&](const model::WatchEvent& ev) {
    ++seq;
    ASSERT_TRUE(FoldWatchEvent(ev, seq, &mem).ok());
    ASSERT_TRUE(FoldWatchEvent(ev, seq, &flat).ok());
  };
  for (int i = 0; i < 50; ++i) {
    const std::string cj = "cj" + std::to_string(i % 7);
    const std::string job = cj + "-" + std::to_string(i);
    fold(CronJobEvent(i < 7 ? WatchEventType::kAdded : WatchEventType::kModified, "ns", cj,
                      "u-" + cj, std::to_string(seq + 1)));
    fold(JobEvent(WatchEventType::kAdded, "ns", job, "u-" + job, std::to_string(seq + 1), cj));
    // Re-owned by another CronJob, then deleted every third time (owner index moves / goes).
    fold(JobEvent(WatchEventType::kModified, "ns", job, "u-" + job, std::to_string(seq + 1),
                  "cj" + std::to_string((i + 1) % 7)));
    if (i % 3 == 0) {
      fold(JobEvent(WatchEventType::kDeleted, "ns", job, "u-" + job, std::to_string(seq + 1), cj));
    }
    if (i % 5 == 0) {  // a DELETED of another incarnation leaves the object
      fold(JobEvent(WatchEventType::kDeleted, "ns", job, "other-uid", std::to_string(seq + 1), cj));
    }
  }
  const auto sorted = flat.SortedEntries();
  ASSERT_EQ(sorted.size(), mem.entries().size());
  ASSERT_EQ(flat.size(), mem.entries().size());
  auto it = mem.entries().begin();
  for (const auto& [key, value] : sorted) {
    EXPECT_EQ(key, it->first);
    EXPECT_EQ(value, it->second) << view_key::Describe(key);
    ++it;
  }
  // Reads see the last write, including after deletes.
  std::string value;
  auto got = flat.GetInto(view_key::Object(model::ObjectKind::kJob, "ns", "cj0-0"), &value);
  ASSERT_TRUE(got.ok());
  EXPECT_FALSE(*got);
  got = flat.GetInto(view_key::Object(model::ObjectKind::kJob, "ns", "cj1-1"), &value);
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE(*got);
  EXPECT_EQ(DecodeObjectEntry(value)->owner_name, "cj2");
}

// The open-addressing table against an ordered map: random puts (new keys, updates that grow and
// shrink values) and deletes (tombstones, reused entries) over enough keys to grow it many times.
TEST(FoldTest, FlatViewStoreMatchesAnOrderedMap) {
  FlatViewStore flat;
  std::map<std::string, std::string> want;
  std::mt19937 rng(11);
  std::string value;
  for (int i = 0; i < 40000; ++i) {
    // Appended rather than `"k" + std::to_string(...)`: g++ 12 at -O3 reports a false
    // -Wrestrict on that operator+ (GCC bug 105329).
    std::string key = "k";
    key += std::to_string(rng() % 6000);
    key.append(rng() % 20, 'x');
    const uint32_t op = rng() % 10;
    if (op < 6) {
      const std::string v(rng() % 120, static_cast<char>('a' + i % 26));
      flat.Put(key, v);
      want[key] = v;
    } else if (op < 9) {
      flat.Delete(key);
      want.erase(key);
    }
    auto got = flat.GetInto(key, &value);
    ASSERT_TRUE(got.ok());
    auto it = want.find(key);
    ASSERT_EQ(*got, it != want.end()) << key;
    if (*got) {
      ASSERT_EQ(value, it->second);
    }
  }
  ASSERT_EQ(flat.size(), want.size());
  const auto sorted = flat.SortedEntries();
  ASSERT_EQ(sorted.size(), want.size());
  auto it = want.begin();
  for (const auto& [key, v] : sorted) {
    EXPECT_EQ(key, it->first);
    EXPECT_EQ(v, it->second);
    ++it;
  }
  EXPECT_FALSE(*flat.Get("absent"));
}

// FlatViewStore::Fold (rebuild's fold) against FoldWatchEvent into the ordered view, on random
// streams that hit every branch: both kinds and two API versions, bookmarks, events without a
// resourceVersion, DELETED with the stored uid, another uid or none, Jobs re-owned, losing and
// regaining their owner, CronJobs that carry owner fields, and writes through the generic
// interface in between (some events folded with FoldWatchEvent, the resourceVersion entries
// deleted now and then), which Fold's kept entries must notice.
TEST(FoldTest, FlatFoldEqualsTheGenericFold) {
  std::mt19937 rng(7);
  auto pick = [&rng](std::initializer_list<const char*> from) {
    return std::string(*(from.begin() + rng() % from.size()));
  };
  for (int round = 0; round < 20; ++round) {
    MemViewStore mem;
    FlatViewStore flat;
    // Rebuild reserves an estimate first; some rounds reserve too few, some plenty, mid-stream.
    if (round % 3 == 1) flat.Reserve(round % 2 == 0 ? 8 : 5000);
    for (uint64_t seq = 1; seq <= 3000; ++seq) {
      if (round % 3 == 2 && seq == 1500) flat.Reserve(100 * static_cast<size_t>(round));
      model::WatchEvent ev;
      const uint32_t type = rng() % 10;
      ev.type = type < 3   ? WatchEventType::kAdded
                : type < 7 ? WatchEventType::kModified
                : type < 9 ? WatchEventType::kDeleted
                           : WatchEventType::kBookmark;
      ev.kind = rng() % 2 == 0 ? model::ObjectKind::kCronJob : model::ObjectKind::kJob;
      ev.api_version = rng() % 8 == 0 ? "batch/v1beta1" : "batch/v1";
      ev.resource_version = rng() % 10 == 0 ? "" : std::to_string(seq);
      if (ev.type != WatchEventType::kBookmark) {
        ev.namespace_ = pick({"ns", "prod", "a-much-longer-namespace-name"});
        // Now and then a name too long for a one-byte length (the entry is then encoded field
        // by field, not copied from the record).
        ev.name =
            "obj-" + std::to_string(rng() % 40) + (rng() % 16 == 0 ? std::string(130, 'x') : "");
        ev.uid = ev.type == WatchEventType::kDeleted && rng() % 4 == 0
                     ? ""
                     : "uid-" + std::to_string(rng() % 3);
        ev.owner_name = pick({"", "cj-a", "cj-b", "cj-c"});
        ev.owner_uid = ev.owner_name.empty() ? "" : "uid-" + ev.owner_name;
      }
      const uint32_t how = rng() % 50;
      if (how == 0) {
        flat.Delete(view_key::Resource("batch/v1/" + std::string(model::ObjectKindName(ev.kind))));
        mem.Delete(view_key::Resource("batch/v1/" + std::string(model::ObjectKindName(ev.kind))));
      }
      // The object's entry before and after the generic fold: what Fold's effect must say.
      const std::string object_key = view_key::Object(ev.kind, ev.namespace_, ev.name);
      auto entry_of_mem = [&]() -> std::optional<ObjectEntry> {
        auto it = mem.entries().find(object_key);
        if (ev.type == WatchEventType::kBookmark || it == mem.entries().end()) return std::nullopt;
        return *DecodeObjectEntry(it->second);
      };
      const std::optional<ObjectEntry> before = entry_of_mem();
      ASSERT_TRUE(FoldWatchEvent(ev, seq, &mem).ok());
      const std::optional<ObjectEntry> after = entry_of_mem();
      // Fold as Rebuild calls it (the event decoded from its record, the fields then views into
      // it, encoded_fields set) or with the fields viewing the WatchEvent's strings, and with or
      // without its effect.
      const std::string record = model::EncodeInput(ev);
      model::WatchEventRef decoded;
      ASSERT_TRUE(model::DecodeWatchEventRef(record, &decoded).ok());
      FlatViewStore::FoldEffect effect;
      effect.left_owner = "stale";  // reset by Fold
      ASSERT_TRUE(how < 5    ? FoldWatchEvent(ev, seq, &flat).ok()
                  : how < 12 ? flat.Fold(model::WatchEventRef::Of(ev), seq).ok()
                  : how < 20 ? flat.Fold(model::WatchEventRef::Of(ev), seq, &effect).ok()
                             : flat.Fold(decoded, seq, &effect).ok());
      if (how >= 12) {
        EXPECT_EQ(effect.changed, before != after) << "round " << round << " seq " << seq;
        EXPECT_EQ(effect.written, after && after->source_seq == seq) << "seq " << seq;
        const bool left = ev.kind == model::ObjectKind::kJob && before &&
                          !before->owner_name.empty() &&
                          (!after || after->owner_name != before->owner_name);
        EXPECT_EQ(effect.left_owner, left ? before->owner_name : "") << "seq " << seq;
      }
      if (seq % 500 == 0 || seq == 3000) {
        const auto sorted = flat.SortedEntries();
        ASSERT_EQ(sorted.size(), mem.entries().size()) << "round " << round << " seq " << seq;
        ASSERT_EQ(flat.size(), sorted.size());
        auto it = mem.entries().begin();
        for (const auto& [key, value] : sorted) {
          ASSERT_EQ(key, it->first) << "round " << round << " seq " << seq;
          ASSERT_EQ(value, it->second) << view_key::Describe(key) << " round " << round;
          ++it;
        }
      }
    }
  }
}

}  // namespace
}  // namespace cronledger::store
