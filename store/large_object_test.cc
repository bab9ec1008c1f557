// Large objects through the ledger (raw format 3, store/raw_chunks.h): versions of a 1 MiB
// CronJob read back byte for byte from every read path while the store grows by their changes,
// a store from before the `chunks` column family, damaged chunks, and retention of chunks.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <functional>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "store/ledger.h"
#include "store/raw_chunks.h"
#include "store/raw_codec.h"
#include "store/test_util.h"

namespace cronledger::store {
namespace {

using model::WatchEventType;
using testing::ManualClock;
using testing::TempDir;

constexpr size_t kAnnotationBytes = size_t{1} << 20;

// A CronJob with a 1 MiB annotation of random base64 text (LZ4 cannot shrink it), at resource
// version `rv` with a status that changes with it.
std::string BigCronJob(const std::string& annotation, int rv, const std::string& name = "big") {
  return R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":")" + name +
         R"(","namespace":"ns","uid":"u-)" + name + R"(","resourceVersion":")" +
         std::to_string(rv) + R"(","annotations":{"blob":")" + annotation +
         R"("}},"spec":{"schedule":"*/5 * * * *","jobTemplate":{"spec":{"template":{"spec":)"
         R"({"containers":[]}}}}},"status":{"lastScheduleTime":"2026-01-01T00:)" +
         (rv % 60 < 10 ? "0" : "") + std::to_string(rv % 60) + R"(:00Z"}})";
}

std::string Annotation(uint64_t seed, size_t bytes = kAnnotationBytes) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::mt19937_64 rng(seed);
  std::string out(bytes, '\0');
  for (char& c : out) c = kAlphabet[rng() % 64];
  return out;
}

model::WatchEvent BigEvent(const std::string& annotation, int rv, const std::string& name) {
  model::WatchEvent e =
      testing::CronJobEvent(rv == 1 ? WatchEventType::kAdded : WatchEventType::kModified, "ns",
                            name, "u-" + name, std::to_string(rv));
  e.raw = BigCronJob(annotation, rv, name);
  return e;
}

std::unique_ptr<Ledger> Open(const std::string& path, const WallClock* clock = nullptr) {
  LedgerOptions o;
  o.path = path;
  o.sync = SyncMode::kNone;
  o.clock = clock;
  return testing::OpenTestLedger(o);
}

void CommitVersion(Ledger* ledger, const std::string& annotation, int rv,
                   const std::string& name = "big") {
  UnitOfWork u;
  u.inputs.push_back(BigEvent(annotation, rv, name));
  auto r = ledger->Commit(std::move(u));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
}

uint64_t DirBytes(const std::string& path) {
  uint64_t total = 0;
  for (const auto& f : std::filesystem::recursive_directory_iterator(path)) {
    if (f.is_regular_file()) total += f.file_size();
  }
  return total;
}

