// The audit trail (replay/trail.h) over stores recorded by the real controller loop: a
// checkpoint verifies the intact store and its trail bundle; one record edited, deleted or
// inserted in a copy of the store or of the bundle is detected and named; records written
// after the checkpoint are not covered; retention leaves what remains verifiable.

#include "replay/trail.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <fstream>
#include <memory>

#include "model/sha256.h"
#include "replay/bundle.h"
#include "replay/merkle.h"
#include "store/keys.h"
#include "store/trail_store.h"
#include "tests/replay/sim_world.h"
#include "tests/testing/cli.h"
#include "tests/trail/lines.h"

namespace cronledger::replay::trail {
namespace {

using model::Sha256;
using testing::At;
using testing::SimWorld;

// Opens a store's RocksDB directly, as someone editing its files would.
class RawStore {
 public:
  explicit RawStore(const std::string& path) {
    std::vector<std::string> names;
    CL_CHECK(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
    rocksdb::DB* db = nullptr;
    CL_CHECK(rocksdb::DB::Open(rocksdb::DBOptions(), path, cfs, &handles_, &db).ok());
    db_.reset(db);
    for (size_t i = 0; i < names.size(); ++i) by_name_[names[i]] = handles_[i];
  }
  ~RawStore() {
    for (auto* h : handles_) CL_CHECK(db_->DestroyColumnFamilyHandle(h).ok());
  }
  std::string Get(const std::string& cf, uint64_t seq) {
    std::string v;
    CL_CHECK(db_->Get(rocksdb::ReadOptions(), by_name_.at(cf), store::keys::Be64(seq), &v).ok());
    return v;
  }
  void Put(const std::string& cf, uint64_t seq, const std::string& v) {
    CL_CHECK(db_->Put(rocksdb::WriteOptions(), by_name_.at(cf), store::keys::Be64(seq), v).ok());
  }
  void DeleteKey(const std::string& cf, const std::string& key) {
    CL_CHECK(db_->Delete(rocksdb::WriteOptions(), by_name_.at(cf), key).ok());
  }
  void Delete(const std::string& cf, uint64_t seq) {
    CL_CHECK(db_->Delete(rocksdb::WriteOptions(), by_name_.at(cf), store::keys::Be64(seq)).ok());
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::map<std::string, rocksdb::ColumnFamilyHandle*> by_name_;
};

std::unique_ptr<store::Ledger> OpenStore(const std::string& path) {
  store::LedgerOptions lo;
  lo.path = path;
  lo.sync = store::SyncMode::kNone;
  lo.create_if_missing = false;
  auto l = store::Ledger::Open(lo);
  CL_CHECK(l.ok());
  return std::move(*l);
}

// The Merkle tree head of every decision's leaf, computed from the records (replay/merkle.h).
std::optional<Hash> DecisionTreeHead(store::Ledger& ledger) {
  merkle::CompactRange tree;
  CL_CHECK(ledger
               .ScanDecisionBytes(1,
                                  [&](uint64_t seq, std::string_view bytes) {
                                    tree.Append(DecisionLeaf(seq, bytes));
                                    return true;
                                  })
               .ok());
  return tree.Root();
}

class TrailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    world_ = std::make_unique<SimWorld>(At(9, 59, 30), std::chrono::minutes(12));
    world_->Apply(testing::Manifest("forbid", "*/5 * * * *", {{"concurrencyPolicy", "Forbid"}}));
    world_->Apply(testing::Manifest("plain", "*/5 * * * *"));
    world_->RunUntil(At(10, 31));
    CL_CHECK(world_->ledger().Backup(world_->dir().Sub("before")).ok());  // no trail yet
    UpdateOptions o;
    o.mark_every = 8;
    auto c = UpdateTrail(world_->ledger(), o, At(10, 31));
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    checkpoint_ = *c;
    ASSERT_EQ(checkpoint_.chains.size(), 2u);
    ASSERT_GT(checkpoint_.chains[0].records, 20u);
    ASSERT_GT(checkpoint_.chains[1].records, 20u);
  }

