// Adherence arithmetic on a hand-built ledger: an outage with unaccounted fire times, pending
// fire times after the horizon, range records, policy changes, Job outcomes.
#include "audit/adherence.h"

#include <gtest/gtest.h>

#include "audit/testing.h"

namespace cronledger::audit {
namespace {

using model::DecisionAction;
using testing::At;
using testing::HandLedger;

class AdherenceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = model::OpenSystemTimeZoneDb({});
    ASSERT_TRUE(db.ok()) << db.status().ToString();
    tzdb_ = std::move(*db);
    // "ns/hourly", created 00:30: fire times 01:00, 02:00, ... Controller down 03:30-06:30. The
    // createJob records carry their Job object, as the controller's do.
    h_.WithJsonMembers();
    h_.AddCronJob("ns", "hourly", "0 * * * *", At(0, 30));
    h_.Decide("ns", "hourly", At(1, 0, 1), DecisionAction::kCreateJob, At(1));
    h_.AddJob("ns", "hourly", HandLedger::JobName("hourly", At(1)), "");
    h_.AddJob("ns", "hourly", HandLedger::JobName("hourly", At(1)), "Complete");
    h_.Decide("ns", "hourly", At(2, 0, 0, 100), DecisionAction::kSkipped, At(2),
              "ConcurrencyForbid");
    h_.Decide("ns", "hourly", At(3, 0, 5), DecisionAction::kCreateJob, At(3));
    h_.AddJob("ns", "hourly", HandLedger::JobName("hourly", At(3)), "Failed");
    // 04:00, 05:00, 06:00: no pass, no record (never caught up).
    h_.Decide("ns", "hourly", At(7, 0, 2), DecisionAction::kCreateJob, At(7));
    h_.AddJob("ns", "hourly", HandLedger::JobName("hourly", At(7)), "");
    h_.Decide("ns", "hourly", At(8, 0, 0, 500), DecisionAction::kCreateJob, At(8));
    // Another CronJob's pass at 10:00 sets the ledger horizon.
    h_.AddCronJob("other", "daily", "0 10 * * *", At(0));
    h_.Decide("other", "daily", At(10, 0, 1), DecisionAction::kCreateJob, At(10), "", "0 10 * * *");
  }

