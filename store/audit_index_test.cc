// The covering CronJob index (store/cronjob_index.h, docs/ledger.md "Column families and keys"):
// its values (v2) hold each decision with its Json members, a Job object as a reference to its
// CronJob's Job template plus what differs, so a CronJob's decisions, whole records included, are
// read from the index alone; values of older layouts read what they lack from the decision log:
// v1 (no Json members) its Json members, v0 (empty) and unknown versions the whole decision.
#include <gtest/gtest.h>
#include <rocksdb/db.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "store/cronjob_index.h"
#include "store/keys.h"
#include "store/ledger.h"
#include "store/test_util.h"
#include "store/testing/forwarding_ledger.h"

namespace cronledger::store {
namespace {

using model::DecisionAction;
using testing::TempDir;
namespace cjx = cronjob_index;

constexpr Time kT0 = Time::FromUnix(1767225600);  // 2026-01-01T00:00:00Z

Time At(int minutes) { return kT0.Add(std::chrono::minutes(minutes)); }

std::unique_ptr<Ledger> Open(const std::string& path, bool read_only = false) {
  LedgerOptions o;
  o.path = path;
  o.sync = SyncMode::kNone;
  o.read_only = read_only;
  return testing::OpenTestLedger(o);
}

// A Job object as reconciler::BuildJob makes it from a CronJob spec with this `image`: labels and
// annotations of the template, the scheduled-timestamp annotation at `offset`, the owner reference,
// creationTimestamp, the template's spec (with numbers of every CBOR kind).
model::Json JobObject(const std::string& name, Time scheduled, const std::string& image,
                      int offset = 0) {
  return model::Json{
      {"apiVersion", "batch/v1"},
      {"kind", "Job"},
      {"metadata",
       {{"name", name + "-" + std::to_string(scheduled.unix_seconds() / 60)},
        {"namespace", "ns"},
        {"labels", {{"app", name}}},
        {"annotations",
         {{"team", "audit"},
          {std::string(cjx::kScheduledTimestampAnnotation), FormatRfc3339(scheduled, offset)}}},
        {"ownerReferences",
         {{{"apiVersion", "batch/v1"},
           {"kind", "CronJob"},
           {"name", name},
           {"uid", "uid-" + name},
           {"controller", true},
           {"blockOwnerDeletion", true}}}},
        {"creationTimestamp", FormatRfc3339(scheduled)}}},
      {"spec",
       {{"backoffLimit", 6},
        {"ratio", 0.5},
        {"weight", 1.0},
        {"negative", -3},
        {"template",
         {{"spec",
           {{"restartPolicy", "Never"},
            {"containers", {{{"name", "main"}, {"image", image}, {"args", {"--all"}}}}}}}}}}}};
}

// Every member set that the action allows: createJob with a Job object, updateStatus with a
// status, a TooManyMissed range, an event with type and message, a requeue. `image` is the Job
// template's, `minute` shifts the times (one "pass" of five decisions).
std::vector<model::Decision> Decisions(const std::string& name, int minute = 0,
                                       const std::string& image = "busybox:1") {
  std::vector<model::Decision> out;
  for (int i = 0; i < 5; ++i) {
    model::Decision d;
    d.time = At(minute + i * 10).Add(std::chrono::milliseconds(7));
    d.cron_job = {"ns", name, "uid-" + name};
    d.cause = {0, 0, "timer"};
    d.policy.schedule = "*/10 * * * *";
    d.policy.time_zone = "Europe/Berlin";
    d.policy.concurrency_policy = "Forbid";
    d.policy.starting_deadline_seconds = 30;
    d.policy.suspend = i == 4;
    switch (i) {
      case 0:
        d.action = DecisionAction::kCreateJob;
        d.scheduled_time = At(minute);
        d.job_object = JobObject(name, *d.scheduled_time, image, 3600);
        d.job_name = d.job_object["metadata"]["name"].get<std::string>();
        d.message = "created";
        break;
      case 1:
        d.action = DecisionAction::kUpdateStatus;
        d.status = model::Json{{"lastScheduleTime", FormatRfc3339(At(minute))},
                               {"active", {{{"kind", "Job"}, {"name", name}}}}};
        break;
      case 2:
        d.action = DecisionAction::kSkipped;
        d.scheduled_time = At(minute + 10);
        d.range_end = At(minute + 20);
        d.reason = "TooManyMissed";
        break;
      case 3:
        d.action = DecisionAction::kEvent;
        d.reason = "SawCompletedJob";
        d.event_type = "Normal";
        d.message = "Saw completed job";
        break;
      default:
        d.action = DecisionAction::kRequeue;
        d.requeue_after = std::chrono::seconds(42);
        break;
    }
    out.push_back(std::move(d));
  }
  return out;
}

model::Decision WithoutJson(model::Decision d) {
  d.job_object = nullptr;
  d.status = nullptr;
  return d;
}

std::vector<model::Decision> Logged(Ledger& l) {
  std::vector<model::Decision> out;
  EXPECT_TRUE(l.ScanDecisions(0, [&](const model::Decision& d) {
                 out.push_back(d);
                 return true;
               }).ok());
  return out;
}

// Commits two CronJobs' decisions, interleaved in time (one unit each pass), for `passes` passes
// an hour apart, from pass `first`; from pass `change` on, b's Job template has another image (a
// spec change).
void Fill(Ledger& l, int passes = 1, int change = 1000, int first = 0) {
  for (int p = first; p < first + passes; ++p) {
    std::vector<model::Decision> a = Decisions("a", p * 60),
                                 b = Decisions("b", p * 60,
                                               p >= change ? "busybox:2" : "busybox:1");
    for (size_t i = 0; i < a.size(); ++i) {
      UnitOfWork u;
      u.decisions = {a[i], b[i]};
      ASSERT_TRUE(l.Commit(std::move(u)).ok());
    }
  }
  // The index follows the commits; the tests that count index reads want all of it there.
  ASSERT_TRUE(l.SyncAuditIndex().ok());
}

// The audit column family of the store at `path` (closed), opened with raw RocksDB.
class RawAudit {
 public:
  explicit RawAudit(const std::string& path) {
    std::vector<std::string> names;
    EXPECT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), path, &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> cfs;
    for (const auto& n : names) cfs.emplace_back(n, rocksdb::ColumnFamilyOptions());
    rocksdb::DB* raw = nullptr;
    EXPECT_TRUE(rocksdb::DB::Open(rocksdb::DBOptions(), path, cfs, &handles_, &raw).ok());
    db_.reset(raw);
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] == "audit") audit_ = handles_[i];
    }
    EXPECT_NE(audit_, nullptr);
  }
  ~RawAudit() {
    for (auto* h : handles_) EXPECT_TRUE(db_->DestroyColumnFamilyHandle(h).ok());
    EXPECT_TRUE(db_->Close().ok());
  }
  // (key, value) of every entry whose key starts with `prefix` (all of them for "").
  std::vector<std::pair<std::string, std::string>> Entries(const std::string& prefix) {
    std::vector<std::pair<std::string, std::string>> out;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions(), audit_));
    for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
      out.emplace_back(it->key().ToString(), it->value().ToString());
    }
    return out;
  }
  void Put(const std::string& key, const std::string& value) {
    ASSERT_TRUE(db_->Put(rocksdb::WriteOptions(), audit_, key, value).ok());
  }
  void Delete(const std::string& key) {
    ASSERT_TRUE(db_->Delete(rocksdb::WriteOptions(), audit_, key).ok());
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  rocksdb::ColumnFamilyHandle* audit_ = nullptr;
};