// Every watch event's raw bytes by seq (ScanInputs with_raw), pruned ones absent.
std::map<uint64_t, std::string> RawBySeq(Ledger* ledger) {
  std::map<uint64_t, std::string> out;
  const Status s = ledger->ScanInputs(0, true, [&](const LogRecord& r) {
    const auto& ev = std::get<model::WatchEvent>(r.input);
    if (!r.raw_pruned) out[r.seq] = ev.raw;
    return true;
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

// Opens the store's RocksDB directly (the ledger closed) and runs `fn` with its families by name.
void WithRocks(
    const std::string& path,
    const std::function<void(rocksdb::DB*, std::map<std::string, rocksdb::ColumnFamilyHandle*>&)>&
        fn) {
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(rocksdb::DBOptions(), path, cfs, &handles, &db).ok());
  std::map<std::string, rocksdb::ColumnFamilyHandle*> by_name;
  for (size_t i = 0; i < names.size(); ++i) by_name[names[i]] = handles[i];
  fn(db, by_name);
  for (auto& [name, h] : by_name) {
    if (h != nullptr) {
      EXPECT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
    }
  }
  EXPECT_TRUE(db->Close().ok());
  delete db;
}

std::set<std::string> ChunkKeys(const std::string& path) {
  std::set<std::string> keys;
  WithRocks(path, [&](rocksdb::DB* db, auto& cfs) {
    ASSERT_EQ(cfs.count("chunks"), 1u);
    std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions(), cfs["chunks"]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) keys.insert(it->key().ToString());
  });
  return keys;
}

// The chunk keys the raw bytes `raw` are stored as.
std::set<std::string> ChunkKeysOf(const std::string& raw) {
  std::string prepared;
  PrepareRawValue(raw, &prepared);
  std::string_view value;
  std::vector<PreparedChunk> chunks;
  EXPECT_TRUE(SplitPreparedRawValue(prepared, &value, &chunks).ok());
  std::set<std::string> keys;
  for (const PreparedChunk& c : chunks) keys.insert(ChunkKey(c.id));
  return keys;
}

TEST(LargeObjectTest, SixtyVersionsOfAOneMiBObjectReadBackAndCostTheirChanges) {
  TempDir dir;
  const std::string annotation = Annotation(1);
  constexpr int kVersions = 60;
  auto ledger = Open(dir.path());
  const uint64_t empty = DirBytes(dir.path());
  for (int rv = 1; rv <= kVersions; ++rv) CommitVersion(ledger.get(), annotation, rv);
  // The first version stores the object (~1 MiB); each later one its chunk list (~2 KiB) and
  // the chunks around its two edits (~10 KiB each on average, 64 KiB at most): well under 5 MiB
  // for all sixty, where storing each version whole takes 60 MiB.
  const uint64_t grown = DirBytes(dir.path()) - empty;
  EXPECT_LT(grown, uint64_t{5} << 20) << grown;
  EXPECT_GT(grown, kAnnotationBytes);

  const auto raws = RawBySeq(ledger.get());
  ASSERT_EQ(raws.size(), static_cast<size_t>(kVersions));
  for (const auto& [seq, raw] : raws) {
    EXPECT_TRUE(raw == BigCronJob(annotation, static_cast<int>(seq))) << seq;
  }
  auto obj = ledger->GetObject(model::ObjectKind::kCronJob, "ns", "big");
  ASSERT_TRUE(obj.ok()) << obj.status().ToString();
  EXPECT_TRUE(obj->raw == BigCronJob(annotation, kVersions));
  auto cj = ledger->GetCronJob("ns", "big");
  ASSERT_TRUE(cj.ok()) << cj.status().ToString();
  EXPECT_EQ(cj->metadata.resource_version, std::to_string(kVersions));
  int scanned = 0;
  auto view = ledger->ScanViewObjects([&](ViewObject o) {
    EXPECT_TRUE(o.raw == BigCronJob(annotation, kVersions));
    ++scanned;
    return Status::Ok();
  });
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(scanned, 1);
  auto all = ledger->ListCronJobs();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->size(), 1u);
  size_t stored = 0;
  ASSERT_TRUE(ledger
                  ->ScanStoredInputs(0,
                                     [&](const StoredInput& in) {
                                       EXPECT_TRUE(in.has_raw);
                                       EXPECT_TRUE(in.raw == raws.at(in.seq)) << in.seq;
                                       ++stored;
                                       return true;
                                     })
                  .ok());
  EXPECT_EQ(stored, raws.size());

  // Reopened, the ledger knows no chunk: it looks them up instead of writing them again.
  ledger.reset();
  ledger = Open(dir.path());
  const uint64_t before = DirBytes(dir.path());
  CommitVersion(ledger.get(), annotation, kVersions + 1);
  EXPECT_LT(DirBytes(dir.path()) - before, uint64_t{256} << 10);
  obj = ledger->GetObject(model::ObjectKind::kCronJob, "ns", "big");
  ASSERT_TRUE(obj.ok()) << obj.status().ToString();
  EXPECT_TRUE(obj->raw == BigCronJob(annotation, kVersions + 1));
}

TEST(LargeObjectTest, ChunkingOffStoresWholeObjectsThatReadTheSame) {
  TempDir dir;
  const std::string annotation = Annotation(2);
  LedgerOptions o;
  o.path = dir.path();
  o.sync = SyncMode::kNone;
  o.chunk_large_raw = false;
  auto ledger = testing::OpenTestLedger(o);
  const uint64_t empty = DirBytes(dir.path());
  for (int rv = 1; rv <= 3; ++rv) CommitVersion(ledger.get(), annotation, rv);
  EXPECT_GT(DirBytes(dir.path()) - empty, 3 * kAnnotationBytes);
  ledger.reset();
  EXPECT_TRUE(ChunkKeys(dir.path()).empty());
  ledger = Open(dir.path());  // chunking on: both formats side by side
  CommitVersion(ledger.get(), annotation, 4);
  const auto raws = RawBySeq(ledger.get());
  ASSERT_EQ(raws.size(), 4u);
  for (const auto& [seq, raw] : raws) {
    EXPECT_TRUE(raw == BigCronJob(annotation, static_cast<int>(seq))) << seq;
  }
}