  AdherenceReport Report(Time since, Time until, const std::string& ns = "",
                         const std::string& name = "") {
    AdherenceOptions o;
    o.since = since;
    o.until = until;
    o.namespace_ = ns;
    o.name = name;
    o.with_slots = true;
    auto r = ComputeAdherence(h_.ledger(), *tzdb_, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : AdherenceReport{};
  }

  HandLedger h_;
  std::unique_ptr<model::TimeZoneDb> tzdb_;
};

TEST_F(AdherenceTest, OutageLeavesUnaccountedFireTimes) {
  AdherenceReport r = Report(At(0), At(9), "ns");
  ASSERT_EQ(r.items.size(), 1u);
  const CronJobAdherence& a = r.items[0];
  EXPECT_EQ(a.expected, 8u);  // 01:00 .. 08:00 (created 00:30)
  EXPECT_EQ(a.created, 4u);
  EXPECT_EQ(a.skipped, 1u);
  EXPECT_EQ(a.skipped_by_reason.at("ConcurrencyForbid"), 1u);
  EXPECT_EQ(a.unaccounted, 3u);
  EXPECT_EQ(a.pending, 0u);
  ASSERT_TRUE(AdherencePercent(a).has_value());
  EXPECT_DOUBLE_EQ(*AdherencePercent(a), 62.5);
  EXPECT_DOUBLE_EQ(*ExecutedPercent(a), 50.0);
  std::vector<std::string> statuses;
  for (const Slot& s : a.slots) statuses.push_back(FormatRfc3339(s.scheduled) + " " + s.status);
  EXPECT_EQ(statuses, (std::vector<std::string>{
                          "2026-01-01T01:00:00Z created", "2026-01-01T02:00:00Z skipped",
                          "2026-01-01T03:00:00Z created", "2026-01-01T04:00:00Z unaccounted",
                          "2026-01-01T05:00:00Z unaccounted", "2026-01-01T06:00:00Z unaccounted",
                          "2026-01-01T07:00:00Z created", "2026-01-01T08:00:00Z created"}));
  EXPECT_EQ(*a.slots[0].skew, std::chrono::seconds(1));
  ASSERT_TRUE(a.max_skew.has_value());
  EXPECT_EQ(*a.max_skew, std::chrono::seconds(5));
}

TEST_F(AdherenceTest, JobOutcomesComeFromRecordedJobEvents) {
  const CronJobAdherence a = Report(At(0), At(9), "ns").items.at(0);
  EXPECT_EQ(a.slots[0].outcome, "succeeded");
  EXPECT_EQ(a.slots[2].outcome, "failed");
  EXPECT_EQ(a.slots[6].outcome, "running");
  EXPECT_EQ(a.slots[7].outcome, "unknown");  // no Job event recorded
  EXPECT_EQ(a.succeeded, 1u);
  EXPECT_EQ(a.failed, 1u);
  EXPECT_EQ(a.running, 1u);
  EXPECT_EQ(a.outcome_unknown, 1u);
}

TEST_F(AdherenceTest, FireTimesAfterTheHorizonArePendingNotUnaccounted) {
  const CronJobAdherence a = Report(At(8, 30), At(12), "ns").items.at(0);
  // 09:00 and 10:00 are before the horizon (10:00:01) without a record; 11:00 is after it.
  EXPECT_EQ(a.expected, 3u);
  EXPECT_EQ(a.unaccounted, 2u);  // 09:00, 10:00
  EXPECT_EQ(a.pending, 1u);      // 11:00
  EXPECT_DOUBLE_EQ(*AdherencePercent(a), 0.0);
}

// Fire times the controller's accounting still holds (its pending slot, or after the point it
// has accounted through) are pending, not unaccounted, although the ledger went on past them;
// a missing record at or before accounted_through stays unaccounted.
TEST_F(AdherenceTest, FireTimesHeldByTheControllersAccountingArePending) {
  // ns/hourly: last pass 08:00 created 08:00; 09:00 and 10:00 have no record (horizon 10:00:01).
  model::AccountingState s;
  s.accounted_through = At(8);
  s.pending_slot = At(9);
  s.pending_reason = "ConcurrencyForbid";
  h_.SetAccounting("ns", "hourly", "uid-hourly", s);
  CronJobAdherence a = Report(At(8, 30), At(12), "ns").items.at(0);
  EXPECT_EQ(a.expected, 3u);
  EXPECT_EQ(a.unaccounted, 0u);
  EXPECT_EQ(a.pending, 3u);       // 09:00 and 10:00 held, 11:00 after the horizon
  EXPECT_EQ(a.pending_held, 2u);  // 09:00, 10:00
  ASSERT_EQ(a.slots.size(), 3u);
  EXPECT_TRUE(a.slots[0].held);
  EXPECT_EQ(a.slots[0].reason, "ConcurrencyForbid");
  EXPECT_TRUE(a.slots[1].held);
  EXPECT_EQ(a.slots[1].reason, "");  // not reached by a pass yet
  EXPECT_FALSE(a.slots[2].held);
  EXPECT_FALSE(AdherencePercent(a).has_value());  // nothing due
  const model::Json j = EncodeAdherence(a);
  EXPECT_EQ(j["pendingHeld"], 2);
  EXPECT_EQ(j["slots"][0]["held"], true);
  EXPECT_EQ(j["slots"][0]["reason"], "ConcurrencyForbid");

  // The accounting claims 09:00 is done, but there is no record: unaccounted. 10:00 is held.
  s.accounted_through = At(9);
  s.pending_slot = At(10);
  h_.SetAccounting("ns", "hourly", "uid-hourly", s);
  a = Report(At(8, 30), At(12), "ns").items.at(0);
  EXPECT_EQ(a.unaccounted, 1u);
  EXPECT_EQ(a.pending_held, 1u);
  EXPECT_EQ(a.slots[0].status, "unaccounted");

  // The outage earlier in the day is before accounted_through: still unaccounted.
  EXPECT_EQ(Report(At(0), At(9), "ns").items.at(0).unaccounted, 3u);

  // A state of another incarnation (a CronJob recreated under the same name) is not evidence.
  h_.SetAccounting("ns", "hourly", "uid-older", s);
  a = Report(At(8, 30), At(12), "ns").items.at(0);
  EXPECT_EQ(a.unaccounted, 2u);
  EXPECT_EQ(a.pending_held, 0u);
}

TEST_F(AdherenceTest, TotalsSumEveryCronJob) {
  AdherenceReport r = Report(At(0), At(11));
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[1].namespace_, "other");
  EXPECT_EQ(r.items[1].created, 1u);
  EXPECT_EQ(r.totals.expected, r.items[0].expected + r.items[1].expected);
  EXPECT_EQ(r.totals.created, r.items[0].created + r.items[1].created);
  ASSERT_TRUE(r.horizon.has_value());
  EXPECT_EQ(*r.horizon, At(10, 0, 1));
}