// Rewrites every CronJob index value of the store at `path` (closed) to what `rewrite` makes of
// the decision it indexes, as an older build (v0: empty, v1: without the Json members) or a future
// build (another version) would have written it.
void RewriteCronJobIndexValues(const std::string& path, const std::vector<model::Decision>& logged,
                               const std::function<std::string(model::Decision)>& rewrite) {
  std::map<uint64_t, model::Decision> by_seq;
  for (const auto& d : logged) by_seq[d.seq] = d;
  RawAudit raw(path);
  size_t rewritten = 0;
  for (const auto& [key, value] : raw.Entries("c")) {
    EXPECT_EQ(static_cast<uint8_t>(value[0]), cjx::kV2);
    uint64_t seq = 0;
    ASSERT_TRUE(keys::SeqOfIndexKey(key, &seq));
    raw.Put(key, rewrite(by_seq.at(seq)));
    ++rewritten;
  }
  EXPECT_EQ(rewritten, logged.size());
}

std::vector<model::Decision> Of(const std::vector<model::Decision>& all, const std::string& name,
                                bool summary) {
  std::vector<model::Decision> out;
  for (const auto& d : all) {
    if (d.cron_job.name == name) out.push_back(summary ? WithoutJson(d) : d);
  }
  return out;
}

// The writer's value of `d` as the indexer makes it: from the decision's record as the decision
// log stores it.
Status Encode(cjx::JobTemplateWriter& writer, const model::Decision& d, uint64_t unit,
              cjx::TemplateStore& store, std::string* out) {
  const std::string record = model::EncodeDecisionRecord(d);
  model::DecisionMembers members;
  auto summary = model::DecodeDecisionRecordParts(record, &members);
  if (!summary.ok()) return summary.status();
  return writer.EncodeStored(*summary, members, unit, store, out);
}

// A Job template as defined: the CBOR of the object with its slots' strings blanked.
void ReferenceTemplate(model::Json job, std::string* cbor) {
  for (std::string* slot : cjx::FindSlots(job)) {
    if (slot != nullptr) slot->clear();
  }
  model::Json::to_cbor(job, *cbor);
}

