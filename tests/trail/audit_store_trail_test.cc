// The audit trail of an audit store (`cronledger audit-store`, one ledger copy per source) through
// the CLI: `checkpoint` prints every copy's heads labelled with their source; `verify-trail`
// checks the store and a trail bundle set exported from it; one record edited, deleted or inserted
// in one source's copy or section, and a whole copy removed, are detected and named with their
// source; `export` writes a bundle set that `replay --verify` checks source by source.

#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "model/json.h"
#include "model/sha256.h"
#include "replay/bundle.h"
#include "store/keys.h"
#include "tests/replay/sim_world.h"
#include "tests/testing/cli.h"
#include "tests/trail/lines.h"

namespace cronledger::replay {
namespace {

using cli_test::Cli;
using cli_test::CliResult;
using testing::At;
using testing::SimWorld;
using trail_test::Lines;

model::Json Json(const CliResult& r) {
  auto j = model::ParseJson(r.out);
  EXPECT_TRUE(j.ok()) << r.out;
  return j.ok() ? *j : model::Json::object();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// Deletes one record of a store's column family, as someone editing its files would.
void DeleteRecord(const std::string& path, const std::string& cf, uint64_t seq) {
  std::vector<std::string> names;
  CL_CHECK(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
  for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  CL_CHECK(rocksdb::DB::Open(rocksdb::DBOptions(), path, cfs, &handles, &db).ok());
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == cf) {
      CL_CHECK(db->Delete(rocksdb::WriteOptions(), handles[i], store::keys::Be64(seq)).ok());
    }
  }
  for (auto* h : handles) CL_CHECK(db->DestroyColumnFamilyHandle(h).ok());
  delete db;
}

class AuditStoreTrailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Two replicas with different CronJobs and histories, laid out as the audit store keeps them.
    std::filesystem::create_directories(store_ + "/sources");
    Record("replica-a", {{"forbid", "*/5 * * * *"}, {"plain", "*/5 * * * *"}}, At(10, 31));
    Record("replica-b", {{"every2", "*/2 * * * *"}}, At(10, 23));
    const CliResult cp = Cli("checkpoint --data-dir " + store_ + " -o json > " + checkpoint_);
    ASSERT_EQ(cp.exit_code, 0);
  }

  void Record(const std::string& source,
              const std::vector<std::pair<std::string, std::string>>& cron_jobs, Time until) {
    SimWorld world(At(9, 59, 30), std::chrono::minutes(3));
    for (const auto& [name, schedule] : cron_jobs) {
      world.Apply(testing::Manifest(name, schedule));
    }
    world.RunUntil(until);
    CL_CHECK(world.ledger().Backup(store_ + "/sources/" + source).ok());
    // The audit store chains each copy's new records after every round.
    CL_CHECK(Cli("checkpoint --data-dir " + store_ + "/sources/" + source).exit_code == 0);
  }

  // A copy of the audit store (what an auditor is handed).
  std::string CopyStore(const std::string& name) {
    const std::string copy = dir_.Sub(name);
    std::filesystem::copy(store_, copy, std::filesystem::copy_options::recursive);
    return copy;
  }

  CliResult Verify(const std::string& what) {
    return Cli("verify-trail " + what + " --checkpoint " + checkpoint_ + " -o json");
  }

  store::testing::TempDir dir_;
  std::string store_ = dir_.Sub("audit-store");
  std::string checkpoint_ = dir_.Sub("checkpoint.json");
};

TEST_F(AuditStoreTrailTest, CheckpointNamesEverySourcesChainsAndEqualsEachCopysOwn) {
  const model::Json merged = *model::ParseJson(ReadFile(checkpoint_));
  ASSERT_EQ(merged["items"].size(), 4u) << merged.dump();
  for (const std::string source : {"replica-a", "replica-b"}) {
    const model::Json own =
        Json(Cli("checkpoint --data-dir " + store_ + "/sources/" + source + " -o json"));
    ASSERT_EQ(own["items"].size(), 2u);
    for (const model::Json& chain : own["items"]) {
      EXPECT_FALSE(chain.contains("copyOf"));
      model::Json labelled = chain;
      labelled["copyOf"] = source;
      EXPECT_NE(std::find(merged["items"].begin(), merged["items"].end(), labelled),
                merged["items"].end())
          << source << " " << chain.dump();
    }
  }
  const CliResult table = Cli("checkpoint --data-dir " + store_);
  EXPECT_EQ(table.out.substr(0, table.out.find('\n')).find("COPYOF"), 0u) << table.out;
}