// A slot needs no Job object: the report reads each CronJob's range from the CronJob index entries
// alone, no decision from the decision log.
TEST_F(AdherenceTest, ReportReadsTheCronJobIndexAloneNotTheDecisionLog) {
  // The index follows the commits on its own thread; what it covers is what is counted here.
  ASSERT_TRUE(h_.ledger().SyncAuditIndex().ok());
  testing::CountingLedger counting(h_.ledger());
  AdherenceOptions o;
  o.since = At(0);
  o.until = At(11);
  auto r = ComputeAdherence(counting, *tzdb_, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->totals.created, 5u);  // hourly at 1, 3, 7, 8h and daily at 10h
  EXPECT_EQ(counting.by_cronjob, 0u);
  EXPECT_EQ(counting.summaries, 6u);  // hourly's 5 records and daily's 1
  EXPECT_EQ(counting.FromIndex(), 6u);
  EXPECT_EQ(counting.LogReads(), 0u);
}

TEST(AdherenceRanges, RangeRecordAccountsEveryFireTimeItCovers) {
  HandLedger h;
  auto tzdb = model::OpenSystemTimeZoneDb({});
  ASSERT_TRUE(tzdb.ok());
  h.AddCronJob("ns", "q", "*/15 * * * *", At(0, 5));
  h.Decide("ns", "q", At(2, 0, 1), DecisionAction::kSkipped, At(0, 15), "TooManyMissed",
           "*/15 * * * *", At(1, 45));
  h.Decide("ns", "q", At(2, 0, 1), DecisionAction::kCreateJob, At(2), "", "*/15 * * * *");
  AdherenceOptions o;
  o.since = At(0);
  o.until = At(2, 1);
  auto r = ComputeAdherence(h.ledger(), **tzdb, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const CronJobAdherence& a = r->items.at(0);
  EXPECT_EQ(a.expected, 8u);  // 00:15 .. 02:00
  EXPECT_EQ(a.skipped_by_reason.at("TooManyMissed"), 7u);
  EXPECT_EQ(a.created, 1u);
  EXPECT_EQ(a.unaccounted, 0u);
  EXPECT_DOUBLE_EQ(*AdherencePercent(a), 100.0);
}

TEST(AdherencePolicy, FireTimesFollowThePolicyInForceAtEachPass) {
  HandLedger h;
  auto tzdb = model::OpenSystemTimeZoneDb({});
  ASSERT_TRUE(tzdb.ok());
  h.AddCronJob("ns", "c", "*/30 * * * *", At(0, 30));
  h.Decide("ns", "c", At(1, 0, 1), DecisionAction::kCreateJob, At(1), "", "0 * * * *");
  // The spec changed to every 30 minutes; the pass at 02:10 read it.
  h.Decide("ns", "c", At(2, 10), DecisionAction::kRequeue, std::nullopt, "", "*/30 * * * *");
  h.Decide("ns", "c", At(2, 30, 1), DecisionAction::kCreateJob, At(2, 30), "", "*/30 * * * *");
  h.Decide("ns", "c", At(3, 0, 1), DecisionAction::kCreateJob, At(3), "", "*/30 * * * *");
  AdherenceOptions o;
  o.since = At(0, 30);
  o.until = At(3, 10);
  o.with_slots = true;
  auto r = ComputeAdherence(h.ledger(), **tzdb, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const CronJobAdherence& a = r->items.at(0);
  // 01:00 under the hourly schedule; 01:30, 02:00 were due under the new one with no record.
  EXPECT_EQ(a.expected, 5u);
  EXPECT_EQ(a.created, 3u);
  EXPECT_EQ(a.unaccounted, 2u);
  EXPECT_EQ(FormatRfc3339(a.slots[1].scheduled), "2026-01-01T01:30:00Z");
}

TEST(AdherenceErrors, EmptyWindowAndUnknownCronJob) {
  HandLedger h;
  auto tzdb = model::OpenSystemTimeZoneDb({});
  ASSERT_TRUE(tzdb.ok());
  AdherenceOptions o;
  o.since = At(2);
  o.until = At(1);
  EXPECT_EQ(ComputeAdherence(h.ledger(), **tzdb, o).status().code(),
            Status::Code::kInvalidArgument);
  o.since = At(0);
  o.until = At(1);
  o.namespace_ = "ns";
  o.name = "nope";
  EXPECT_EQ(ComputeAdherence(h.ledger(), **tzdb, o).status().code(), Status::Code::kNotFound);
}

}  // namespace
}  // namespace cronledger::audit

