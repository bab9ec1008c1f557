#include "controller/typed_view.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "model/job_fields.h"
#include "model/test_events.h"
#include "model/watch_decoder.h"
#include "reconciler/invalid_object.h"
#include "store/test_util.h"

namespace cronledger::controller {
namespace {

using model::ObjectKind;
using model::WatchEventType;
using store::testing::CronJobEvent;
using store::testing::JobEvent;

struct Name {
  ObjectKind kind;
  std::string ns, name;
  friend auto operator<=>(const Name&, const Name&) = default;
};

// Every object of the ledger's view, by kind, namespace and name.
std::map<Name, store::ViewObject> LedgerObjects(store::Ledger& ledger, uint64_t* last_seq) {
  std::map<Name, store::ViewObject> out;
  auto scanned = ledger.ScanViewObjects([&out](store::ViewObject o) {
    Name n{o.entry.kind, o.entry.namespace_, o.entry.name};
    out.emplace(std::move(n), std::move(o));
    return Status::Ok();
  });
  EXPECT_TRUE(scanned.ok()) << scanned.status().ToString();
  if (scanned.ok()) *last_seq = *scanned;
  return out;
}

// `view` holds exactly the ledger's objects, each decoded as a pass reads its bytes, and gives
// each CronJob the Jobs the ledger's view read gives it.
void ExpectEqualsTheLedger(const TypedView& view, store::Ledger& ledger,
                           const std::set<Name>& names, const std::string& where) {
  uint64_t last_seq = 0;
  const std::map<Name, store::ViewObject> objects = LedgerObjects(ledger, &last_seq);
  ASSERT_EQ(view.ObjectCount(), objects.size()) << where;
  for (const auto& [n, stored] : objects) {
    const TypedView::ObjectPtr o = view.Find(n.kind, n.ns, n.name);
    ASSERT_NE(o, nullptr) << where << " " << n.ns << "/" << n.name;
    EXPECT_EQ(o->uid, stored.entry.uid) << where;
    EXPECT_EQ(o->resource_version, stored.entry.resource_version) << where;
    EXPECT_EQ(o->owner_name, stored.entry.owner_name) << where;
    EXPECT_EQ(o->owner_uid, stored.entry.owner_uid) << where;
    EXPECT_EQ(o->source_seq, stored.entry.source_seq) << where;
    if (n.kind == ObjectKind::kCronJob) {
      auto expected = model::DecodeCronJobFields(stored.raw);
      ASSERT_EQ(o->cron_job != nullptr, expected.ok()) << where;
      if (expected.ok()) {
        EXPECT_EQ(o->cron_job->metadata.uid, expected->metadata.uid) << where;
        EXPECT_EQ(o->cron_job->spec.schedule, expected->spec.schedule) << where;
        EXPECT_EQ(model::EncodeCronJob(*o->cron_job), model::EncodeCronJob(*expected)) << where;
      } else {
        EXPECT_EQ(o->error, reconciler::StoredCronJobError(expected.status())) << where;
      }
      auto raw = ledger.GetInputRaw(o->source_seq);
      ASSERT_TRUE(raw.ok()) << where;
      EXPECT_EQ(*raw, stored.raw) << where;
    } else {
      auto expected = model::DecodeJobFields(stored.raw);
      ASSERT_EQ(o->job != nullptr, expected.ok()) << where;
      if (expected.ok()) {
        EXPECT_EQ(o->job->metadata.uid, expected->metadata.uid) << where;
        EXPECT_EQ(o->job->metadata.resource_version, expected->metadata.resource_version);
      } else {
        EXPECT_EQ(o->error, reconciler::StoredJobError(n.name, expected.status())) << where;
      }
    }
  }
  for (const Name& n : names) {
    if (n.kind != ObjectKind::kCronJob) continue;
    auto family = view.Read(n.ns, n.name);
    auto stored = ledger.GetObject(ObjectKind::kCronJob, n.ns, n.name);
    ASSERT_EQ(family.has_value(), stored.ok()) << where << " " << n.name;
    if (!family) continue;
    EXPECT_EQ(family->cron_job->source_seq, stored->entry.source_seq) << where;
    // The Jobs of the ledger's view whose controller owner has the CronJob's name, by name.
    std::vector<uint64_t> expected;
    for (const auto& [job, stored_job] : objects) {
      if (job.kind == ObjectKind::kJob && job.ns == n.ns && stored_job.entry.owner_name == n.name) {
        expected.push_back(stored_job.entry.source_seq);
      }
    }
    std::vector<uint64_t> got;
    for (const TypedView::ObjectPtr& job : family->jobs) got.push_back(job->source_seq);
    EXPECT_EQ(got, expected) << where << " " << n.name;
  }
}

// A random stream of watch events over a few names: adds, updates, deletes of this incarnation
// and of another one, deletes without a uid, Jobs that change owner or lose it, bytes that do not
// decode, bookmarks.
class EventStream {
 public:
  explicit EventStream(uint32_t seed) : rng_(seed) {}