TEST_F(AuditStoreTrailTest, IntactStoreAndBundleSetVerify) {
  const CliResult ok = Verify("--data-dir " + store_);
  ASSERT_EQ(ok.exit_code, 0) << ok.out;
  const model::Json v = Json(ok);
  EXPECT_TRUE(v["intact"].get<bool>());
  ASSERT_EQ(v["items"].size(), 4u);
  EXPECT_EQ(v["items"][0]["copyOf"], "replica-a");
  EXPECT_EQ(v["items"][3]["copyOf"], "replica-b");

  const std::string set = dir_.Sub("trail.bundles");
  ASSERT_EQ(Cli("export --trail --data-dir " + store_ + " > " + set).exit_code, 0);
  EXPECT_TRUE(IsBundleSet(ReadFile(set)));
  const CliResult bundle_ok = Verify("--bundle " + set);
  EXPECT_EQ(bundle_ok.exit_code, 0) << bundle_ok.out;

  // A copy of one replica's own checkpoint is not the audit store's: a usage error naming why.
  const std::string own = dir_.Sub("own.json");
  ASSERT_EQ(
      Cli("checkpoint --data-dir " + store_ + "/sources/replica-a -o json > " + own).exit_code, 0);
  const CliResult wrong =
      Cli("verify-trail --data-dir " + store_ + " --checkpoint " + own, /*merge_stderr=*/true);
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.out.find("one ledger's"), std::string::npos) << wrong.out;
  // ... and the audit store's checkpoint against one copy is the other way round.
  const CliResult other = Cli(
      "verify-trail --data-dir " + store_ + "/sources/replica-a " + "--checkpoint " + checkpoint_,
      /*merge_stderr=*/true);
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_NE(other.out.find("copies of an audit store"), std::string::npos) << other.out;
}

TEST_F(AuditStoreTrailTest, ARecordDeletedFromOneCopyIsNamedWithItsSource) {
  const std::string copy = CopyStore("deleted");
  DeleteRecord(copy + "/sources/replica-b", "decisions", 5);
  const CliResult bad = Verify("--data-dir " + copy);
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  const model::Json v = Json(bad);
  EXPECT_FALSE(v["intact"].get<bool>());
  bool found = false;
  for (const model::Json& c : v["items"]) {
    if (c["copyOf"] == "replica-b" && c["log"] == "decisions") {
      ASSERT_FALSE(c["problem"].is_null()) << v.dump();
      EXPECT_EQ(c["problem"]["kind"], "removed");
      EXPECT_EQ(c["problem"]["seq"], 5);
      found = true;
    } else {
      EXPECT_TRUE(c["intact"].get<bool>()) << c.dump();
    }
  }
  EXPECT_TRUE(found) << v.dump();
  const CliResult text = Cli("verify-trail --data-dir " + copy + " --checkpoint " + checkpoint_);
  EXPECT_NE(text.out.find("source replica-b: local decisions: removed: decision 5"),
            std::string::npos)
      << text.out;
}

TEST_F(AuditStoreTrailTest, ARemovedCopyIsRemovedAndANewSourceIsANote) {
  const std::string copy = CopyStore("removed");
  std::filesystem::remove_all(copy + "/sources/replica-a");
  std::filesystem::copy(copy + "/sources/replica-b", copy + "/sources/replica-c",
                        std::filesystem::copy_options::recursive);
  const CliResult bad = Verify("--data-dir " + copy);
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  const model::Json v = Json(bad);
  ASSERT_EQ(v["items"].size(), 4u) << v.dump();
  EXPECT_EQ(v["items"][0]["copyOf"], "replica-a");
  EXPECT_EQ(v["items"][0]["problem"]["kind"], "removed");
  EXPECT_NE(v["items"][0]["problem"]["detail"].get<std::string>().find("no copy of source"),
            std::string::npos);
  ASSERT_EQ(v["notes"].size(), 1u) << v.dump();
  EXPECT_NE(v["notes"][0].get<std::string>().find("source replica-c: not covered"),
            std::string::npos);
}

struct SetTamper {
  const char* name;
  const char* kind;
};

class BundleSetTamperTest : public AuditStoreTrailTest,
                            public ::testing::WithParamInterface<SetTamper> {};

