// Audit queries on real RocksDB temp stores: index choice, in-memory filters, pagination across
// pages and across new commits, one instant holding more than a chunk, counts, bad tokens.
#include "audit/query.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

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
    // Three CronJobs in two namespaces, one pass an hour each for 6 hours; a/x's createJob records
    // carry their Job object.
    h_.WithJsonMembers();
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

TEST_F(QueryTest, NamespaceAndWindowMergeTheNamespacesCronJobRanges) {
  DecisionQuery q;
  q.namespace_ = "a";
  q.since = At(2);
  q.until = At(4);
  EXPECT_EQ(IndexFor(q), "namespace");
  auto got = All(q);
  ASSERT_EQ(got.size(), 4u);  // x and y at 02:00 and 03:00, interleaved by time
  const std::vector<std::string> names = {"x", "y", "x", "y"};
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].cron_job.namespace_, "a");
    EXPECT_EQ(got[i].cron_job.name, names[i]) << i;
  }
  EXPECT_LT(got.front().time, got.back().time);
  EXPECT_EQ(IndexFor({}), "time");
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

// Two sources' ledgers, as an audit store holds them: one listing in (time, source, seq) order,
// each record labelled with its source, paged without loss or repeat at any page size (ties in
// time across sources included).
TEST(QueryMerged, PagesOfSeveralSourcesConcatenateToTheirMergedOrder) {
  HandLedger a, b;
  for (int hour = 1; hour <= 4; ++hour) {
    a.Decide("n", "x", At(hour, 0, 1), DecisionAction::kCreateJob, At(hour));
    b.Decide("n", "x", At(hour, 0, 1), DecisionAction::kSkipped, At(hour), "Suspended");
    b.Decide("n", "y", At(hour, 0, 5), DecisionAction::kRequeue, std::nullopt);
  }
  const std::vector<SourceLedger> sources = {{"replica-b", &b.ledger()},
                                             {"replica-a", &a.ledger()}};
  auto whole = QueryMergedDecisions(sources, {});
  ASSERT_TRUE(whole.ok()) << whole.status().ToString();
  ASSERT_EQ(whole->items.size(), 12u);
  ASSERT_EQ(whole->sources.size(), 12u);
  EXPECT_TRUE(whole->continue_token.empty());
  std::vector<std::pair<std::string, uint64_t>> order;
  for (size_t i = 0; i < whole->items.size(); ++i) {
    order.emplace_back(whole->sources[i], whole->items[i].seq);
    if (i == 0) continue;
    const auto key = [&](size_t k) {
      return std::tuple(whole->items[k].time, whole->sources[k], whole->items[k].seq);
    };
    EXPECT_LT(key(i - 1), key(i)) << i;
  }
  EXPECT_EQ(whole->sources[0], "replica-a");  // the tie at 01:00:01 goes to the first name
  EXPECT_EQ(whole->items[0].action, DecisionAction::kCreateJob);
  EXPECT_EQ(whole->sources[1], "replica-b");
  EXPECT_EQ(whole->items[1].action, DecisionAction::kSkipped);

  for (size_t limit : {1u, 2u, 5u}) {
    DecisionQuery q;
    q.limit = limit;
    std::vector<std::pair<std::string, uint64_t>> paged;
    for (int pages = 0; pages < 20; ++pages) {
      auto page = QueryMergedDecisions(sources, q);
      ASSERT_TRUE(page.ok()) << page.status().ToString();
      EXPECT_LE(page->items.size(), limit);
      for (size_t i = 0; i < page->items.size(); ++i) {
        paged.emplace_back(page->sources[i], page->items[i].seq);
      }
      if (page->continue_token.empty()) break;
      q.continue_token = page->continue_token;
    }
    EXPECT_EQ(paged, order) << "limit " << limit;
  }

  DecisionQuery skipped;
  skipped.action = DecisionAction::kSkipped;
  auto only = QueryMergedDecisions(sources, skipped);
  ASSERT_TRUE(only.ok());
  EXPECT_EQ(only->items.size(), 4u);
  for (const std::string& s : only->sources) EXPECT_EQ(s, "replica-b");

  auto counts = CountMergedDecisions(sources, {});
  ASSERT_TRUE(counts.ok());
  std::map<std::string, uint64_t> by_action;
  for (const auto& c : *counts) by_action[c.action] += c.count;
  EXPECT_EQ(by_action["createJob"], 4u);
  EXPECT_EQ(by_action["skipped"], 4u);
  EXPECT_EQ(by_action["requeue"], 4u);

  DecisionQuery bad;
  bad.continue_token = EncodeContinueToken(At(2), 3);  // a single ledger's token names no source
  EXPECT_EQ(QueryMergedDecisions(sources, bad).status().code(), Status::Code::kInvalidArgument);
  bad.continue_token += "-zz";
  EXPECT_EQ(QueryMergedDecisions(sources, bad).status().code(), Status::Code::kInvalidArgument);
}