  // A copy of the store (what an auditor is handed).
  std::string CopyStore(const std::string& name) {
    const std::string dir = world_->dir().Sub(name);
    CL_CHECK(world_->ledger().Backup(dir).ok());
    return dir;
  }

  Result<TrailVerdict> VerifyCopy(const std::string& dir) {
    auto ledger = OpenStore(dir);
    return VerifyStore(*ledger, checkpoint_);
  }

  std::string Bundle() {
    auto b = ExportTrailBundle(world_->ledger(), 1, "");
    CL_CHECK(b.ok());
    return *b;
  }

  const ChainVerdict& Chain(const TrailVerdict& v, std::string_view log) {
    return v.chains[log == store::trail::kInputsLog ? 0 : 1];
  }

  std::unique_ptr<SimWorld> world_;
  Checkpoint checkpoint_;
};

TEST_F(TrailTest, IntactStoreAndBundleVerify) {
  auto v = VerifyStore(world_->ledger(), checkpoint_);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_TRUE(v->intact());
  EXPECT_EQ(v->chains[0].verified, checkpoint_.chains[0].records);
  EXPECT_EQ(v->chains[1].verified, checkpoint_.chains[1].records);
  auto b = VerifyBundle(Bundle(), checkpoint_);
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_TRUE(b->intact()) << VerdictJson(*b).dump();
  EXPECT_TRUE(b->notes.empty());
  // A trail bundle replays like any bundle.
  EXPECT_TRUE(ReadBundle(Bundle()).ok());
}

TEST_F(TrailTest, CheckpointIsIncrementalAndEqualsAFreshChain) {
  const std::string before = world_->dir().Sub("before");
  world_->RunUntil(At(11, 2));
  UpdateOptions o;
  o.mark_every = 8;
  auto later = UpdateTrail(world_->ledger(), o, At(11, 2));
  ASSERT_TRUE(later.ok());
  EXPECT_GT(later->chains[1].records, checkpoint_.chains[1].records);
  // Records after the first checkpoint are not covered by it, and are not failures.
  auto v = VerifyStore(world_->ledger(), checkpoint_);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->intact()) << VerdictJson(*v).dump();
  EXPECT_EQ(v->chains[1].not_covered, later->chains[1].records - checkpoint_.chains[1].records);
  // The copy taken before the first update has no trail: chaining it from scratch gives the
  // first checkpoint's heads and marks.
  auto old = OpenStore(before);
  auto fresh = UpdateTrail(*old, o, At(11, 2));
  ASSERT_TRUE(fresh.ok());
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(Hex(fresh->chains[i].head), Hex(checkpoint_.chains[i].head));
    EXPECT_EQ(fresh->chains[i].records, checkpoint_.chains[i].records);
    EXPECT_EQ(fresh->chains[i].marks, checkpoint_.chains[i].marks);
    ASSERT_TRUE(fresh->chains[i].tree_head.has_value());
    EXPECT_EQ(fresh->chains[i].tree_head, checkpoint_.chains[i].tree_head);
  }
  // The tree grown across two updates is the tree of every decision's leaf, computed apart.
  EXPECT_EQ(later->chains[1].tree_head, DecisionTreeHead(world_->ledger()));
}

// The chain and the tree of a checkpoint are of the same records: verify-trail refuses a
// checkpoint whose treeHead is another tree's (proofs against it would not be about this trail),
// and still checks a checkpoint saved before checkpoints carried one.
TEST_F(TrailTest, VerifyChecksTheTreeHeadWithTheChain) {
  Checkpoint other = checkpoint_;
  other.chains[1].tree_head = checkpoint_.chains[0].tree_head;
  auto v = VerifyStore(world_->ledger(), other);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_FALSE(v->intact());
  EXPECT_TRUE(Chain(*v, "inputs").intact);
  const ChainVerdict& d = Chain(*v, "decisions");
  ASSERT_TRUE(d.problem.has_value());
  EXPECT_EQ(ProblemKindName(d.problem->kind), "tree-head") << VerdictJson(*v).dump();
  auto bundle = VerifyBundle(Bundle(), other);
  ASSERT_TRUE(bundle.ok());
  EXPECT_EQ(ProblemKindName(Chain(*bundle, "decisions").problem->kind), "tree-head");

  Checkpoint older = checkpoint_;
  for (ChainHead& c : older.chains) c.tree_head.reset();
  auto parsed = ParseCheckpoint(CheckpointJson(older).dump());
  ASSERT_TRUE(parsed.ok());
  EXPECT_FALSE(parsed->chains[0].tree_head.has_value());
  auto ok = VerifyStore(world_->ledger(), *parsed);
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok->intact()) << VerdictJson(*ok).dump();
}