TEST_P(BundleSetTamperTest, IsDetectedAndLocatedInItsSection) {
  const std::string set = dir_.Sub("trail.bundles");
  ASSERT_EQ(Cli("export --trail --data-dir " + store_ + " > " + set).exit_code, 0);
  std::vector<std::string> lines = Lines(ReadFile(set));
  // The 9th input of replica-b's section.
  size_t at = 0;
  for (size_t i = 0; i < lines.size() && at == 0; ++i) {
    if (lines[i] != "{\"section\":\"replica-b\"}") continue;
    for (size_t k = i + 1; k < lines.size(); ++k) {
      auto j = model::ParseJson(lines[k]);
      if (j.ok() && j->contains("input") && (*j)["input"] == 9) {
        at = k;
        break;
      }
    }
  }
  ASSERT_NE(at, 0u);
  const std::string kind = GetParam().kind;
  if (kind == "altered") {
    auto j = *model::ParseJson(lines[at]);
    std::string bytes = *Base64Decode(j["record"].get<std::string>());
    bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 1);
    j["record"] = Base64Encode(bytes);
    lines[at] = model::DumpJson(j);
  } else if (kind == "removed") {
    lines.erase(lines.begin() + static_cast<long>(at));
  } else {
    auto j = *model::ParseJson(lines[at + 2]);
    j["input"] = 9;
    j.erase("leaf");
    lines.insert(lines.begin() + static_cast<long>(at), model::DumpJson(j));
  }
  const std::string tampered = dir_.Sub("tampered.bundles");
  WriteFile(tampered, Join(lines));
  const CliResult bad = Verify("--bundle " + tampered);
  EXPECT_EQ(bad.exit_code, 1) << bad.out;
  const model::Json v = Json(bad);
  bool found = false;
  for (const model::Json& c : v["items"]) {
    if (c["copyOf"] == "replica-b" && c["log"] == "inputs") {
      ASSERT_FALSE(c["problem"].is_null()) << v.dump();
      EXPECT_EQ(c["problem"]["kind"], kind) << v.dump();
      EXPECT_EQ(c["problem"]["seq"], 9);
      found = true;
    } else {
      EXPECT_TRUE(c["intact"].get<bool>()) << c.dump();
    }
  }
  EXPECT_TRUE(found) << v.dump();
  ASSERT_FALSE(v["notes"].empty());
  EXPECT_NE(v["notes"][0].get<std::string>().find("bundle set's checksum does not match"),
            std::string::npos)
      << v.dump();
}

INSTANTIATE_TEST_SUITE_P(AuditStore, BundleSetTamperTest,
                         ::testing::Values(SetTamper{"Edit", "altered"},
                                           SetTamper{"Delete", "removed"},
                                           SetTamper{"Insert", "inserted"}),
                         [](const ::testing::TestParamInfo<SetTamper>& i) {
                           return std::string(i.param.name);
                         });

TEST_F(AuditStoreTrailTest, ExportedBundleSetReplaysAndVerifiesEverySource) {
  const std::string set = dir_.Sub("window.bundles");
  ASSERT_EQ(Cli("export --data-dir " + store_ + " > " + set).exit_code, 0);
  const std::string text = ReadFile(set);
  auto loaded = ReadBundleSet(text);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(loaded->checksum_matches);
  ASSERT_EQ(loaded->sections.size(), 2u);
  EXPECT_EQ(loaded->sections[0].source, "replica-a");
  // Each section is the bundle `export` writes for that source's copy.
  const CliResult own = Cli("export --data-dir " + store_ + "/sources/replica-b");
  EXPECT_EQ(loaded->sections[1].bundle, own.out);

  const CliResult verify = Cli("replay --verify --bundle " + set + " -o json");
  ASSERT_EQ(verify.exit_code, 0) << verify.out;
  const model::Json v = Json(verify);
  EXPECT_TRUE(v["match"].get<bool>());
  ASSERT_EQ(v["items"].size(), 2u);
  EXPECT_EQ(v["items"][1]["source"], "replica-b");
  // The same answer as the audit store's own.
  const model::Json on_store = Json(Cli("replay --verify --data-dir " + store_ + " -o json"));
  EXPECT_EQ(on_store, v);

  // A plain replay, `why` and `state` read one source's history: told so, nothing half-done.
  const CliResult plain = Cli("replay --bundle " + set, /*merge_stderr=*/true);
  EXPECT_EQ(plain.exit_code, 2);
  EXPECT_NE(plain.out.find("bundle set"), std::string::npos) << plain.out;
  const CliResult why =
      Cli("why default/every2 --scheduled 2024-01-01T10:10:00Z --bundle " + set, true);
  EXPECT_NE(why.exit_code, 0);
  EXPECT_NE(why.out.find("is a bundle set"), std::string::npos) << why.out;

  // A set changed after export is refused by replay (its checksum no longer matches).
  std::string changed = text;
  changed[changed.find("\"section\":\"replica-b\"") + 12] = 'x';
  const std::string bad = dir_.Sub("changed.bundles");
  WriteFile(bad, changed);
  const CliResult refused = Cli("replay --verify --bundle " + bad, true);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_NE(refused.out.find("checksum does not match"), std::string::npos) << refused.out;
}