  model::WatchEvent Next() {
    const uint32_t type = rng_() % 12;
    const WatchEventType t = type < 3    ? WatchEventType::kAdded
                             : type < 7  ? WatchEventType::kModified
                             : type < 11 ? WatchEventType::kDeleted
                                         : WatchEventType::kBookmark;
    const std::string rv = std::to_string(++rv_);
    if (t == WatchEventType::kBookmark) {
      model::WatchEvent ev;
      ev.type = t;
      ev.kind = rng_() % 2 == 0 ? ObjectKind::kCronJob : ObjectKind::kJob;
      ev.api_version = "batch/v1";
      ev.resource_version = rv;
      return ev;
    }
    const std::string ns = rng_() % 3 == 0 ? "prod" : "ns";
    const std::string uid = "uid-" + std::to_string(rng_() % 2);
    model::WatchEvent ev;
    if (rng_() % 2 == 0) {
      const std::string name = "cj-" + std::to_string(rng_() % 4);
      names_.insert({ObjectKind::kCronJob, ns, name});
      ev = CronJobEvent(t, ns, name, uid, rv);
    } else {
      const std::string name = "job-" + std::to_string(rng_() % 10);
      const uint32_t owner = rng_() % 6;
      names_.insert({ObjectKind::kJob, ns, name});
      ev = owner >= 4 ? JobEvent(t, ns, name, uid, rv, "", "")
                      : JobEvent(t, ns, name, uid, rv, "cj-" + std::to_string(owner),
                                 "uid-" + std::to_string(rng_() % 2));
    }
    if (t == WatchEventType::kDeleted && rng_() % 4 == 0) ev.uid.clear();
    if (rng_() % 9 == 0) ev.raw = R"({"metadata": {"name": 7}})";  // does not decode
    return ev;
  }
  std::vector<model::WatchEvent> Unit() {
    std::vector<model::WatchEvent> unit(1 + rng_() % 5);
    for (model::WatchEvent& ev : unit) ev = Next();
    return unit;
  }
  const std::set<Name>& names() const { return names_; }

 private:
  std::mt19937 rng_;
  uint64_t rv_ = 0;
  std::set<Name> names_;
};

// A scratch ledger and a view loaded from it.
class TypedViewTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ledger_ = store::testing::OpenScratchLedger(dir_);
    ASSERT_NE(ledger_, nullptr);
    ASSERT_TRUE(view_.Load(*ledger_).ok());
  }
  // Commits `unit` and folds it into the view, as the controller's ingest does.
  std::vector<TypedView::Change> Ingest(const std::vector<model::WatchEvent>& unit,
                                        store::CommitResult* committed) {
    store::UnitOfWork work;
    work.inputs.assign(unit.begin(), unit.end());
    auto result = ledger_->Commit(std::move(work));
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    if (!result.ok()) return {};
    *committed = *result;
    return view_.Apply(unit, result->first_input_seq, result->last_input_seq);
  }

  store::testing::TempDir dir_;
  std::unique_ptr<store::Ledger> ledger_;
  TypedView view_;
};

// The view in memory is the ledger's view: folded unit by unit as the controller folds what it
// commits, and loaded from the ledger at any point, it holds the same objects (decoded), the same
// families and the same seq; each event's change names the object before and after it.
TEST_F(TypedViewTest, FoldedAndLoadedItEqualsTheLedgersView) {
  EXPECT_EQ(view_.ObjectCount(), 0u);
  EventStream events(11);
  for (int unit_no = 1; unit_no <= 400; ++unit_no) {
    std::vector<model::WatchEvent> unit = events.Unit();
    // The object each event finds: the one before it in the unit, else the view's.
    std::map<Name, TypedView::ObjectPtr> before;
    for (const model::WatchEvent& ev : unit) {
      if (ev.type == WatchEventType::kBookmark) continue;
      Name n{ev.kind, ev.namespace_, ev.name};
      if (!before.contains(n)) before[n] = view_.Find(ev.kind, ev.namespace_, ev.name);
    }
    store::CommitResult committed;
    const std::vector<TypedView::Change> changes = Ingest(unit, &committed);
    ASSERT_EQ(changes.size(), unit.size());
    for (size_t i = 0; i < unit.size(); ++i) {
      const model::WatchEvent& ev = unit[i];
      if (ev.type == WatchEventType::kBookmark) {
        EXPECT_EQ(changes[i].prior, nullptr);
        EXPECT_EQ(changes[i].current, nullptr);
        continue;
      }
      TypedView::ObjectPtr& prior = before[{ev.kind, ev.namespace_, ev.name}];
      EXPECT_EQ(changes[i].prior, prior) << "unit " << unit_no << " event " << i;
      if (changes[i].current != nullptr && changes[i].current != prior) {
        EXPECT_EQ(changes[i].current->source_seq, committed.first_input_seq + i);
      }
      prior = changes[i].current;
    }
    for (const auto& [n, object] : before) {
      EXPECT_EQ(view_.Find(n.kind, n.ns, n.name), object) << "unit " << unit_no;
    }
    const std::string where = "unit " + std::to_string(unit_no);
    ExpectEqualsTheLedger(view_, *ledger_, events.names(), where);
    auto family = view_.Read("ns", "cj-0");
    if (family) {
      EXPECT_EQ(family->view_seq, committed.last_input_seq);
    }
    if (unit_no % 50 == 0) {
      TypedView loaded;
      ASSERT_TRUE(loaded.Load(*ledger_).ok());
      ExpectEqualsTheLedger(loaded, *ledger_, events.names(), "loaded at " + where);
      for (const Name& n : events.names()) {
        if (n.kind != ObjectKind::kCronJob) continue;
        auto f = loaded.Read(n.ns, n.name);
        if (f) {
          EXPECT_EQ(f->view_seq, committed.last_input_seq) << where;
        }
      }
    }
  }
}