// Every filter is served from an index range: the records read are those of the index range the
// filter names (the CronJob's, the reason's, the window's), never the decision log. The CronJob
// index covers the records: a CronJob or namespace query reads no decision from the log, neither
// for rows and counts (summaries) nor for whole records (their Job objects come from the CronJob's
// Job template, one read per template); the action, reason and time indexes read every decision
// of their range from the log.
TEST_F(QueryTest, EveryFilterReadsOnlyItsIndexRange) {
  // The index follows the commits on its own thread; what it covers is what is counted here.
  ASSERT_TRUE(h_.ledger().SyncAuditIndex().ok());
  testing::CountingLedger counting(h_.ledger());
  struct Case {
    const char* what;
    DecisionQuery q;
    size_t matched;
    uint64_t read;            // the size of the index range
    uint64_t full_log_reads;  // decisions read from the log for whole records
    uint64_t template_reads;  // Job templates read for whole records
  };
  DecisionQuery with_jobs;
  with_jobs.cron_job_namespace = "a";
  with_jobs.cron_job_name = "x";
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
  DecisionQuery ns_all;
  ns_all.namespace_ = "a";
  DecisionQuery ns_since = ns_all;
  ns_since.since = At(3);
  DecisionQuery ns_empty;
  ns_empty.namespace_ = "none";
  const std::vector<Case> cases = {
      {"cronjob (reason in memory)", cronjob, 3, 6, 0, 0},  // a/y's 6 records (skips)
      {"cronjob + window", cronjob_window, 2, 3, 0, 0},     // a/y at 2, 3, 4h
      // a/x's 6 createJob records: the first Job object inline, the next 5 from its template
      {"cronjob with Job objects", with_jobs, 6, 6, 0, 1},
      {"action", action, 6, 6, 6, 0},
      // the reason index with the action filtered by the store; namespace in memory
      {"action + reason + namespace", action_reason, 3, 3, 3, 0},
      {"reason + since", reason_window, 2, 2, 2, 0},  // TooLate at 4h and 6h
      {"namespace + window", ns_window, 2, 2, 0, 0},  // b/z's 2 records in the window, no others
      {"namespace", ns_all, 12, 12, 0, 1},            // a/x's and a/y's 6 each
      {"namespace + since", ns_since, 8, 8, 0, 1},    // a/x and a/y at 3..6h
      {"empty namespace", ns_empty, 0, 0, 0, 0},
  };
  for (const Case& c : cases) {
    const bool covered = IndexFor(c.q) == "cronjob" || IndexFor(c.q) == "namespace";
    counting.Reset();
    auto page = QueryDecisions(counting, c.q);
    ASSERT_TRUE(page.ok()) << c.what;
    EXPECT_EQ(page->items.size(), c.matched) << c.what;
    EXPECT_EQ(counting.Read(), c.read) << c.what;
    EXPECT_EQ(counting.log_scanned, 0u) << c.what;
    EXPECT_EQ(counting.LogReads(), c.full_log_reads) << c.what;
    EXPECT_EQ(counting.TemplateReads(), c.template_reads) << c.what;
    // -n alone: one skip scan for the names, then one call per CronJob (each range is < a chunk).
    const bool by_namespace = IndexFor(c.q) == "namespace";
    EXPECT_EQ(counting.name_calls, by_namespace ? 1u : 0u) << c.what;
    if (by_namespace) {
      EXPECT_EQ(counting.index_calls, c.q.namespace_ == "a"   ? 2u
                                      : c.q.namespace_ == "b" ? 1u
                                                              : 0u)
          << c.what;
    }
    // Rows (summary): the same items without their Json members, and for the CronJob index no
    // read of the decision log at all.
    DecisionQuery rows = c.q;
    rows.summary = true;
    counting.Reset();
    auto summary = QueryDecisions(counting, rows);
    ASSERT_TRUE(summary.ok()) << c.what;
    ASSERT_EQ(summary->items.size(), page->items.size()) << c.what;
    for (size_t i = 0; i < page->items.size(); ++i) {
      model::Decision whole = page->items[i];
      whole.job_object = nullptr;
      whole.status = nullptr;
      EXPECT_EQ(summary->items[i], whole) << c.what;
    }
    EXPECT_EQ(counting.Read(), c.read) << c.what;
    EXPECT_EQ(counting.LogReads(), covered ? 0u : c.read) << c.what;
    EXPECT_EQ(counting.FromIndex(), covered ? c.read : 0u) << c.what;
    counting.Reset();
    auto counts = CountDecisions(counting, c.q);
    ASSERT_TRUE(counts.ok()) << c.what;
    uint64_t total = 0;
    for (const auto& n : *counts) total += n.count;
    EXPECT_EQ(total, c.matched) << c.what;
    EXPECT_EQ(counting.Read(), c.read) << c.what;
    EXPECT_EQ(counting.log_scanned, 0u) << c.what;
    EXPECT_EQ(counting.LogReads(), covered ? 0u : c.read) << c.what;
  }
}