// A trail kept before it kept its Merkle tree has no tree key: the next update rebuilds the tree
// from the kept entries, stores it, and its head is the tree of every leaf.
TEST_F(TrailTest, ATrailWithoutItsTreeIsRebuiltFromTheEntries) {
  const std::optional<Hash> want = checkpoint_.chains[1].tree_head;
  ASSERT_TRUE(want.has_value());
  world_->CloseLedger();
  const std::string data = world_->data_dir();
  {
    RawStore raw(data);
    for (const std::string log : {"inputs", "decisions"}) {
      raw.DeleteKey("meta", store::trail::ChainPrefix("local", log) + "t");
    }
  }
  auto ledger = OpenStore(data);
  for (const std::string log : {"inputs", "decisions"}) {
    EXPECT_TRUE(
        ledger->GetTrail(store::trail::ChainPrefix("local", log) + "t").status().IsNotFound());
  }
  UpdateOptions o;
  o.mark_every = 8;
  auto upgraded = UpdateTrail(*ledger, o, At(11, 2));
  ASSERT_TRUE(upgraded.ok()) << upgraded.status().ToString();
  EXPECT_EQ(upgraded->chains[0].tree_head, checkpoint_.chains[0].tree_head);
  EXPECT_EQ(upgraded->chains[1].tree_head, want);
  EXPECT_EQ(upgraded->chains[1].tree_head, DecisionTreeHead(*ledger));
  // The rebuilt tree is kept; the chain is untouched.
  for (const std::string log : {"inputs", "decisions"}) {
    EXPECT_TRUE(ledger->GetTrail(store::trail::ChainPrefix("local", log) + "t").ok()) << log;
  }
  EXPECT_EQ(Hex(upgraded->chains[1].head), Hex(checkpoint_.chains[1].head));
}

struct Tamper {
  const char* name;
  const char* log;   // "inputs" | "decisions"
  const char* kind;  // "altered" | "removed" | "inserted"
};

class StoreTamperTest : public TrailTest, public ::testing::WithParamInterface<Tamper> {};

TEST_P(StoreTamperTest, IsDetectedAndLocated) {
  const Tamper t = GetParam();
  const std::string dir = CopyStore("copy");
  const uint64_t target = 13;
  {
    RawStore raw(dir);
    std::string v = raw.Get(t.log, target);
    if (std::string_view(t.kind) == "altered") {
      v.back() = static_cast<char>(v.back() ^ 1);
      raw.Put(t.log, target, v);
    } else if (std::string_view(t.kind) == "removed") {
      raw.Delete(t.log, target);
    } else {
      // Insert before `target`: every later record moves up one seq.
      const uint64_t last = std::string_view(t.log) == "inputs" ? checkpoint_.chains[0].last_seq
                                                                : checkpoint_.chains[1].last_seq;
      for (uint64_t s = last; s >= target; --s) raw.Put(t.log, s + 1, raw.Get(t.log, s));
      raw.Put(t.log, target, raw.Get(t.log, target + 3));
    }
  }
  auto v = VerifyCopy(dir);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_FALSE(v->intact());
  const ChainVerdict& c = Chain(*v, t.log);
  ASSERT_TRUE(c.problem.has_value()) << VerdictJson(*v).dump();
  EXPECT_EQ(ProblemKindName(c.problem->kind), t.kind) << VerdictJson(*v).dump();
  EXPECT_EQ(c.problem->seq, target);
  EXPECT_NE(c.problem->record.find(std::to_string(target)), std::string::npos);
  // The other log is untouched.
  EXPECT_TRUE(Chain(*v, std::string_view(t.log) == "inputs" ? "decisions" : "inputs").intact);
}