// A family read stays what it was while ingest replaces and removes its objects.
TEST_F(TypedViewTest, AReadFamilyOutlivesTheObjectsReplacingIt) {
  store::CommitResult committed;
  auto apply = [&](const std::vector<model::WatchEvent>& unit) { Ingest(unit, &committed); };
  apply({CronJobEvent(WatchEventType::kAdded, "ns", "cj", "u1", "1"),
         JobEvent(WatchEventType::kAdded, "ns", "job-b", "j2", "2", "cj", "u1"),
         JobEvent(WatchEventType::kAdded, "ns", "job-a", "j1", "3", "cj", "u1"),
         JobEvent(WatchEventType::kAdded, "ns", "other", "j3", "4", "cj-2", "u9")});
  auto family = view_.Read("ns", "cj");
  ASSERT_TRUE(family.has_value());
  ASSERT_EQ(family->jobs.size(), 2u);  // by name, the other owner's Job not among them
  EXPECT_EQ(family->jobs[0]->job->metadata.name, "job-a");
  EXPECT_EQ(family->jobs[1]->job->metadata.name, "job-b");
  const uint64_t seq = family->view_seq;
  apply({CronJobEvent(WatchEventType::kDeleted, "ns", "cj", "u1", "5"),
         JobEvent(WatchEventType::kModified, "ns", "job-a", "j1", "6", "cj-2", "u9")});
  EXPECT_FALSE(view_.Read("ns", "cj").has_value());
  EXPECT_EQ(family->cron_job->cron_job->metadata.uid, "u1");
  EXPECT_EQ(family->jobs[0]->job->metadata.resource_version, "3");
  EXPECT_EQ(family->view_seq, seq);
  auto other = view_.Read("ns", "cj-2");
  EXPECT_FALSE(other.has_value());  // Jobs name it, but the view has no such CronJob
  apply({CronJobEvent(WatchEventType::kAdded, "ns", "cj-2", "u9", "7")});
  other = view_.Read("ns", "cj-2");
  ASSERT_TRUE(other.has_value());
  ASSERT_EQ(other->jobs.size(), 2u);
  EXPECT_EQ(other->jobs[0]->job->metadata.name, "job-a");
  EXPECT_EQ(other->jobs[1]->job->metadata.name, "other");
}

// An event whose decoder decoded its object (model::WatchDecoder, on the Kubernetes and Kafka
// paths) is not decoded again: the view holds that very object.
TEST_F(TypedViewTest, KeepsTheObjectTheEventsDecoderDecoded) {
  model::WatchDecoder decoder;
  model::DecodedDocument doc = decoder.DecodeCopy(
      model::testing::WatchLine("ADDED", model::testing::CronJobObject("ns", "cj", "u1", 1)));
  doc.events.push_back(
      decoder
          .DecodeCopy(model::testing::WatchLine(
              "ADDED", model::testing::JobObject("ns", "cj-1", "j1", 2, "cj", "u1")))
          .events.at(0));
  ASSERT_EQ(doc.events.size(), 2u);
  ASSERT_NE(doc.events[0].decoded.cron_job, nullptr);
  ASSERT_NE(doc.events[1].decoded.job, nullptr);
  store::CommitResult committed;
  Ingest(doc.events, &committed);
  auto family = view_.Read("ns", "cj");
  ASSERT_TRUE(family.has_value());
  EXPECT_EQ(family->cron_job->cron_job, doc.events[0].decoded.cron_job);  // the same object
  ASSERT_EQ(family->jobs.size(), 1u);
  EXPECT_EQ(family->jobs[0]->job, doc.events[1].decoded.job);
  // Loaded from the ledger it decodes the stored bytes to the same fields.
  TypedView loaded;
  ASSERT_TRUE(loaded.Load(*ledger_).ok());
  auto again = loaded.Read("ns", "cj");
  ASSERT_TRUE(again.has_value());
  EXPECT_NE(again->cron_job->cron_job, doc.events[0].decoded.cron_job);
  EXPECT_EQ(model::EncodeCronJob(*again->cron_job->cron_job),
            model::EncodeCronJob(*doc.events[0].decoded.cron_job));
}

}  // namespace
}  // namespace cronledger::controller