// -n without --cronjob merges per-CronJob ranges; the answer must be exactly what the time index
// filtered by namespace gives (the order, the pages and their tokens): checked against that
// reference on a ledger with prefix-sharing names and namespaces, a deleted CronJob, decisions of
// several CronJobs at one instant, and ranges longer than the merge's first chunks.
TEST(QueryNamespace, MergedRangesEqualTheFilteredTimeIndexPageByPage) {
  HandLedger h;
  const std::vector<std::pair<std::string, std::string>> cron_jobs = {
      {"a", "a"}, {"a", "ab"}, {"a", "a-b"}, {"a", "gone"}, {"ab", "a"}, {"a-b", "b"}, {"b", "a"}};
  h.AddCronJob("a", "gone", "0 * * * *", At(0));
  // 120 passes; every CronJob decides at some of them, several CronJobs share an instant and some
  // passes record two decisions of one CronJob at the same instant.
  for (int pass = 0; pass < 120; ++pass) {
    for (size_t c = 0; c < cron_jobs.size(); ++c) {
      if ((pass + static_cast<int>(c)) % 3 == 0) continue;
      const auto& [ns, name] = cron_jobs[c];
      const Time t = At(1, pass / 2, 0, pass % 2 == 0 ? 0 : 500);
      const auto action = pass % 5 == 0 ? DecisionAction::kSkipped : DecisionAction::kCreateJob;
      h.Decide(ns, name, t, action, t, action == DecisionAction::kSkipped ? "TooLate" : "");
      if (pass % 7 == 0) h.Decide(ns, name, t, DecisionAction::kUpdateStatus, std::nullopt);
    }
  }
  h.DeleteCronJob("a", "gone");
  ASSERT_TRUE(h.ledger().GetCronJob("a", "gone").status().IsNotFound());
  auto names = h.ledger().DecisionCronJobNames("a");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "a-b", "ab", "gone"}));

  // The reference: the time index over the window, the namespace kept in memory.
  auto reference = [&](const DecisionQuery& q) {
    DecisionQuery all = q;
    all.namespace_.clear();
    all.limit = 0;
    all.continue_token.clear();
    auto page = QueryDecisions(h.ledger(), all);
    EXPECT_TRUE(page.ok());
    EXPECT_EQ(page->index, "time");
    std::vector<model::Decision> out;
    for (const auto& d : page->items) {
      if (d.cron_job.namespace_ == q.namespace_) out.push_back(d);
    }
    return out;
  };
  struct Window {
    std::optional<Time> since, until;
  };
  const std::vector<Window> windows = {
      {}, {At(1, 10), std::nullopt}, {std::nullopt, At(1, 20, 0, 500)}, {At(1, 5), At(1, 6)}};
  for (const char* ns : {"a", "ab", "a-b", "b", "none"}) {
    for (const Window& w : windows) {
      for (size_t limit : {size_t{0}, size_t{1}, size_t{7}, size_t{50}}) {
        DecisionQuery q;
        q.namespace_ = ns;
        q.since = w.since;
        q.until = w.until;
        q.limit = limit;
        const std::vector<model::Decision> want = reference(q);
        const std::string what = std::string(ns) + " window " +
                                 std::to_string(&w - windows.data()) + " limit " +
                                 std::to_string(limit);
        std::vector<uint64_t> got;
        for (int pages = 0; pages < 2000; ++pages) {
          auto page = QueryDecisions(h.ledger(), q);
          ASSERT_TRUE(page.ok()) << what << ": " << page.status().ToString();
          EXPECT_EQ(page->index, "namespace");
          const size_t before = got.size();
          for (uint64_t s : Seqs(page->items)) got.push_back(s);
          // Full pages while more follow; the token names the page's last item.
          if (page->continue_token.empty()) {
            EXPECT_EQ(got.size(), want.size()) << what;
            break;
          }
          ASSERT_EQ(page->items.size(), limit) << what;
          ASSERT_LT(got.size(), want.size()) << what;
          EXPECT_EQ(page->continue_token,
                    EncodeContinueToken(want[got.size() - 1].time, want[got.size() - 1].seq))
              << what << " page at " << before;
          q.continue_token = page->continue_token;
        }
        EXPECT_EQ(got, Seqs(want)) << what;
      }
      // Counts: the same records as the reference, by (action, reason).
      DecisionQuery q;
      q.namespace_ = ns;
      q.since = w.since;
      q.until = w.until;
      std::map<std::pair<std::string, std::string>, uint64_t> want_counts;
      for (const auto& d : reference(q)) {
        ++want_counts[{std::string(model::DecisionActionName(d.action)), d.reason}];
      }
      auto counts = CountDecisions(h.ledger(), q);
      ASSERT_TRUE(counts.ok());
      std::map<std::pair<std::string, std::string>, uint64_t> got_counts;
      for (const auto& c : *counts) got_counts[{c.action, c.reason}] = c.count;
      EXPECT_EQ(got_counts, want_counts) << ns;
    }
  }
  // The namespace with prefix-sharing neighbours holds the deleted CronJob's records too.
  DecisionQuery gone;
  gone.namespace_ = "a";
  size_t gone_records = 0;
  auto all_a = QueryDecisions(h.ledger(), gone);
  ASSERT_TRUE(all_a.ok());
  for (const auto& d : all_a->items) gone_records += d.cron_job.name == "gone";
  EXPECT_GT(gone_records, 0u);
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