INSTANTIATE_TEST_SUITE_P(Trail, StoreTamperTest,
                         ::testing::Values(Tamper{"EditInput", "inputs", "altered"},
                                           Tamper{"DeleteInput", "inputs", "removed"},
                                           Tamper{"InsertInput", "inputs", "inserted"},
                                           Tamper{"EditDecision", "decisions", "altered"},
                                           Tamper{"DeleteDecision", "decisions", "removed"},
                                           Tamper{"InsertDecision", "decisions", "inserted"}),
                         [](const ::testing::TestParamInfo<Tamper>& i) {
                           return std::string(i.param.name);
                         });

using trail_test::Lines;

// Rejoins lines, with the end line's checksum recomputed (an editor would fix it).
std::string Join(std::vector<std::string> lines) {
  lines.pop_back();
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  auto end = model::Json{{"end", true}, {"sha256", Sha256::Hex(Sha256::Hash(out))}};
  return out + model::DumpJson(end) + "\n";
}

size_t LineOf(const std::vector<std::string>& lines, const std::string& field, uint64_t seq) {
  for (size_t i = 0; i < lines.size(); ++i) {
    auto j = model::ParseJson(lines[i]);
    if (j.ok() && j->contains(field) && (*j)[field] == seq) return i;
  }
  CL_CHECK(false && "no such line");
  return 0;
}

class BundleTamperTest : public TrailTest, public ::testing::WithParamInterface<Tamper> {};

TEST_P(BundleTamperTest, IsDetectedAndLocated) {
  const Tamper t = GetParam();
  const std::string field = std::string_view(t.log) == "inputs" ? "input" : "decision";
  const uint64_t target = 13;
  std::vector<std::string> lines = Lines(Bundle());
  const size_t at = LineOf(lines, field, target);
  if (std::string_view(t.kind) == "altered") {
    auto j = *model::ParseJson(lines[at]);
    std::string bytes = *Base64Decode(j["record"].get<std::string>());
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 1);
    j["record"] = Base64Encode(bytes);
    lines[at] = model::DumpJson(j);
  } else if (std::string_view(t.kind) == "removed") {
    lines.erase(lines.begin() + static_cast<long>(at));
  } else {
    // A copy of a later record, without a leaf, given the seq before the target's.
    auto j = *model::ParseJson(lines[at + 2]);
    j[field] = target;
    j.erase("leaf");
    lines.insert(lines.begin() + static_cast<long>(at), model::DumpJson(j));
  }
  auto v = VerifyBundle(Join(lines), checkpoint_);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_FALSE(v->intact());
  const ChainVerdict& c = Chain(*v, t.log);
  ASSERT_TRUE(c.problem.has_value()) << VerdictJson(*v).dump();
  EXPECT_EQ(ProblemKindName(c.problem->kind), t.kind) << VerdictJson(*v).dump();
  EXPECT_EQ(c.problem->seq, target);
}

INSTANTIATE_TEST_SUITE_P(Trail, BundleTamperTest,
                         ::testing::Values(Tamper{"EditInput", "inputs", "altered"},
                                           Tamper{"DeleteInput", "inputs", "removed"},
                                           Tamper{"InsertInput", "inputs", "inserted"},
                                           Tamper{"EditDecision", "decisions", "altered"},
                                           Tamper{"DeleteDecision", "decisions", "removed"},
                                           Tamper{"InsertDecision", "decisions", "inserted"}),
                         [](const ::testing::TestParamInfo<Tamper>& i) {
                           return std::string(i.param.name);
                         });

