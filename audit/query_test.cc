// Audit queries on real RocksDB temp stores: index choice, in-memory filters, pagination across
// pages and across new commits, one instant holding more than a chunk, counts, bad tokens.
#include "audit/query.h"

#include <gtest/gtest.h>

#include "audit/testing.h"

namespace cronledger::audit {
namespace {

using model::DecisionAction;
using testing::At;
using testing::HandLedger;

std::vector<uint64_t> Seqs(const std::vector<model::Decision>& ds) {
  std::vector<uint64_t> out;
  for (const auto& d : ds) out.push_back(d.seq);
  return out;
}

class QueryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Three CronJobs in two namespaces, one pass an hour each for 6 hours.
    for (int hour = 1; hour <= 6; ++hour) {
      h_.Decide("a", "x", At(hour, 0, 1), DecisionAction::kCreateJob, At(hour));
      h_.Decide("a", "y", At(hour, 0, 2), DecisionAction::kSkipped, At(hour),
                hour % 2 ? "Suspended" : "TooLate");
      h_.Decide("b", "z", At(hour, 0, 3), DecisionAction::kRequeue, std::nullopt);
    }
  }
  std::vector<model::Decision> All(DecisionQuery q) {
    auto page = QueryDecisions(h_.ledger(), q);
    EXPECT_TRUE(page.ok()) << page.status().ToString();
    return page.ok() ? page->items : std::vector<model::Decision>{};
  }
  HandLedger h_;
};

TEST_F(QueryTest, CronJobFilterUsesTheCronJobIndexAndFiltersActionInMemory) {
  DecisionQuery q;
  q.cron_job_namespace = "a";
  q.cron_job_name = "y";
  q.reason = "TooLate";
  EXPECT_EQ(IndexFor(q), "cronjob");
  auto got = All(q);
  ASSERT_EQ(got.size(), 3u);
  for (const auto& d : got) {
    EXPECT_EQ(d.cron_job.name, "y");
    EXPECT_EQ(d.reason, "TooLate");
  }
}

TEST_F(QueryTest, NamespaceAndWindowUseTheTimeIndex) {
  DecisionQuery q;
  q.namespace_ = "a";
  q.since = At(2);
  q.until = At(4);
  EXPECT_EQ(IndexFor(q), "time");
  auto got = All(q);
  ASSERT_EQ(got.size(), 4u);  // x and y at 02:00 and 03:00
  for (const auto& d : got) EXPECT_EQ(d.cron_job.namespace_, "a");
  EXPECT_LT(got.front().time, got.back().time);
}

TEST_F(QueryTest, ActionAndReasonUseTheirIndexAndNamespaceIsFiltered) {
  DecisionQuery q;
  q.action = DecisionAction::kSkipped;
  q.reason = "Suspended";
  EXPECT_EQ(IndexFor(q), "action+reason");
  EXPECT_EQ(All(q).size(), 3u);
  q.namespace_ = "b";
  EXPECT_TRUE(All(q).empty());
  DecisionQuery r;
  r.action = DecisionAction::kRequeue;
  EXPECT_EQ(IndexFor(r), "action");
  EXPECT_EQ(All(r).size(), 6u);
}

TEST_F(QueryTest, PagesConcatenateToTheWholeResultAndSurviveNewCommits) {
  const std::vector<uint64_t> whole = Seqs(All({}));
  ASSERT_EQ(whole.size(), 18u);
  DecisionQuery q;
  q.limit = 4;
  std::vector<uint64_t> paged;
  bool committed = false;
  for (int pages = 0; pages < 10; ++pages) {
    auto page = QueryDecisions(h_.ledger(), q);
    ASSERT_TRUE(page.ok()) << page.status().ToString();
    EXPECT_LE(page->items.size(), 4u);
    for (uint64_t s : Seqs(page->items)) paged.push_back(s);
    if (!committed) {  // a decision committed between pages lands after the existing ones
      h_.Decide("a", "x", At(9), DecisionAction::kRequeue, std::nullopt);
      committed = true;
    }
    if (page->continue_token.empty()) break;
    q.continue_token = page->continue_token;
  }
  ASSERT_EQ(paged.size(), whole.size() + 1);
  EXPECT_TRUE(std::equal(whole.begin(), whole.end(), paged.begin()));
  EXPECT_EQ(paged.back(), whole.back() + 1);
}

TEST_F(QueryTest, CountsByActionAndReason) {
  DecisionQuery q;
  q.namespace_ = "a";
  auto counts = CountDecisions(h_.ledger(), q);
  ASSERT_TRUE(counts.ok());
  ASSERT_EQ(counts->size(), 3u);
  EXPECT_EQ((*counts)[0].action, "createJob");
  EXPECT_EQ((*counts)[0].count, 6u);
  EXPECT_EQ((*counts)[1].reason, "Suspended");
  EXPECT_EQ((*counts)[2].reason, "TooLate");
  EXPECT_EQ((*counts)[2].count, 3u);
}