TEST(LargeObjectTest, AMissingOrDamagedChunkIsCorruptionNamingSeqAndChunk) {
  TempDir dir;
  const std::string annotation = Annotation(3);
  {
    auto ledger = Open(dir.path());
    CommitVersion(ledger.get(), annotation, 1);
  }
  const std::string victim = *ChunkKeysOf(BigCronJob(annotation, 1)).begin();
  ChunkId id;
  ASSERT_TRUE(ParseChunkKey(victim, &id));
  for (const bool remove : {false, true}) {
    WithRocks(dir.path(), [&](rocksdb::DB* db, auto& cfs) {
      rocksdb::WriteOptions wo;
      if (remove) {
        ASSERT_TRUE(db->Delete(wo, cfs["chunks"], victim).ok());
      } else {
        std::string other;
        EncodeRawValue(std::string(100, 'z'), &other);
        ASSERT_TRUE(db->Put(wo, cfs["chunks"], victim, other).ok());
      }
    });
    auto ledger = Open(dir.path());
    auto obj = ledger->GetObject(model::ObjectKind::kCronJob, "ns", "big");
    ASSERT_TRUE(obj.status().IsCorruption()) << obj.status().ToString();
    EXPECT_NE(obj.status().message().find("seq 1"), std::string::npos) << obj.status().ToString();
    EXPECT_NE(obj.status().message().find(ChunkIdHex(id)), std::string::npos)
        << obj.status().ToString();
    EXPECT_TRUE(ledger->ScanInputs(0, true, [](const LogRecord&) { return true; }).IsCorruption());
  }
}

TEST(LargeObjectTest, AStoreWithoutTheChunksFamilyOpensReadOnlyAndReadWrite) {
  TempDir dir;
  {
    auto ledger = Open(dir.path());
    UnitOfWork u;
    u.inputs.push_back(testing::CronJobEvent(WatchEventType::kAdded, "ns", "small", "u1", "1"));
    ASSERT_TRUE(ledger->Commit(std::move(u)).ok());
  }
  // As a build before raw format 3 left it.
  WithRocks(dir.path(), [](rocksdb::DB* db, auto& cfs) {
    ASSERT_TRUE(db->DropColumnFamily(cfs["chunks"]).ok());
    ASSERT_TRUE(db->DestroyColumnFamilyHandle(cfs["chunks"]).ok());
    cfs["chunks"] = nullptr;
  });
  {
    LedgerOptions o;
    o.path = dir.path();
    o.read_only = true;
    auto ro = Ledger::Open(o);
    ASSERT_TRUE(ro.ok()) << ro.status().ToString();
    auto cj = (*ro)->GetCronJob("ns", "small");
    ASSERT_TRUE(cj.ok()) << cj.status().ToString();
    EXPECT_EQ(RawBySeq(ro->get()).size(), 1u);
  }
  std::vector<std::string> names;
  ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir.path(), &names).ok());
  EXPECT_EQ(std::count(names.begin(), names.end(), "chunks"), 0);
  // A writer creates the family; a reader opened after it reads chunked values.
  const std::string annotation = Annotation(4);
  auto writer = Open(dir.path());
  CommitVersion(writer.get(), annotation, 2);
  LedgerOptions o;
  o.path = dir.path();
  o.read_only = true;
  auto ro = Ledger::Open(o);
  ASSERT_TRUE(ro.ok()) << ro.status().ToString();
  auto obj = (*ro)->GetObject(model::ObjectKind::kCronJob, "ns", "big");
  ASSERT_TRUE(obj.ok()) << obj.status().ToString();
  EXPECT_TRUE(obj->raw == BigCronJob(annotation, 2));
}

TEST(LargeObjectTest, RetentionDeletesOnlyUnreferencedChunks) {
  TempDir dir;
  const Time t0 = Time::FromUnix(1767225600, 0);
  ManualClock clock(t0);
  const std::string annotation = Annotation(5);
  const std::string other = Annotation(6);
  auto ledger = Open(dir.path(), &clock);
  // Old versions 1-10 (1-5 of another annotation), young versions 11-20: the view pins only 20.
  for (int rv = 1; rv <= 10; ++rv) CommitVersion(ledger.get(), rv <= 5 ? other : annotation, rv);
  clock.Advance(std::chrono::hours(2));
  for (int rv = 11; rv <= 20; ++rv) CommitVersion(ledger.get(), annotation, rv);
  // The same ledger instance throughout: it knows every chunk it wrote.
  RetentionOptions ro;
  ro.raw_max_age = std::chrono::hours(1);
  auto report = ledger->ApplyRetention(ro, clock.Now());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->raw_deleted, 10u);
  const auto raws = RawBySeq(ledger.get());
  ASSERT_EQ(raws.size(), 10u);
  for (const auto& [seq, raw] : raws) {
    EXPECT_TRUE(raw == BigCronJob(annotation, static_cast<int>(seq))) << seq;
  }
  // A version made of the deleted versions' chunks writes them again: the sweep made the ledger
  // forget that it had written them.
  CommitVersion(ledger.get(), other, 21);
  auto obj = ledger->GetObject(model::ObjectKind::kCronJob, "ns", "big");
  ASSERT_TRUE(obj.ok()) << obj.status().ToString();
  EXPECT_TRUE(obj->raw == BigCronJob(other, 21));
  ledger.reset();
  // The young versions' chunks and the new one's; those only old versions used are gone.
  std::set<std::string> young;
  for (int rv = 11; rv <= 20; ++rv) young.merge(ChunkKeysOf(BigCronJob(annotation, rv)));
  std::set<std::string> want = young;
  want.merge(ChunkKeysOf(BigCronJob(other, 21)));
  EXPECT_EQ(ChunkKeys(dir.path()), want);
}