namespace cronledger::audit {
namespace {

// A handover between two replicas: "a" owned ns/hourly until 03:30 and decided 01:00-03:00, "b"
// owned it from then on, decided 03:00 again (the slot both recorded) and 04:00-05:00. Each
// replica's own report is incomplete; the merged one accounts every fire time once.
TEST(MergedAdherence, AHandoverIsAccountedOnceAcrossSources) {
  auto tzdb = model::OpenSystemTimeZoneDb({});
  ASSERT_TRUE(tzdb.ok());
  HandLedger a, b;
  for (HandLedger* h : {&a, &b}) h->AddCronJob("ns", "hourly", "0 * * * *", At(0, 30));
  a.Decide("ns", "hourly", At(1, 0, 1), DecisionAction::kCreateJob, At(1));
  a.Decide("ns", "hourly", At(2, 0, 1), DecisionAction::kSkipped, At(2), "ConcurrencyForbid");
  a.Decide("ns", "hourly", At(3, 0, 1), DecisionAction::kCreateJob, At(3));
  b.Decide("ns", "hourly", At(3, 31), DecisionAction::kCreateJob, At(3));
  b.Decide("ns", "hourly", At(4, 0, 2), DecisionAction::kCreateJob, At(4));
  b.Decide("ns", "hourly", At(5, 0, 2), DecisionAction::kCreateJob, At(5));
  AdherenceOptions o;
  o.since = At(1);
  o.until = At(5, 30);
  o.with_slots = true;
  o.with_outcomes = false;

  auto alone = ComputeAdherence(a.ledger(), **tzdb, o);
  ASSERT_TRUE(alone.ok());
  EXPECT_EQ(alone->totals.unaccounted + alone->totals.pending, 2u);  // 04:00 and 05:00

  auto r = ComputeMergedAdherence({{"b", &b.ledger()}, {"a", &a.ledger()}}, **tzdb, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->items.size(), 1u);
  const CronJobAdherence& m = r->items[0];
  EXPECT_EQ(m.expected, 5u);
  EXPECT_EQ(m.created, 4u);
  EXPECT_EQ(m.skipped, 1u);
  EXPECT_EQ(m.unaccounted + m.pending + m.unexpected, 0u);
  EXPECT_EQ(r->totals.created, 4u);
  EXPECT_EQ(r->horizon, At(5, 0, 2));
  ASSERT_EQ(m.slots.size(), 5u);
  const std::vector<std::string> source = {"a", "a", "a", "b", "b"};
  for (size_t i = 0; i < m.slots.size(); ++i) EXPECT_EQ(m.slots[i].source, source[i]) << i;
  // 03:00: both recorded a createJob; "a" (first by name) counts, "b"'s is kept beside it.
  ASSERT_EQ(m.slots[2].also_decided_by.size(), 1u);
  EXPECT_EQ(m.slots[2].also_decided_by[0].source, "b");
  EXPECT_EQ(m.slots[2].also_decided_by[0].status, "created");
  EXPECT_TRUE(m.slots[3].also_decided_by.empty());

  // One CronJob by name: found in whichever sources hold it.
  o.namespace_ = "ns";
  o.name = "hourly";
  auto one = ComputeMergedAdherence({{"a", &a.ledger()}, {"b", &b.ledger()}}, **tzdb, o);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->totals.created, 4u);
  o.name = "nope";
  EXPECT_TRUE(ComputeMergedAdherence({{"a", &a.ledger()}}, **tzdb, o).status().IsNotFound());
}

// The new owner's record of a handover's fire time is its adoption of the Job the old owner
// created, decided later: the old owner's create counts, whatever the sources' names, so the
// skew is the Job's own.
TEST(MergedAdherence, TheEarlierCreateOfAHandoverFireTimeCounts) {
  auto tzdb = model::OpenSystemTimeZoneDb({});
  ASSERT_TRUE(tzdb.ok());
  HandLedger a, b;
  for (HandLedger* h : {&a, &b}) h->AddCronJob("ns", "hourly", "0 * * * *", At(0, 30));
  b.Decide("ns", "hourly", At(3, 0, 1), DecisionAction::kCreateJob, At(3));  // the old owner
  a.Decide("ns", "hourly", At(3, 31), DecisionAction::kCreateJob, At(3));    // its adoption
  AdherenceOptions o;
  o.since = At(3);
  o.until = At(3, 30);
  o.with_slots = true;
  o.with_outcomes = false;
  auto r = ComputeMergedAdherence({{"a", &a.ledger()}, {"b", &b.ledger()}}, **tzdb, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->items.size(), 1u);
  const CronJobAdherence& m = r->items[0];
  EXPECT_EQ(m.created, 1u);
  ASSERT_EQ(m.slots.size(), 1u);
  EXPECT_EQ(m.slots[0].source, "b");
  ASSERT_TRUE(m.slots[0].skew.has_value());
  EXPECT_EQ(*m.slots[0].skew, Duration(std::chrono::seconds(1)));
  ASSERT_TRUE(m.max_skew.has_value());
  EXPECT_EQ(*m.max_skew, Duration(std::chrono::seconds(1)));
  ASSERT_EQ(m.slots[0].also_decided_by.size(), 1u);
  EXPECT_EQ(m.slots[0].also_decided_by[0].source, "a");
}

}  // namespace
}  // namespace cronledger::audit