// One decision proved to be in a source's copy with log2(n) hashes; the proof checks against the
// checkpoint alone, and fails for an edited record, an edited readable part, or another checkpoint.
TEST_F(AuditStoreTrailTest, AProofOfOneDecisionChecksAgainstTheCheckpointAlone) {
  const std::string proof = dir_.Sub("proof.json");
  const CliResult made = Cli("prove --decision 12 --source replica-b --data-dir " + store_ +
                                 " --checkpoint " + checkpoint_ + " > " + proof,
                             /*merge_stderr=*/true);
  ASSERT_EQ(made.exit_code, 0) << made.out;
  const model::Json p = *model::ParseJson(ReadFile(proof));
  EXPECT_EQ(p["copyOf"], "replica-b");
  EXPECT_EQ(p["seq"], 12);
  EXPECT_EQ(p["decision"]["seq"], 12);
  const uint64_t size = p["treeSize"].get<uint64_t>();
  size_t depth = 0;
  while ((uint64_t{1} << depth) < size) ++depth;
  EXPECT_LE(p["auditPath"].size(), depth);
  EXPECT_GE(p["auditPath"].size(), depth - 1);

  const CliResult ok = Cli("verify-proof --proof " + proof + " --checkpoint " + checkpoint_);
  EXPECT_EQ(ok.exit_code, 0) << ok.out;
  EXPECT_EQ(ok.out.rfind("included: decision 12 (", 0), 0u) << ok.out;
  EXPECT_NE(ok.out.find(" of source replica-b is leaf 11 of "), std::string::npos) << ok.out;

  // The record's bytes edited (and its readable part to match): the path leads elsewhere.
  model::Json edited = p;
  const CliResult other = Cli("prove --decision 13 --source replica-b --data-dir " + store_ +
                              " --checkpoint " + checkpoint_);
  ASSERT_EQ(other.exit_code, 0);
  const model::Json p13 = *model::ParseJson(other.out);
  edited["record"] = p13["record"];
  edited["decision"] = p13["decision"];
  edited["seq"] = 12;
  edited["decision"]["seq"] = 12;
  const std::string forged = dir_.Sub("forged.json");
  WriteFile(forged, edited.dump());
  const CliResult bad = Cli("verify-proof --proof " + forged + " --checkpoint " + checkpoint_);
  EXPECT_NE(bad.exit_code, 0) << bad.out;
  // Only the readable part edited: refused as a proof that says what its bytes do not.
  model::Json lying = p;
  lying["decision"]["action"] = "skipped";
  WriteFile(forged, lying.dump());
  const CliResult lies =
      Cli("verify-proof --proof " + forged + " --checkpoint " + checkpoint_, true);
  EXPECT_EQ(lies.exit_code, 2);
  EXPECT_NE(lies.out.find("not what its record says"), std::string::npos) << lies.out;
  // Another source's chain in the same checkpoint does not hold it.
  model::Json moved = p;
  moved["copyOf"] = "replica-a";
  WriteFile(forged, moved.dump());
  EXPECT_EQ(Cli("verify-proof --proof " + forged + " --checkpoint " + checkpoint_).exit_code, 1);

  // A replica's own checkpoint proves against its copy as against any single ledger.
  const std::string own = dir_.Sub("own.json");
  const std::string copy = store_ + "/sources/replica-a";
  ASSERT_EQ(Cli("checkpoint --data-dir " + copy + " -o json > " + own).exit_code, 0);
  const std::string own_proof = dir_.Sub("own-proof.json");
  ASSERT_EQ(
      Cli("prove --decision 5 --data-dir " + copy + " --checkpoint " + own + " > " + own_proof)
          .exit_code,
      0);
  EXPECT_FALSE(model::ParseJson(ReadFile(own_proof))->contains("copyOf"));
  EXPECT_EQ(Cli("verify-proof --proof " + own_proof + " --checkpoint " + own).exit_code, 0);
  // ... and not against the audit store's checkpoint, whose chains are labelled copyOf.
  EXPECT_EQ(Cli("verify-proof --proof " + own_proof + " --checkpoint " + checkpoint_).exit_code, 1);

  // Usage: --source on an audit store is required, and a seq the checkpoint does not cover fails.
  EXPECT_EQ(
      Cli("prove --decision 12 --data-dir " + store_ + " --checkpoint " + checkpoint_).exit_code,
      2);
  EXPECT_EQ(Cli("prove --decision 999999 --source replica-b --data-dir " + store_ +
                " --checkpoint " + checkpoint_)
                .exit_code,
            1);
}

}  // namespace
}  // namespace cronledger::replay