// Templates in memory; `durable = false` forgets every Put (a batch whose write failed).
struct MemoryTemplates : cjx::TemplateStore {
  std::map<std::string, std::string> stored;
  bool durable = true;
  int gets = 0, puts = 0;
  Result<std::optional<std::string>> Get(std::string_view key) override {
    ++gets;
    auto it = stored.find(std::string(key));
    if (it == stored.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  Status Put(std::string_view key, std::string_view value) override {
    ++puts;
    if (durable) stored[std::string(key)] = std::string(value);
    return Status::Ok();
  }
};

// Decodes a v2 value into a whole decision, as the ledger does, with the templates of `t`.
model::Decision DecodeWhole(const std::string& value, const MemoryTemplates& t) {
  model::Decision d;
  auto v = cjx::DecodeIndexValue(value, &d, true);
  EXPECT_TRUE(v.ok()) << v.status().ToString();
  if (!v.ok()) return d;
  EXPECT_EQ(v->version, cjx::kV2);
  if (v->has_job_object && v->job_object.form == cjx::kJobInline) {
    d.job_object = *cjx::DecodeCbor(v->job_object.cbor, "job");
  } else if (v->has_job_object) {
    const std::string key =
        keys::JobTemplateKey(d.cron_job.namespace_, d.cron_job.name, v->job_object.template_id);
    auto tmpl = cjx::DecodeTemplateValue(t.stored.at(key));
    EXPECT_TRUE(tmpl.ok());
    EXPECT_TRUE(cjx::RestoreJobObject(v->job_object, *tmpl, d, &d.job_object).ok());
  }
  if (v->has_status) d.status = *cjx::DecodeCbor(v->status_cbor, "status");
  return d;
}

// The decision as the decision log gives it back (Json members through CBOR).
model::Decision ThroughLog(const model::Decision& d) {
  return *model::DecodeDecisionRecord(model::EncodeDecisionRecord(d));
}

TEST(AuditIndexTest, V2ValuesHoldWholeDecisionsWithJobObjectsAsTemplateReferences) {
  cjx::JobTemplateWriter writer;
  MemoryTemplates templates;
  uint64_t unit = 0;
  for (int pass = 0; pass < 3; ++pass) {
    ++unit;
    for (model::Decision d : Decisions("a", pass * 60)) {
      d.seq = 17 + static_cast<uint64_t>(pass);
      const model::Decision before = d;
      std::string value;
      ASSERT_TRUE(Encode(writer, d, unit, templates, &value).ok());
      EXPECT_EQ(d, before);  // the Json members and slot strings are moved back
      const model::Decision whole = DecodeWhole(value, templates);
      EXPECT_EQ(whole, ThroughLog(before));
      EXPECT_EQ(model::CanonicalDecisionBytes(whole), model::CanonicalDecisionBytes(before));
      // Summaries decode the record alone.
      model::Decision summary;
      auto v = cjx::DecodeIndexValue(value, &summary, false);
      ASSERT_TRUE(v.ok());
      EXPECT_EQ(summary, WithoutJson(before));
    }
  }
  // Every Job object as a reference to its template, from the first one on; one template Put.
  EXPECT_EQ(writer.stats().inline_, 0u);
  EXPECT_EQ(writer.stats().templated, 3u);
  EXPECT_EQ(writer.stats().templates_put, 1u);
  EXPECT_EQ(templates.stored.size(), 1u);
  // A reference is small: the template id, then every slot derived from the record.
  model::Decision d = Decisions("a", 240)[0];
  std::string value;
  ASSERT_TRUE(Encode(writer, d, ++unit, templates, &value).ok());
  std::string record;
  model::EncodeDecisionRecord(WithoutJson(d), &record);
  EXPECT_LE(value.size(), record.size() + 2 + 1 + 1 + 8 + 3 + 2);
  EXPECT_LT(value.size() - record.size(), model::Json::to_cbor(d.job_object).size() / 10);

  // A slot that cannot be derived is written as it is; one that is absent stays absent.
  model::Decision odd = Decisions("a", 300)[0];
  odd.job_object["metadata"]["name"] = "renamed";
  odd.job_object["metadata"]["annotations"][std::string(cjx::kScheduledTimestampAnnotation)] =
      "not a time";
  ASSERT_TRUE(Encode(writer, odd, ++unit, templates, &value).ok());  // same template
  EXPECT_EQ(DecodeWhole(value, templates), ThroughLog(odd));
  EXPECT_EQ(writer.stats().templated, 5u);
  model::Decision bare = Decisions("a", 360)[0];
  bare.job_object["metadata"].erase("creationTimestamp");
  for (int i = 0; i < 2; ++i) {  // a new template: Put once, referred to both times
    ASSERT_TRUE(Encode(writer, bare, ++unit, templates, &value).ok());
    EXPECT_EQ(DecodeWhole(value, templates), ThroughLog(bare));
  }
  EXPECT_EQ(writer.stats().inline_, 0u);
  EXPECT_EQ(writer.stats().templated, 7u);
  EXPECT_EQ(templates.stored.size(), 2u);
}

// A value depends on the decision and the stored templates only, not on what the writer saw
// before: a fresh writer (a restart, a rebuild) writes the same bytes for the same decisions.
TEST(AuditIndexTest, ValuesDoNotDependOnTheWritersMemory) {
  cjx::JobTemplateWriter live;
  MemoryTemplates templates;
  std::vector<std::string> written;
  uint64_t unit = 0;
  for (int pass = 0; pass < 4; ++pass) {
    ++unit;
    for (model::Decision d : Decisions("a", pass * 60, pass < 2 ? "busybox:1" : "busybox:2")) {
      written.emplace_back();
      ASSERT_TRUE(Encode(live, d, unit, templates, &written.back()).ok());
    }
  }
  cjx::JobTemplateWriter rebuilt;
  MemoryTemplates fresh;
  size_t i = 0;
  unit = 0;
  for (int pass = 0; pass < 4; ++pass) {
    ++unit;
    for (model::Decision d : Decisions("a", pass * 60, pass < 2 ? "busybox:1" : "busybox:2")) {
      std::string value;
      ASSERT_TRUE(Encode(rebuilt, d, unit, fresh, &value).ok());
      EXPECT_EQ(value, written[i++]);
      // A writer that starts in the middle, over the templates stored so far, agrees too.
      cjx::JobTemplateWriter restarted;
      std::string again;
      ASSERT_TRUE(Encode(restarted, d, unit + 100, fresh, &again).ok());
      EXPECT_EQ(again, value);
    }
  }
  EXPECT_EQ(fresh.stored, templates.stored);
}

// The template taken from a Job object's stored CBOR without decoding it is the template of the
// decoded object, and the slots are its strings, for every shape FindSlots meets.
TEST(AuditIndexTest, TemplatesFromStoredBytesAreTheTemplatesOfTheObjects) {
  std::vector<model::Json> jobs;
  jobs.push_back(JobObject("a", At(0), "busybox:1", 3600));
  jobs.push_back(JobObject(std::string(300, 'n'), At(7), "img\u00e9-\xe2\x82\xac", -5400));
  model::Json odd = JobObject("b", At(1), "x");
  odd["metadata"]["name"] = 42;                       // not a string: no slot
  odd["metadata"]["annotations"] = {"not", "a map"};  // no annotation slot
  odd["spec"]["floats"] = {0.1, 1e300, -0.0, 3.5};
  jobs.push_back(odd);
  model::Json no_annotation = JobObject("c", At(2), "x");
  no_annotation["metadata"]["annotations"].erase(std::string(cjx::kScheduledTimestampAnnotation));
  jobs.push_back(no_annotation);
  model::Json bad_annotation = JobObject("d", At(3), "x");
  bad_annotation["metadata"]["annotations"][std::string(cjx::kScheduledTimestampAnnotation)] =
      model::Json{{"nested", true}};
  jobs.push_back(bad_annotation);
  jobs.push_back(model::Json{{"metadata", "not a map"}, {"kind", "Job"}});
  jobs.push_back(model::Json::object());
  jobs.push_back(model::Json::array({1, 2, 3}));
  jobs.push_back(model::Json{{"metadata", {{"creationTimestamp", ""}, {"name", nullptr}}}});
  for (model::Json& job : jobs) {
    SCOPED_TRACE(job.dump().substr(0, 120));
    std::string cbor;
    model::Json::to_cbor(job, cbor);
    std::string want;
    ReferenceTemplate(job, &want);
    std::string got;
    cjx::CborSlots slots;
    ASSERT_TRUE(cjx::TemplateOfCbor(cbor, &got, &slots));
    EXPECT_EQ(got, want);
    const auto found = cjx::FindSlots(job);
    for (size_t i = 0; i < cjx::kSlotCount; ++i) {
      ASSERT_EQ(slots[i].has_value(), found[i] != nullptr) << i;
      if (found[i] != nullptr) {
        EXPECT_EQ(*slots[i], *found[i]);
      }
    }
  }
  // Bytes the record's encoder does not write are left to the caller (kept inline).
  std::string tmpl;
  cjx::CborSlots slots;
  EXPECT_FALSE(cjx::TemplateOfCbor(std::string("\xbf\xff", 2), &tmpl, &slots));  // indefinite map
  EXPECT_FALSE(cjx::TemplateOfCbor(std::string("\xa1\x01\x02", 3), &tmpl, &slots));  // int key
  EXPECT_FALSE(cjx::TemplateOfCbor(std::string("\xa1\x61", 2), &tmpl, &slots));      // truncated
  EXPECT_FALSE(cjx::TemplateOfCbor(std::string("\xa0\xa0", 2), &tmpl, &slots));      // trailing
}

TEST(AuditIndexTest, IndexValueVersionsAndMalformedValues) {
  for (model::Decision d : Decisions("a")) {
    d.seq = 17;
    const model::Decision before = d;
    std::string value;
    cjx::EncodeV1(d, &value);
    EXPECT_EQ(d, before);
    model::Decision got;
    auto v = cjx::DecodeIndexValue(value, &got, true);
    ASSERT_TRUE(v.ok()) << v.status().ToString();
    EXPECT_EQ(v->version, cjx::kV1);
    EXPECT_EQ(got, WithoutJson(before));
    EXPECT_EQ(v->omitted, (before.job_object.is_null() ? 0 : cjx::kOmittedJobObject) |
                              (before.status.is_null() ? 0 : cjx::kOmittedStatus));
  }
  model::Decision d;
  EXPECT_EQ(cjx::DecodeIndexValue("", &d, true)->version, 0);        // v0
  EXPECT_EQ(cjx::DecodeIndexValue("\x07zz", &d, true)->version, 0);  // a later version
  EXPECT_TRUE(cjx::DecodeIndexValue("\x01", &d, true).status().IsCorruption());
  EXPECT_TRUE(
      cjx::DecodeIndexValue(std::string("\x01\x00junk", 6), &d, true).status().IsCorruption());

  // Every strict prefix of a v2 value is corrupt, and so are trailing bytes.
  cjx::JobTemplateWriter writer;
  MemoryTemplates templates;
  for (int pass = 0; pass < 2; ++pass) {
    for (model::Decision x : Decisions("a", pass * 60)) {
      std::string value;
      ASSERT_TRUE(Encode(writer, x, 1, templates, &value).ok());
      for (size_t n = 1; n < value.size(); ++n) {
        EXPECT_TRUE(cjx::DecodeIndexValue(value.substr(0, n), &d, true).status().IsCorruption())
            << n;
      }
      EXPECT_TRUE(cjx::DecodeIndexValue(value + "x", &d, true).status().IsCorruption());
    }
  }
  EXPECT_TRUE(cjx::DecodeTemplateValue("").status().IsCorruption());
  EXPECT_TRUE(cjx::DecodeTemplateValue("\x02").status().IsCorruption());
  EXPECT_TRUE(cjx::DecodeTemplateValue("\x01\xff").status().IsCorruption());
}

TEST(AuditIndexTest, TemplateWriterTrustsOnlyWhatTheStoreShows) {
  cjx::JobTemplateWriter writer;
  MemoryTemplates templates;
  auto encode = [&](int pass, uint64_t unit, const std::string& image = "busybox:1") {
    model::Decision d = Decisions("a", pass * 60, image)[0];
    std::string value;
    EXPECT_TRUE(Encode(writer, d, unit, templates, &value).ok());
    model::Decision got;
    auto v = cjx::DecodeIndexValue(value, &got, true);
    EXPECT_TRUE(v.ok());
    return v->job_object.form;
  };
  // Unit 1's batch is lost (its write failed): the Put is not trusted by the next unit.
  templates.durable = false;
  EXPECT_EQ(encode(0, 1), cjx::kJobTemplate);
  EXPECT_EQ(encode(1, 1), cjx::kJobTemplate);  // same unit: the Put is in this batch
  EXPECT_EQ(templates.gets, 1);
  EXPECT_EQ(templates.puts, 1);
  templates.durable = true;
  EXPECT_EQ(encode(2, 2), cjx::kJobTemplate);  // looked up again, Put again
  EXPECT_EQ(templates.gets, 2);
  EXPECT_EQ(templates.puts, 2);
  EXPECT_EQ(encode(3, 3), cjx::kJobTemplate);  // now seen stored: no more reads
  EXPECT_EQ(encode(4, 4), cjx::kJobTemplate);
  EXPECT_EQ(templates.gets, 3);
  EXPECT_EQ(templates.puts, 2);

  // Another id's bytes under our id (a hash collision): never replaced, objects stay inline.
  cjx::JobTemplateWriter other;
  MemoryTemplates clashing;
  model::Decision d = Decisions("a", 0, "busybox:7")[0];
  std::string tmpl;
  ReferenceTemplate(d.job_object, &tmpl);
  const std::string key = keys::JobTemplateKey("ns", "a", cjx::TemplateId(tmpl));
  clashing.stored[key] = cjx::TemplateValue("something else");
  for (int pass = 0; pass < 3; ++pass) {
    model::Decision x = Decisions("a", pass * 60, "busybox:7")[0];
    std::string value;
    ASSERT_TRUE(Encode(other, x, 10 + static_cast<uint64_t>(pass), clashing, &value).ok());
    EXPECT_EQ(DecodeWhole(value, clashing), ThroughLog(x));
  }
  EXPECT_EQ(other.stats().templated, 0u);
  EXPECT_EQ(clashing.stored.at(key), cjx::TemplateValue("something else"));
}

TEST(AuditIndexTest, WholeRecordsAreReadFromTheIndexAndItsTemplatesAlone) {
  TempDir dir;
  auto l = Open(dir.path());
  Fill(*l, 4, /*change=*/2);  // b's Job template changes at the third pass
  const std::vector<model::Decision> logged = Logged(*l);
  ASSERT_EQ(logged.size(), 40u);
  const Time end = At(10000);

  DecisionReadStats before = l->DecisionReads();
  auto summaries = l->DecisionSummariesByCronJob("ns", "a", kT0, end, 0);
  ASSERT_TRUE(summaries.ok()) << summaries.status().ToString();
  EXPECT_EQ(*summaries, Of(logged, "a", true));
  DecisionReadStats after = l->DecisionReads();
  EXPECT_EQ(after.log_reads - before.log_reads, 0u);
  EXPECT_EQ(after.template_reads - before.template_reads, 0u);
  EXPECT_EQ(after.from_index - before.from_index, 20u);
  EXPECT_EQ(after.index_entries - before.index_entries, 20u);

  // Whole records: no read of the decision log; b has one template per spec version.
  for (const std::string name : {"a", "b"}) {
    before = l->DecisionReads();
    auto full = l->DecisionsByCronJob("ns", name, kT0, end, 0);
    ASSERT_TRUE(full.ok()) << full.status().ToString();
    EXPECT_EQ(*full, Of(logged, name, false));
    after = l->DecisionReads();
    EXPECT_EQ(after.log_reads - before.log_reads, 0u);
    EXPECT_EQ(after.from_index - before.from_index, 20u);
    EXPECT_EQ(after.template_reads - before.template_reads, name == "a" ? 1u : 2u);
  }
  // Read-only, the same.
  l.reset();
  {
    auto ro = Open(dir.path(), true);
    auto full = ro->DecisionsByCronJob("ns", "b", kT0, end, 0);
    ASSERT_TRUE(full.ok());
    EXPECT_EQ(*full, Of(logged, "b", false));
    EXPECT_EQ(ro->DecisionReads().log_reads, 0u);
  }
  {
    RawAudit raw(dir.path());
    EXPECT_EQ(raw.Entries("j").size(), 3u);  // a: 1, b: 2 (before and after the change)
  }

  // Window and limit as before: [10m, 40m) of a, at most 2.
  l = Open(dir.path());
  auto window = l->DecisionSummariesByCronJob("ns", "a", At(10), At(40), 2);
  ASSERT_TRUE(window.ok());
  const auto a = Of(logged, "a", true);
  EXPECT_EQ(*window, (std::vector<model::Decision>{a[1], a[2]}));
  auto none = l->DecisionSummariesByCronJob("ns", "c", kT0, end, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());

  // The default implementation (for wrappers) gives the same answer.
  struct Unforwarded : testing::ForwardingLedger {
    using ForwardingLedger::ForwardingLedger;
    Result<std::vector<model::Decision>> DecisionSummariesByCronJob(std::string_view ns,
                                                                    std::string_view name,
                                                                    Time from, Time to,
                                                                    size_t limit) override {
      return Ledger::DecisionSummariesByCronJob(ns, name, from, to, limit);
    }
  } wrapper(*l);
  auto fallback = wrapper.DecisionSummariesByCronJob("ns", "a", kT0, end, 0);
  ASSERT_TRUE(fallback.ok());
  EXPECT_EQ(*fallback, Of(logged, "a", true));
}

// A template that is not there (no build writes that) leaves its decisions to the decision log.
TEST(AuditIndexTest, AMissingTemplateIsReadFromTheDecisionLog) {
  TempDir dir;
  std::vector<model::Decision> logged;
  {
    auto l = Open(dir.path());
    Fill(*l, 3);
    logged = Logged(*l);
  }
  {
    RawAudit raw(dir.path());
    for (const auto& [key, value] : raw.Entries("j" + std::string("ns\0b\0", 5))) raw.Delete(key);
  }
  auto l = Open(dir.path());
  const DecisionReadStats before = l->DecisionReads();
  auto full = l->DecisionsByCronJob("ns", "b", kT0, At(10000), 0);
  ASSERT_TRUE(full.ok()) << full.status().ToString();
  EXPECT_EQ(*full, Of(logged, "b", false));
  EXPECT_EQ(l->DecisionReads().log_reads - before.log_reads, 3u);  // b's three createJobs
}

// Retention never deletes decisions, index entries or templates: whole records stay covered.
TEST(AuditIndexTest, RetentionKeepsWhatTheIndexPointsAt) {
  TempDir dir;
  testing::ManualClock clock(kT0);
  LedgerOptions o;
  o.path = dir.path();
  o.sync = SyncMode::kNone;
  o.clock = &clock;
  auto l = testing::OpenTestLedger(o);
  {
    UnitOfWork u;
    u.inputs.push_back(
        testing::CronJobEvent(model::WatchEventType::kAdded, "ns", "a", "uid-a", "1"));
    u.inputs.push_back(model::Tick{kT0, "ns", "a", "timer"});  // not pinned: retention deletes it
    ASSERT_TRUE(l->Commit(std::move(u)).ok());
  }
  Fill(*l, 3);
  const std::vector<model::Decision> logged = Logged(*l);
  clock.Advance(std::chrono::hours(24 * 365));
  RetentionOptions ro;
  ro.raw_max_age = std::chrono::hours(1);
  ro.log_max_age = std::chrono::hours(1);
  auto report = l->ApplyRetention(ro, clock.Now());
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_EQ(report->inputs_deleted, 1u);
  const DecisionReadStats before = l->DecisionReads();
  for (const std::string name : {"a", "b"}) {
    auto full = l->DecisionsByCronJob("ns", name, kT0, At(10000), 0);
    ASSERT_TRUE(full.ok()) << full.status().ToString();
    EXPECT_EQ(*full, Of(logged, name, false));
  }
  const DecisionReadStats after = l->DecisionReads();
  EXPECT_EQ(after.log_reads - before.log_reads, 0u);
  EXPECT_EQ(after.template_reads - before.template_reads, 2u);
}

// Stores written by older builds answer the same: v0 (every `c` value empty) and values of an
// unknown version from the decision log, v1 (without Json members) its rows from the index and its
// Json members from the log; and a writer of this build adds v2 entries beside them.
TEST(AuditIndexTest, OldAndUnknownIndexValuesAreReadFromTheDecisionLog) {
  struct Layout {
    const char* what;
    std::function<std::string(model::Decision)> rewrite;
    uint64_t summary_log_reads, full_log_reads;  // of a's 10 decisions
  };
  const Layout layouts[] = {
      {"v0 (empty)", [](model::Decision) { return std::string(); }, 10, 10},
      {"v1 (no Json members)",
       [](model::Decision d) {
         std::string v;
         cjx::EncodeV1(d, &v);
         return v;
       },
       0, 4},
      {"unknown version", [](model::Decision) { return std::string("\x09\x00later", 7); }, 10, 10},
  };
  for (const Layout& layout : layouts) {
    SCOPED_TRACE(layout.what);
    TempDir dir;
    std::vector<model::Decision> logged;
    {
      auto l = Open(dir.path());
      Fill(*l, 2);
      logged = Logged(*l);
    }
    RewriteCronJobIndexValues(dir.path(), logged, layout.rewrite);
    for (bool read_only : {false, true}) {
      auto l = Open(dir.path(), read_only);
      ASSERT_NE(l, nullptr);
      DecisionReadStats before = l->DecisionReads();
      auto summaries = l->DecisionSummariesByCronJob("ns", "a", kT0, At(1000), 0);
      ASSERT_TRUE(summaries.ok()) << summaries.status().ToString();
      EXPECT_EQ(*summaries, Of(logged, "a", true));
      DecisionReadStats after = l->DecisionReads();
      EXPECT_EQ(after.log_reads - before.log_reads, layout.summary_log_reads);
      before = after;
      auto full = l->DecisionsByCronJob("ns", "a", kT0, At(1000), 0);
      ASSERT_TRUE(full.ok()) << full.status().ToString();
      EXPECT_EQ(*full, Of(logged, "a", false));
      after = l->DecisionReads();
      EXPECT_EQ(after.log_reads - before.log_reads, layout.full_log_reads);
      EXPECT_EQ(after.from_index - before.from_index, 10 - layout.full_log_reads);
      auto names = l->DecisionCronJobNames("ns");
      ASSERT_TRUE(names.ok());
      EXPECT_EQ(*names, (std::vector<std::string>{"a", "b"}));
    }
    // A writer of this build adds covering v2 entries beside the old ones; both read back.
    {
      auto l = Open(dir.path());
      Fill(*l, 2, 1000, /*first=*/2);
      logged = Logged(*l);
      DecisionReadStats before = l->DecisionReads();
      auto summaries = l->DecisionSummariesByCronJob("ns", "a", kT0, At(1000), 0);
      ASSERT_TRUE(summaries.ok());
      EXPECT_EQ(*summaries, Of(logged, "a", true));
      DecisionReadStats after = l->DecisionReads();
      EXPECT_EQ(after.log_reads - before.log_reads, layout.summary_log_reads);
      EXPECT_EQ(after.from_index - before.from_index, 20 - layout.summary_log_reads);
      before = after;
      auto full = l->DecisionsByCronJob("ns", "a", kT0, At(1000), 0);
      ASSERT_TRUE(full.ok());
      EXPECT_EQ(*full, Of(logged, "a", false));
      after = l->DecisionReads();
      EXPECT_EQ(after.log_reads - before.log_reads, layout.full_log_reads);
    }
  }
}

// Every query of the index, and its answer from the decision log alone.
struct Answers {
  std::vector<model::Decision> a_full, b_summaries, creates, too_many_missed, all;
  std::vector<std::string> names;
  friend bool operator==(const Answers&, const Answers&) = default;
};
Answers Ask(Ledger& l) {
  Answers out;
  const Time end = At(100000);
  out.a_full = *l.DecisionsByCronJob("ns", "a", kT0, end, 0);
  out.b_summaries = *l.DecisionSummariesByCronJob("ns", "b", kT0, end, 0);
  out.creates = *l.DecisionsByActionReason(DecisionAction::kCreateJob, "", kT0, end, 0);
  out.too_many_missed = *l.DecisionsByActionReason(std::nullopt, "TooManyMissed", kT0, end, 3);
  out.all = *l.DecisionsByActionReason(std::nullopt, "", kT0, end, 0);
  out.names = *l.DecisionCronJobNames("ns");
  return out;
}
Answers FromLog(const std::vector<model::Decision>& logged) {
  Answers out;
  std::vector<model::Decision> by_time = logged;
  std::stable_sort(by_time.begin(), by_time.end(), [](const auto& x, const auto& y) {
    return x.time < y.time || (x.time == y.time && x.seq < y.seq);
  });
  for (const auto& d : by_time) {
    if (d.cron_job.name == "a") out.a_full.push_back(d);
    if (d.cron_job.name == "b") out.b_summaries.push_back(WithoutJson(d));
    if (d.action == DecisionAction::kCreateJob) out.creates.push_back(d);
    if (d.reason == "TooManyMissed" && out.too_many_missed.size() < 3) {
      out.too_many_missed.push_back(d);
    }
    out.all.push_back(d);
  }
  out.names = {"a", "b"};
  return out;
}

// Holds the audit indexer before its next batch until released.
struct IndexGate {
  std::mutex mu;
  std::condition_variable cv;
  bool open = false;
  void Wait() {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [this] { return open; });
  }
  void Open() {
    {
      std::lock_guard<std::mutex> l(mu);
      open = true;
    }
    cv.notify_all();
  }
};

// The index is written behind the commit: a query sees every committed decision whatever the
// indexer's lag, reading what it has not indexed yet from the decision log at the same snapshot.
TEST(AuditIndexerTest, QueriesSeeTheDecisionsTheIndexHasNotReached) {
  TempDir dir;
  IndexGate gate;
  LedgerOptions o;
  o.path = dir.path();
  o.sync = SyncMode::kNone;
  o.before_index_batch = [&] {
    gate.Wait();
    return Status::Ok();
  };
  auto l = testing::OpenTestLedger(o);
  struct Release {
    IndexGate& gate;
    ~Release() { gate.Open(); }  // before the ledger's close, which waits for the indexer
  } release{gate};
  for (int p = 0; p < 3; ++p) {
    for (int i = 0; i < 5; ++i) {
      UnitOfWork u;
      u.decisions = {Decisions("a", p * 60)[i], Decisions("b", p * 60, "busybox:2")[i]};
      ASSERT_TRUE(l->Commit(std::move(u)).ok());
    }
  }
  const std::vector<model::Decision> logged = Logged(*l);
  ASSERT_EQ(logged.size(), 30u);
  const Answers want = FromLog(logged);

  DecisionReadStats before = l->DecisionReads();
  EXPECT_EQ(Ask(*l), want);
  DecisionReadStats after = l->DecisionReads();
  EXPECT_EQ(after.from_index - before.from_index, 0u);  // nothing indexed yet
  EXPECT_EQ(after.tail_reads - before.tail_reads, 6 * 30u);
  {
    // A reader in another process sees the same (the writer's watermark: nothing indexed).
    auto ro = Open(dir.path(), /*read_only=*/true);
    EXPECT_EQ(Ask(*ro), want);
  }

  gate.Open();
  ASSERT_TRUE(l->SyncAuditIndex().ok());
  before = l->DecisionReads();
  EXPECT_EQ(Ask(*l), want);
  after = l->DecisionReads();
  EXPECT_EQ(after.tail_reads - before.tail_reads, 0u);
  // The action (6), reason (3) and time (30) scans read the log by seq; a and b from the index.
  EXPECT_EQ(after.log_reads - before.log_reads, 39u);
  EXPECT_EQ(after.from_index - before.from_index, 30u);
  {
    auto ro = Open(dir.path(), /*read_only=*/true);
    before = ro->DecisionReads();
    EXPECT_EQ(Ask(*ro), want);
    EXPECT_EQ(ro->DecisionReads().tail_reads - before.tail_reads, 0u);
  }
}

// Nothing but commits drives the indexer: it wakes for the first decision after it has caught up,
// whether the commits before it carried decisions or not, and indexes it within its linger time
// (a query then reads nothing past the index's watermark).
TEST(AuditIndexerTest, IndexesEachDecisionWithoutBeingAskedTo) {
  TempDir dir;
  auto l = Open(dir.path());
  auto indexed = [&] {
    const DecisionReadStats before = l->DecisionReads();
    EXPECT_TRUE(l->DecisionsByCronJob("ns", "a", kT0, At(100000), 0).ok());
    return l->DecisionReads().tail_reads == before.tail_reads;
  };
  for (int p = 0; p < 4; ++p) {
    // A unit without decisions (an ingest commit) first: it must not be what the wake-up waits on.
    UnitOfWork inputs;
    inputs.inputs.emplace_back(model::ConfigChange{At(p), "historyCleanup", "true"});
    ASSERT_TRUE(l->Commit(std::move(inputs)).ok());
    UnitOfWork u;
    u.decisions = {Decisions("a", p * 60)[0]};
    ASSERT_TRUE(l->Commit(std::move(u)).ok());
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!indexed() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ASSERT_TRUE(indexed()) << "decision " << p + 1 << " was not indexed";
  }
}

// A failed index write fails the ledger as a failed commit does: the commits after it fail until
// it is reopened; queries still answer from the decision log; the reopened ledger indexes again.
TEST(AuditIndexerTest, AFailedIndexWriteFailsTheLedgerUntilReopened) {
  TempDir dir;
  std::atomic<bool> fail{false};
  LedgerOptions o;
  o.path = dir.path();
  o.sync = SyncMode::kNone;
  o.before_index_batch = [&] {
    return fail.load() ? Status::IoError("injected index write failure") : Status::Ok();
  };
  std::vector<model::Decision> logged;
  {
    auto l = testing::OpenTestLedger(o);
    fail = true;
    UnitOfWork u;
    u.decisions = Decisions("a");
    ASSERT_TRUE(l->Commit(std::move(u)).ok());
    const Status synced = l->SyncAuditIndex();
    EXPECT_NE(synced.ToString().find("injected index write failure"), std::string::npos)
        << synced.ToString();
    UnitOfWork later;
    later.decisions = Decisions("b");
    const auto refused = l->Commit(std::move(later));
    ASSERT_FALSE(refused.ok());
    EXPECT_NE(refused.status().ToString().find("injected index write failure"), std::string::npos)
        << refused.status().ToString();
    logged = Logged(*l);
    ASSERT_EQ(logged.size(), 5u);
    auto full = l->DecisionsByCronJob("ns", "a", kT0, At(10000), 0);
    ASSERT_TRUE(full.ok());
    EXPECT_EQ(*full, logged);  // from the decision log, past the watermark
  }
  fail = false;
  auto l = testing::OpenTestLedger(o);
  ASSERT_TRUE(l->SyncAuditIndex().ok());
  const DecisionReadStats before = l->DecisionReads();
  auto full = l->DecisionsByCronJob("ns", "a", kT0, At(10000), 0);
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(*full, logged);
  EXPECT_EQ(l->DecisionReads().from_index - before.from_index, 5u);
  EXPECT_TRUE(l->Rebuild(false)->differences.empty());
}

// What a crash leaves (decisions committed, their index batch lost with its watermark) is indexed
// on the next open, to the same bytes; a store indexed in its commits by an older build (no
// watermark) is taken as indexed through its last decision.
TEST(AuditIndexerTest, AnIndexLeftBehindIsCaughtUpOnOpen) {
  TempDir dir;
  std::vector<model::Decision> logged;
  {
    auto l = Open(dir.path());
    Fill(*l, 3, /*change=*/1);
    logged = Logged(*l);
  }
  std::vector<std::pair<std::string, std::string>> live;
  {
    RawAudit raw(dir.path());
    live = raw.Entries("");
    ASSERT_EQ(live.back().first, keys::kIndexedThrough);
    EXPECT_EQ(live.back().second, keys::Be64(logged.size()));
    // Lose the index entries of the decisions after seq 11, and the watermark with them.
    for (const auto& [key, value] : live) {
      uint64_t seq = 0;
      if (key[0] != 'j' && keys::SeqOfIndexKey(key, &seq) && seq > 11) raw.Delete(key);
    }
    raw.Put(std::string(keys::kIndexedThrough), keys::Be64(11));
    ASSERT_LT(raw.Entries("").size(), live.size());
  }
  {
    auto l = Open(dir.path());
    ASSERT_TRUE(l->SyncAuditIndex().ok());
    EXPECT_EQ(Ask(*l), FromLog(logged));
  }
  {
    RawAudit raw(dir.path());
    EXPECT_EQ(raw.Entries(""), live);
    raw.Delete(std::string(keys::kIndexedThrough));
  }
  {
    auto l = Open(dir.path());  // no watermark: everything was indexed by its commits
    ASSERT_TRUE(l->SyncAuditIndex().ok());
    const DecisionReadStats before = l->DecisionReads();
    EXPECT_EQ(Ask(*l), FromLog(logged));
    EXPECT_EQ(l->DecisionReads().tail_reads - before.tail_reads, 0u);
  }
  RawAudit raw(dir.path());
  EXPECT_EQ(raw.Entries(""), live);
}

// The audit index rebuilt from the decision log equals the live one, byte for byte: Rebuild finds
// no difference in an intact store, names every entry that is missing, altered or extra, and its
// repair writes back exactly what the indexer wrote. Entries of an older layout are no difference
// and a repair rewrites them in today's.
TEST(AuditIndexerTest, TheRebuiltIndexEqualsTheLiveOne) {
  TempDir dir;
  std::vector<model::Decision> logged;
  {
    auto l = Open(dir.path());
    Fill(*l, 4, /*change=*/2);
    logged = Logged(*l);
    auto report = l->Rebuild(false);
    ASSERT_TRUE(report.ok()) << report.status().ToString();
    EXPECT_TRUE(report->differences.empty());
    EXPECT_EQ(report->decisions_indexed, 40u);
    // c, a and t for each decision, r for the 8 with a reason per pass of 10.
    EXPECT_EQ(report->index_entries, 40u * 3 + 16);
    EXPECT_EQ(report->index_older_layout, 0u);
  }
  std::vector<std::pair<std::string, std::string>> live;
  {
    RawAudit raw(dir.path());
    live = raw.Entries("");
    for (const auto& [key, value] : live) {
      if (key != keys::kIndexedThrough) raw.Delete(key);
    }
  }
  {
    auto l = Open(dir.path());
    auto report = l->Rebuild(false);
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report->differences.size(), live.size() - 1);  // every entry and template
    auto repaired = l->Rebuild(true);
    ASSERT_TRUE(repaired.ok());
    EXPECT_TRUE(repaired->repaired);
    EXPECT_TRUE(l->Rebuild(false)->differences.empty());
  }
  {
    RawAudit raw(dir.path());
    EXPECT_EQ(raw.Entries(""), live);
    // An altered time entry, an altered CronJob value, an entry no decision has.
    for (const auto& [key, value] : live) {
      if (key[0] == 't') {
        raw.Put(key, "\x7f");
        break;
      }
    }
    std::string c_key;
    for (const auto& [key, value] : live) {
      if (key[0] == 'c') {
        c_key = key;
        raw.Put(key, value.substr(0, value.size() - 1) + "x");
        break;
      }
    }
    raw.Put(keys::ByActionPrefix(DecisionAction::kDeleteJob) + std::string(16, '\1'), "");
  }
  {
    auto l = Open(dir.path());
    auto report = l->Rebuild(true);
    ASSERT_TRUE(report.ok());
    ASSERT_EQ(report->differences.size(), 3u);
    std::vector<std::string> described;
    for (const auto& d : report->differences) described.push_back(d.key);
    EXPECT_NE(std::find(described.begin(), described.end(), "audit c ns/a seq 1"), described.end())
        << ::testing::PrintToString(described);
  }
  {
    RawAudit raw(dir.path());
    EXPECT_EQ(raw.Entries(""), live);
  }
  // A missing entry and an extra one at once: both found (their numbers cancel out).
  {
    RawAudit raw(dir.path());
    for (const auto& [key, value] : live) {
      if (key[0] == 'a') {
        raw.Delete(key);
        break;
      }
    }
    raw.Put(keys::ByTimePrefix() + std::string(16, '\2'), "x");
  }
  {
    auto l = Open(dir.path());
    auto report = l->Rebuild(true);
    ASSERT_TRUE(report.ok());
    EXPECT_EQ(report->differences.size(), 2u);
  }
  {
    RawAudit raw(dir.path());
    EXPECT_EQ(raw.Entries(""), live);
  }
  // Older layouts read back as the same decisions: no difference; a repair upgrades them.
  RewriteCronJobIndexValues(dir.path(), logged, [](model::Decision d) {
    std::string v;
    cjx::EncodeV1(d, &v);
    return v;
  });
  {
    auto l = Open(dir.path());
    auto report = l->Rebuild(false);
    ASSERT_TRUE(report.ok());
    EXPECT_TRUE(report->differences.empty());
    EXPECT_EQ(report->index_older_layout, 40u);
    EXPECT_EQ(Ask(*l), FromLog(logged));
    report = l->Rebuild(true);
    ASSERT_TRUE(report.ok());
    EXPECT_TRUE(report->repaired);
  }
  RawAudit raw(dir.path());
  EXPECT_EQ(raw.Entries(""), live);
}

}  // namespace
}  // namespace cronledger::store
