// The raw column family's value format (store/raw_codec.h): round trips of format 2, legacy
// values, corrupt frames, and a ledger whose raw bytes are stored compressed and read back
// transparently, also next to legacy (uncompressed) values of an older store.
#include "store/raw_codec.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <random>

#include "store/ledger.h"
#include "store/test_util.h"

namespace cronledger::store {
namespace {

using model::WatchEventType;
using testing::CronJobEvent;
using testing::TempDir;

// A CronJob or Job JSON made as large and repetitive as real objects (managedFields).
std::string Big(std::string json) {
  std::string filler;
  for (int i = 0; i < 40; ++i)
    filler += "f:metadata f:labels f:spec f:template " + std::to_string(i);
  json.insert(json.find("\"metadata\":{") + 12, "\"annotations\":{\"note\":\"" + filler + "\"},");
  return json;
}

std::string Decoded(std::string_view stored) {
  std::string out = "stale";
  const Status s = DecodeRawValue(stored, nullptr, &out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out;
}

TEST(RawCodecTest, Format2RoundTripsAndCompressesObjects) {
  const std::string object = Big(testing::CronJobJson("ns", "backup", "uid-1", "42"));
  std::string stored;
  EncodeRawValue(object, &stored);
  ASSERT_GE(stored.size(), 4u);
  EXPECT_EQ(static_cast<uint8_t>(stored[0]), kRawFrameMarker);
  EXPECT_EQ(static_cast<uint8_t>(stored[1]), kRawFormatV2);
  EXPECT_EQ(static_cast<uint8_t>(stored[2]), static_cast<uint8_t>(RawCodec::kLz4));
  EXPECT_LT(stored.size(), object.size() * 3 / 4);
  EXPECT_EQ(Decoded(stored), object);
  // Re-encoding into the same buffer replaces its contents.
  EncodeRawValue("{}", &stored);
  EXPECT_EQ(Decoded(stored), "{}");
}

TEST(RawCodecTest, IncompressibleAndEmptyBytesAreStoredAsTheyAre) {
  std::mt19937 rng(7);
  std::string noise(3000, '\0');
  for (char& c : noise) c = static_cast<char>(rng());
  for (const std::string& raw : {noise, std::string("{\"a\":1}"), std::string()}) {
    std::string stored;
    EncodeRawValue(raw, &stored);
    ASSERT_GE(stored.size(), 4u);
    EXPECT_EQ(static_cast<uint8_t>(stored[2]), static_cast<uint8_t>(RawCodec::kStored));
    EXPECT_EQ(stored.size(), raw.size() + 3 + (raw.size() >= 128 ? 2 : 1));
    EXPECT_EQ(Decoded(stored), raw);
  }
}

// Frozen bytes: format 2 must decode like this forever (a stored LZ4 block and a stored value).
TEST(RawCodecTest, Format2FixturesStayDecodable) {
  // LZ4 block of 20 x 'a': a literal 'a', then a match of offset 1 and length 14, then 5
  // literals (LZ4 ends with literals).
  const std::string lz4(
      "\x00\x02\x01\x14"
      "\x1a"
      "a\x01\x00"
      "\x50"
      "aaaaa",
      14);
  EXPECT_EQ(Decoded(lz4), std::string(20, 'a'));
  const std::string stored("\x00\x02\x00\x03{}\n", 7);
  EXPECT_EQ(Decoded(stored), "{}\n");
}

TEST(RawCodecTest, LegacyValuesAreTheBytesAsReceived) {
  EXPECT_EQ(Decoded(R"({"kind":"CronJob"})"), R"({"kind":"CronJob"})");
  EXPECT_EQ(Decoded(" \n{}"), " \n{}");
  EXPECT_EQ(Decoded(""), "");
}

TEST(RawCodecTest, DamagedFramesAreCorruption) {
  std::string good;
  EncodeRawValue(Big(testing::CronJobJson("ns", "a", "u", "1")), &good);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"marker only", std::string("\x00", 1)},
      {"unknown version", std::string("\x00\x03\x00\x00", 4)},
      {"unknown codec", std::string("\x00\x02\x07\x00", 4)},
      {"no length", std::string("\x00\x02\x01", 3)},
      {"stored, short payload", std::string("\x00\x02\x00\x05{}", 6)},
      {"stored, long payload", std::string("\x00\x02\x00\x01{}", 6)},
      {"implausible length", std::string("\x00\x02\x01\xff\xff\xff\xff\x0f", 8)},
      {"truncated LZ4 block", good.substr(0, good.size() - 10)},
      {"LZ4 block with a wrong length",
       [&] {
         std::string g = good;
         g[3] = static_cast<char>(static_cast<uint8_t>(g[3]) ^ 1);  // the length's low bits
         return g;
       }()},
  };
  for (const auto& [what, bytes] : cases) {
    std::string out;
    const Status s = DecodeRawValue(bytes, nullptr, &out);
    EXPECT_TRUE(s.IsCorruption()) << what << ": " << s.ToString();
  }
}

// The ledger writes format 2 and reads raw bytes back decompressed, through every read path; a
// raw value an older build wrote (plain JSON) reads back the same.
TEST(RawCodecTest, LedgerStoresRawBytesCompressedAndReadsEveryFormat) {
  TempDir dir;
  const std::string cj = Big(testing::CronJobJson("ns", "a", "ua", "1"));
  const std::string job = Big(testing::JobJson("ns", "a-1", "uj", "2", "a", "ua"));
  {
    LedgerOptions o;
    o.path = dir.path();
    auto ledger = std::move(Ledger::Open(o)).value();
    UnitOfWork unit;
    model::WatchEvent e1 = CronJobEvent(WatchEventType::kAdded, "ns", "a", "ua", "1");
    e1.raw = cj;
    model::WatchEvent e2 = testing::JobEvent(WatchEventType::kAdded, "ns", "a-1", "uj", "2", "a");
    e2.raw = job;
    unit.inputs = {e1, e2};
    PrepareUnit(&unit);  // as ingest does; the inputs stay as they are
    ASSERT_EQ(unit.stored_raw.size(), 2u);
    EXPECT_EQ(std::get<model::WatchEvent>(unit.inputs[0]).raw, cj);
    ASSERT_TRUE(ledger->Commit(std::move(unit)).ok());
    // Unprepared, and prepared with a stale stored_raw (Commit prepares it again).
    UnitOfWork more;
    more.inputs.push_back(CronJobEvent(WatchEventType::kAdded, "ns", "b", "ub", "3"));
    ASSERT_TRUE(ledger->Commit(more).ok());
    more.inputs[0] = CronJobEvent(WatchEventType::kAdded, "ns", "c", "uc", "4");
    more.stored_raw = {"stale", "entries"};
    ASSERT_TRUE(ledger->Commit(more).ok());
  }
  // What is on disk: format 2, smaller than the JSON. Then make seq 2 a legacy value.
  {
    std::vector<std::string> names;
    ASSERT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir.path(), &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(rocksdb::DBOptions(), dir.path(), cfs, &handles, &db).ok());
    rocksdb::ColumnFamilyHandle* raw_cf = nullptr;
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == "raw") raw_cf = handles[i];
    }
    ASSERT_NE(raw_cf, nullptr);
    std::string value;
    ASSERT_TRUE(
        db->Get(rocksdb::ReadOptions(), raw_cf, std::string("\0\0\0\0\0\0\0\1", 8), &value).ok());
    EXPECT_EQ(static_cast<uint8_t>(value[0]), kRawFrameMarker);
    EXPECT_LT(value.size(), cj.size());
    rocksdb::WriteOptions wo;
    wo.sync = true;
    ASSERT_TRUE(db->Put(wo, raw_cf, std::string("\0\0\0\0\0\0\0\2", 8), job).ok());
    for (auto* h : handles) ASSERT_TRUE(db->DestroyColumnFamilyHandle(h).ok());
    ASSERT_TRUE(db->Close().ok());
    delete db;
  }
  LedgerOptions o;
  o.path = dir.path();
  auto ledger = std::move(Ledger::Open(o)).value();
  auto a = ledger->GetObject(model::ObjectKind::kCronJob, "ns", "a");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->raw, cj);
  auto j = ledger->GetObject(model::ObjectKind::kJob, "ns", "a-1");
  ASSERT_TRUE(j.ok()) << j.status().ToString();
  EXPECT_EQ(j->raw, job);
  auto c = ledger->GetObject(model::ObjectKind::kCronJob, "ns", "c");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->raw, testing::CronJobJson("ns", "c", "uc", "4"));
  auto all = ledger->ListCronJobs();
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].metadata.resource_version, "1");
  std::vector<std::string> raws;
  ASSERT_TRUE(ledger
                  ->ScanInputs(0, true,
                               [&](const LogRecord& r) {
                                 raws.push_back(std::get<model::WatchEvent>(r.input).raw);
                                 return true;
                               })
                  .ok());
  EXPECT_EQ(raws, (std::vector<std::string>{cj, job, testing::CronJobJson("ns", "b", "ub", "3"),
                                            testing::CronJobJson("ns", "c", "uc", "4")}));
  auto rebuilt = ledger->Rebuild(false);
  ASSERT_TRUE(rebuilt.ok());
  EXPECT_TRUE(rebuilt->differences.empty());
}

}  // namespace
}  // namespace cronledger::store