TEST_F(TrailTest, RetentionKeepsWhatRemainsVerifiable) {
  store::RetentionOptions r;
  r.log_max_age = std::chrono::minutes(1);
  r.raw_max_age = std::chrono::minutes(1);
  // A record written after the update is not chained: retention leaves it.
  world_->RunUntil(At(10, 36));
  // The ledger stamps records with the system clock: retention runs an hour after the last one.
  Time last_recorded;
  ASSERT_TRUE(world_->ledger()
                  .ScanInputs(1, false,
                              [&](const store::LogRecord& rec) {
                                last_recorded = std::max(last_recorded, rec.recorded_at);
                                return true;
                              })
                  .ok());
  auto report = world_->ledger().ApplyRetention(r, last_recorded.Add(std::chrono::hours(1)));
  ASSERT_TRUE(report.ok());
  EXPECT_GT(report->inputs_deleted, 0u);
  EXPECT_GT(report->unchained, 0u);
  auto v = VerifyStore(world_->ledger(), checkpoint_);
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v->intact()) << VerdictJson(*v).dump();
  EXPECT_EQ(v->chains[0].removed_by_retention, report->inputs_deleted);
  EXPECT_TRUE(VerifyBundle(Bundle(), checkpoint_)->intact());
  // Editing a record that survived retention is still found.
  const std::string dir = CopyStore("copy");
  uint64_t pinned_seq = 0;
  ASSERT_TRUE(world_->ledger()
                  .ScanInputs(1, false,
                              [&](const store::LogRecord& rec) {
                                pinned_seq = rec.seq;
                                return false;
                              })
                  .ok());
  {
    RawStore raw(dir);
    std::string value = raw.Get("inputs", pinned_seq);
    value.back() = static_cast<char>(value.back() ^ 1);
    raw.Put("inputs", pinned_seq, value);
  }
  auto edited = VerifyCopy(dir);
  ASSERT_TRUE(edited.ok());
  ASSERT_TRUE(edited->chains[0].problem.has_value());
  EXPECT_EQ(edited->chains[0].problem->seq, pinned_seq);
}

TEST_F(TrailTest, CliExitCodesAndMessages) {
  world_->CloseLedger();
  const std::string data = world_->data_dir();
  const std::string cp = world_->dir().Sub("checkpoint.json");
  auto made = cli_test::Cli("checkpoint --data-dir '" + data + "' -o json > '" + cp + "'");
  ASSERT_EQ(made.exit_code, 0);
  auto ok = cli_test::Cli("verify-trail --data-dir '" + data + "' --checkpoint '" + cp + "'");
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_NE(ok.out.find("trail intact"), std::string::npos) << ok.out;
  const std::string bundle = world_->dir().Sub("trail.bundle");
  ASSERT_EQ(cli_test::Cli("export --trail --data-dir '" + data + "' > '" + bundle + "'").exit_code,
            0);
  EXPECT_EQ(
      cli_test::Cli("verify-trail --bundle '" + bundle + "' --checkpoint '" + cp + "'").exit_code,
      0);
  {
    RawStore raw(data);
    raw.Delete("decisions", 7);
  }
  auto bad = cli_test::Cli("verify-trail --data-dir '" + data + "' --checkpoint '" + cp + "'");
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.out.find("local decisions: removed: decision 7"), std::string::npos) << bad.out;
  EXPECT_NE(bad.out.find("trail NOT intact"), std::string::npos) << bad.out;
  // Usage errors exit 2.
  EXPECT_EQ(cli_test::Cli("verify-trail --data-dir '" + data + "'").exit_code, 2);
  EXPECT_EQ(
      cli_test::Cli("verify-trail --data-dir x --bundle y --checkpoint '" + cp + "'").exit_code, 2);
  EXPECT_EQ(cli_test::Cli("verify-trail --data-dir '" + data + "' --checkpoint '" + bundle + "'")
                .exit_code,
            2);
  EXPECT_EQ(cli_test::Cli("checkpoint --data-dir '" + data + "' -o yaml").exit_code, 2);
}

}  // namespace
}  // namespace cronledger::replay::trail
