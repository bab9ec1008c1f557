// The versioned family view: what a pass at view_seq S reads, Job owner changes, trimming.

#include "replay/view_history.h"

#include <gtest/gtest.h>

#include "model/json.h"

namespace cronledger::replay {
namespace {

store::LogRecord CronJobEvent(uint64_t seq, model::WatchEventType type, const std::string& name,
                              const std::string& schedule) {
  model::WatchEvent ev;
  ev.type = type;
  ev.kind = model::ObjectKind::kCronJob;
  ev.api_version = "batch/v1";
  ev.namespace_ = "default";
  ev.name = name;
  ev.uid = "uid-" + name;
  ev.resource_version = std::to_string(seq);
  ev.raw =
      model::DumpJson({{"apiVersion", "batch/v1"},
                       {"kind", "CronJob"},
                       {"metadata",
                        {{"name", name},
                         {"namespace", "default"},
                         {"uid", ev.uid},
                         {"resourceVersion", ev.resource_version}}},
                       {"spec", {{"schedule", schedule}, {"jobTemplate", model::Json::object()}}}});
  store::LogRecord r;
  r.seq = seq;
  r.input = ev;
  return r;
}

store::LogRecord JobEvent(uint64_t seq, model::WatchEventType type, const std::string& name,
                          const std::string& owner) {
  model::WatchEvent ev;
  ev.type = type;
  ev.kind = model::ObjectKind::kJob;
  ev.api_version = "batch/v1";
  ev.namespace_ = "default";
  ev.name = name;
  ev.uid = "uid-" + name;
  ev.resource_version = std::to_string(seq);
  ev.owner_name = owner;
  ev.owner_uid = "uid-" + owner;
  model::Json owners = model::Json::array();
  owners.push_back({{"apiVersion", "batch/v1"},
                    {"kind", "CronJob"},
                    {"name", owner},
                    {"uid", ev.owner_uid},
                    {"controller", true}});
  ev.raw = model::DumpJson({{"apiVersion", "batch/v1"},
                            {"kind", "Job"},
                            {"metadata",
                             {{"name", name},
                              {"namespace", "default"},
                              {"uid", ev.uid},
                              {"resourceVersion", ev.resource_version},
                              {"ownerReferences", owners}}},
                            {"spec", model::Json::object()}});
  store::LogRecord r;
  r.seq = seq;
  r.input = ev;
  return r;
}

using model::WatchEventType;

TEST(ViewHistory, APassReadsTheFamilyAsOfItsViewSeq) {
  ViewHistory h;
  ASSERT_TRUE(h.Fold(CronJobEvent(1, WatchEventType::kAdded, "a", "* * * * *")).ok());
  ASSERT_TRUE(h.Fold(JobEvent(2, WatchEventType::kAdded, "a-1", "a")).ok());
  ASSERT_TRUE(h.Fold(CronJobEvent(3, WatchEventType::kModified, "a", "*/5 * * * *")).ok());
  ASSERT_TRUE(h.Fold(JobEvent(4, WatchEventType::kDeleted, "a-1", "a")).ok());

  EXPECT_EQ(h.At("default/a", 0), nullptr);
  auto v1 = h.At("default/a", 1);
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(v1->cron_job->spec.schedule, "* * * * *");
  EXPECT_TRUE(v1->jobs.empty());
  auto v2 = h.At("default/a", 2);
  ASSERT_EQ(v2->jobs.size(), 1u);
  EXPECT_EQ(v2->jobs.at("a-1").seq, 2u);
  auto v3 = h.At("default/a", 3);
  EXPECT_EQ(v3->cron_job->spec.schedule, "*/5 * * * *");
  EXPECT_EQ(v3->cron_job_seq, 3u);
  EXPECT_EQ(v3->jobs.size(), 1u);
  EXPECT_TRUE(h.At("default/a", 100)->jobs.empty());
}

TEST(ViewHistory, AJobThatChangesOwnerMovesBetweenFamilies) {
  ViewHistory h;
  ASSERT_TRUE(h.Fold(JobEvent(1, WatchEventType::kAdded, "j", "a")).ok());
  ASSERT_TRUE(h.Fold(JobEvent(2, WatchEventType::kModified, "j", "b")).ok());
  EXPECT_EQ(h.At("default/a", 1)->jobs.size(), 1u);
  EXPECT_TRUE(h.At("default/a", 2)->jobs.empty());
  EXPECT_EQ(h.At("default/b", 2)->jobs.size(), 1u);
}

TEST(ViewHistory, ScopeFilterStillFollowsAJobLeavingTheFamily) {
  ViewHistory h([](std::string_view, std::string_view name) { return name == "a"; });
  ASSERT_TRUE(h.Fold(CronJobEvent(1, WatchEventType::kAdded, "b", "* * * * *")).ok());
  ASSERT_TRUE(h.Fold(JobEvent(2, WatchEventType::kAdded, "j", "a")).ok());
  ASSERT_TRUE(h.Fold(JobEvent(3, WatchEventType::kModified, "j", "b")).ok());
  EXPECT_EQ(h.Latest("default/b"), nullptr);  // not tracked
  EXPECT_TRUE(h.Latest("default/a")->jobs.empty());
}

TEST(ViewHistory, UndecodableObjectsMakeTheVersionUnreplayable) {
  ViewHistory h;
  store::LogRecord r = CronJobEvent(1, WatchEventType::kAdded, "a", "* * * * *");
  r.raw_pruned = true;
  ASSERT_TRUE(h.Fold(r).ok());
  EXPECT_EQ(h.Latest("default/a")->errors.count("CronJob"), 1u);
  ASSERT_TRUE(h.Fold(CronJobEvent(2, WatchEventType::kModified, "a", "* * * * *")).ok());
  EXPECT_TRUE(h.Latest("default/a")->errors.empty());
}

TEST(ViewHistory, TrimKeepsTheVersionInEffect) {
  ViewHistory h;
  for (uint64_t s = 1; s <= 5; ++s) {
    ASSERT_TRUE(h.Fold(CronJobEvent(s, WatchEventType::kModified, "a", "* * * * *")).ok());
  }
  h.Trim("default/a", 3);
  EXPECT_EQ(h.At("default/a", 2), nullptr);
  EXPECT_EQ(h.At("default/a", 3)->seq, 3u);
  EXPECT_EQ(h.At("default/a", 9)->seq, 5u);
}

TEST(FamilyJobs, ACopyIsSharedUntilEitherSideChanges) {
  FamilyJobs a;
  EXPECT_TRUE(a.empty());
  a.erase("none");  // nothing to erase: stays empty
  a["j1"] = {1, nullptr};
  FamilyJobs b = a;
  b["j2"] = {2, nullptr};
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(b.size(), 2u);
  FamilyJobs c = b;
  c.erase("j1");
  EXPECT_EQ(b.count("j1"), 1u);
  EXPECT_EQ(c.count("j1"), 0u);
  EXPECT_EQ(c.at("j2").seq, 2u);
  FamilyJobs d = c;
  d["j2"].seq = 7;  // through operator[]: the copy only
  EXPECT_EQ(c.at("j2").seq, 2u);
  EXPECT_EQ(d.at("j2").seq, 7u);
  c = FamilyJobs();  // d is now the only holder: changed in place
  d.erase("j2");
  EXPECT_TRUE(d.empty());
  std::vector<std::string> names;
  for (const auto& [name, entry] : b) names.push_back(name + ":" + std::to_string(entry.seq));
  EXPECT_EQ(names, (std::vector<std::string>{"j1:1", "j2:2"}));
}

TEST(ViewHistory, TrimHandsTheForgottenVersionsToTheCaller) {
  ViewHistory h;
  for (uint64_t s = 1; s <= 5; ++s) {
    ASSERT_TRUE(h.Fold(CronJobEvent(s, WatchEventType::kModified, "a", "* * * * *")).ok());
  }
  std::vector<std::shared_ptr<const FamilyView>> released;
  h.Trim("default/a", 4, &released);
  ASSERT_EQ(released.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(released[i]->seq, i + 1);
    EXPECT_EQ(released[i].use_count(), 1);  // the history keeps no reference
  }
  EXPECT_EQ(h.At("default/a", 3), nullptr);
  EXPECT_EQ(h.At("default/a", 4)->seq, 4u);
  h.Trim("default/a", 4, &released);
  EXPECT_EQ(released.size(), 3u);
}

// The changes Fold hands out, applied per family in seq order, give every version the history
// keeps: equal CronJob and Job objects, seqs and errors.
TEST(ViewHistory, ChangesAppliedInOrderGiveEveryVersion) {
  std::vector<store::LogRecord> records;
  records.push_back(CronJobEvent(1, WatchEventType::kAdded, "a", "* * * * *"));
  records.push_back(JobEvent(2, WatchEventType::kAdded, "a-1", "a"));
  records.push_back(JobEvent(3, WatchEventType::kAdded, "a-2", "a"));
  records.push_back(CronJobEvent(4, WatchEventType::kModified, "a", "*/5 * * * *"));
  records.push_back(JobEvent(5, WatchEventType::kModified, "a-1", "b"));  // changes owner
  records.push_back(CronJobEvent(6, WatchEventType::kAdded, "b", "* * * * *"));
  records.push_back(JobEvent(7, WatchEventType::kDeleted, "a-2", "a"));
  records.push_back(JobEvent(8, WatchEventType::kModified, "a-1", "b"));
  records.back().raw_pruned = true;  // does not decode: an error of family b
  records.push_back(CronJobEvent(9, WatchEventType::kModified, "a", "* * * * *"));
  records.back().raw_pruned = true;
  records.push_back(CronJobEvent(10, WatchEventType::kDeleted, "b", ""));
  records.push_back(JobEvent(11, WatchEventType::kModified, "a-1", "b"));
  ViewHistory versions;
  for (const auto& r : records) ASSERT_TRUE(versions.Fold(r).ok());
  for (const bool deferred : {false, true}) {
    SCOPED_TRACE(deferred ? "decode deferred" : "decoded by Fold");
    ViewHistory changed;
    std::vector<FamilyChange> changes;
    changed.SendChangesTo(&changes, deferred);
    for (const auto& r : records) ASSERT_TRUE(changed.Fold(r).ok());
    EXPECT_EQ(changed.Latest("default/a"), nullptr);  // no versions while changes are sent
    std::map<std::string, FamilyView> applied;
    size_t next = 0;
    for (uint64_t seq = 1; seq <= records.size(); ++seq) {
      for (; next < changes.size() && changes[next].seq <= seq; ++next) {
        FamilyChange c = changes[next];
        EXPECT_EQ(c.deferred, deferred && c.op != FamilyChange::Op::kEraseJob &&
                                  (c.op != FamilyChange::Op::kCronJob || c.cron_job_seq != 0));
        changed.DecodeDeferred(&c);
        ApplyFamilyChange(std::move(c), &applied[changes[next].family]);
      }
      for (const std::string family : {"default/a", "default/b"}) {
        SCOPED_TRACE(family + " at " + std::to_string(seq));
        auto v = versions.At(family, seq);
        auto it = applied.find(family);
        ASSERT_EQ(v == nullptr, it == applied.end());
        if (v == nullptr) continue;
        const FamilyView& f = it->second;
        EXPECT_EQ(f.seq, v->seq);
        ASSERT_EQ(f.cron_job == nullptr, v->cron_job == nullptr);
        if (v->cron_job) {
          EXPECT_EQ(model::EncodeCronJob(*f.cron_job), model::EncodeCronJob(*v->cron_job));
        }
        EXPECT_EQ(f.cron_job_seq, v->cron_job_seq);
        EXPECT_EQ(f.errors, v->errors);
        ASSERT_EQ(f.jobs.size(), v->jobs.size());
        for (const auto& [name, entry] : v->jobs) {
          ASSERT_EQ(f.jobs.count(name), 1u) << name;
          EXPECT_EQ(f.jobs.at(name).seq, entry.seq);
          EXPECT_EQ(model::EncodeJob(*f.jobs.at(name).job), model::EncodeJob(*entry.job));
        }
      }
    }
    EXPECT_EQ(next, changes.size());
  }
  EXPECT_EQ(versions.Latest("default/b")->errors.size(), 0u);
  EXPECT_EQ(versions.Latest("default/a")->errors.count("CronJob"), 1u);
}

}  // namespace
}  // namespace cronledger::replay