TEST_F(QueryTest, MalformedTokensAndWindowsAreInvalidArgument) {
  DecisionQuery q;
  q.continue_token = "zz";
  EXPECT_EQ(QueryDecisions(h_.ledger(), q).status().code(), Status::Code::kInvalidArgument);
  q.continue_token = EncodeContinueToken(At(3), 7);
  EXPECT_TRUE(QueryDecisions(h_.ledger(), q).ok());
  auto back = DecodeContinueToken(q.continue_token);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->first, At(3));
  EXPECT_EQ(back->second, 7u);
  DecisionQuery w;
  w.since = At(3);
  w.until = At(3);
  EXPECT_EQ(QueryDecisions(h_.ledger(), w).status().code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(ParseCronJobKey("noslash").ok());
  EXPECT_FALSE(ParseCronJobKey("a/b/c").ok());
}

// Every filter is served from an index range: the records read are those of the index range the
// filter names (the CronJob's, the reason's, the window's), never the decision log.
TEST_F(QueryTest, EveryFilterReadsOnlyItsIndexRange) {
  testing::CountingLedger counting(h_.ledger());
  struct Case {
    const char* what;
    DecisionQuery q;
    size_t matched;
    uint64_t read;  // the size of the index range
  };
  DecisionQuery cronjob;
  cronjob.cron_job_namespace = "a";
  cronjob.cron_job_name = "y";
  cronjob.reason = "TooLate";
  DecisionQuery cronjob_window = cronjob;
  cronjob_window.since = At(2);
  cronjob_window.until = At(5);
  DecisionQuery action;
  action.action = DecisionAction::kRequeue;
  DecisionQuery action_reason;
  action_reason.action = DecisionAction::kSkipped;
  action_reason.reason = "Suspended";
  action_reason.namespace_ = "a";
  DecisionQuery reason_window;
  reason_window.reason = "TooLate";
  reason_window.since = At(3);
  DecisionQuery ns_window;
  ns_window.namespace_ = "b";
  ns_window.since = At(2);
  ns_window.until = At(4);
  const std::vector<Case> cases = {
      {"cronjob (reason in memory)", cronjob, 3, 6},  // a/y's 6 records
      {"cronjob + window", cronjob_window, 2, 3},     // a/y at 2, 3, 4h
      {"action", action, 6, 6},
      // the reason index with the action filtered by the store; namespace in memory
      {"action + reason + namespace", action_reason, 3, 3},
      {"reason + since", reason_window, 2, 2},  // TooLate at 4h and 6h
      {"namespace + window", ns_window, 2, 6},  // the window's 6 records, b/z's 2 kept
  };
  for (const Case& c : cases) {
    counting.Reset();
    auto page = QueryDecisions(counting, c.q);
    ASSERT_TRUE(page.ok()) << c.what;
    EXPECT_EQ(page->items.size(), c.matched) << c.what;
    EXPECT_EQ(counting.Read(), c.read) << c.what;
    EXPECT_EQ(counting.log_scanned, 0u) << c.what;
    counting.Reset();
    auto counts = CountDecisions(counting, c.q);
    ASSERT_TRUE(counts.ok()) << c.what;
    uint64_t total = 0;
    for (const auto& n : *counts) total += n.count;
    EXPECT_EQ(total, c.matched) << c.what;
    EXPECT_EQ(counting.Read(), c.read) << c.what;
    EXPECT_EQ(counting.log_scanned, 0u) << c.what;
  }
}

TEST(QueryChunks, OneInstantWithMoreDecisionsThanAChunkIsReadWhole) {
  HandLedger h;
  store::UnitOfWork u;
  for (int i = 0; i < 5000; ++i) {
    model::Decision d;
    d.time = At(1);
    d.cron_job = {"ns", i % 2 ? "odd" : "even", "u"};
    d.action = DecisionAction::kRequeue;
    u.decisions.push_back(d);
  }
  model::Decision later;
  later.time = At(2);
  later.cron_job = {"ns", "odd", "u"};
  later.action = DecisionAction::kRequeue;
  u.decisions.push_back(later);
  ASSERT_TRUE(h.ledger().Commit(std::move(u)).ok());
  DecisionQuery q;
  q.namespace_ = "ns";
  auto page = QueryDecisions(h.ledger(), q);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->items.size(), 5001u);
  DecisionQuery one;
  one.cron_job_namespace = "ns";
  one.cron_job_name = "odd";
  one.limit = 2600;
  page = QueryDecisions(h.ledger(), one);
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->items.size(), 2500u + 1);
  EXPECT_TRUE(page->continue_token.empty());
}

}  // namespace
}  // namespace cronledger::audit