TEST(LargeObjectTest, ASweepAfterAUnitLookedItsChunksUpMakesItWriteThem) {
  TempDir dir;
  const std::string annotation = Annotation(9, 256 << 10);
  {
    auto ledger = Open(dir.path());
    CommitVersion(ledger.get(), annotation, 1, "old");
    UnitOfWork u;  // a small second version: the first one's raw bytes are no longer pinned
    u.inputs.push_back(testing::CronJobEvent(WatchEventType::kModified, "ns", "old", "u-old", "2"));
    ASSERT_TRUE(ledger->Commit(std::move(u)).ok());
  }
  // Reopened, the ledger knows no chunk: the new unit finds the old version's chunks stored and
  // would not write them, but once it has queued, retention deletes that version and its chunks.
  auto ledger = Open(dir.path());
  UnitOfWork u;
  u.inputs.push_back(BigEvent(annotation, 1, "new"));
  Status retention;
  u.on_queued = [&] {
    RetentionOptions ro;
    ro.raw_max_age = std::chrono::nanoseconds(1);
    auto report = ledger->ApplyRetention(ro, Time::FromUnix(4102444800, 0));
    retention = !report.ok() ? report.status()
                : report->raw_deleted == 1
                    ? Status::Ok()
                    : Status::Internal("deleted " + std::to_string(report->raw_deleted));
  };
  ASSERT_TRUE(ledger->Commit(std::move(u)).ok());
  ASSERT_TRUE(retention.ok()) << retention.ToString();
  auto obj = ledger->GetObject(model::ObjectKind::kCronJob, "ns", "new");
  ASSERT_TRUE(obj.ok()) << obj.status().ToString();
  EXPECT_TRUE(obj->raw == BigCronJob(annotation, 1, "new"));
}

TEST(LargeObjectTest, RetentionWhileCommittingNeverLosesAChunk) {
  TempDir dir;
  auto ledger = Open(dir.path());
  // Two committers alternate between two annotations that retention keeps orphaning: their
  // chunks are swept and needed again while units look them up, prepare and write.
  const std::string annotations[] = {Annotation(7, 256 << 10), Annotation(8, 256 << 10)};
  constexpr int kVersions = 24;
  std::atomic<int> committing{2};
  auto committer = [&](const std::string& name) {
    for (int rv = 1; rv <= kVersions; ++rv) {
      CommitVersion(ledger.get(), annotations[rv % 2], rv, name);
    }
    committing.fetch_sub(1);
  };
  std::thread a(committer, "big-a");
  std::thread b(committer, "big-b");
  RetentionOptions ro;
  ro.raw_max_age = std::chrono::nanoseconds(1);
  const Time later = Time::FromUnix(4102444800, 0);  // every record is older than a nanosecond
  int runs = 0;
  while (committing.load() > 0 || runs == 0) {
    auto report = ledger->ApplyRetention(ro, later);
    EXPECT_TRUE(report.ok()) << report.status().ToString();  // no ASSERT: join the threads
    ++runs;
  }
  a.join();
  b.join();
  for (const auto& [seq, raw] : RawBySeq(ledger.get())) EXPECT_FALSE(raw.empty()) << seq;
  for (const char* name : {"big-a", "big-b"}) {
    auto obj = ledger->GetObject(model::ObjectKind::kCronJob, "ns", name);
    ASSERT_TRUE(obj.ok()) << obj.status().ToString();
    EXPECT_TRUE(obj->raw == BigCronJob(annotations[kVersions % 2], kVersions, name)) << name;
  }
  // A last sweep leaves exactly the chunks of the two objects' latest versions.
  ASSERT_TRUE(ledger->ApplyRetention(ro, later).ok());
  ledger.reset();
  std::set<std::string> want = ChunkKeysOf(BigCronJob(annotations[0], kVersions, "big-a"));
  want.merge(ChunkKeysOf(BigCronJob(annotations[0], kVersions, "big-b")));
  EXPECT_EQ(ChunkKeys(dir.path()), want);
}

}  // namespace
}  // namespace cronledger::store
