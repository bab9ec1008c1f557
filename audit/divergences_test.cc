// Shadow-mode divergences on a real RocksDB ledger: the record round trip, the reader's filters
// and paging, a record whose detail does not decode, the adherence report's counts by kind, the
// timeline's records and GET /v1/divergences (filters, pages, 400s, the empty answer).
#include "audit/divergences.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include "audit/adherence.h"
#include "audit/api.h"
#include "audit/encode.h"
#include "audit/testing.h"

namespace cronledger::audit {
namespace {

using model::DecisionAction;
using model::Json;
using testing::At;
using testing::HandLedger;

// Two CronJobs of ns (hourly, nightly) and one of other; hourly missed 02:00 (late at 02:03),
// had an unexpected Job at 03:30; nightly missed 00:00 of the next day; other/batch, deleted from
// the view, had an unexpected Job.
class DivergencesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    h_.AddCronJob("ns", "hourly", "0 * * * *", At(0, 30));
    h_.AddCronJob("ns", "nightly", "0 0 * * *", At(0, 30));
    h_.AddCronJob("other", "batch", "0 * * * *", At(0, 30));
    h_.Decide("ns", "hourly", At(1, 0, 1), DecisionAction::kCreateJob, At(1));
    h_.Decide("ns", "hourly", At(2, 0, 1), DecisionAction::kCreateJob, At(2));
    seq_[0] = h_.AddDivergence(
        At(2, 1, 1), kMissedRun, "ns", "hourly", "hourly-2",
        {{"scheduledTime", "2026-01-01T02:00:00Z"}, {"expectedSince", "2026-01-01T02:00:01Z"}});
    seq_[1] = h_.AddDivergence(At(2, 3), kLateRun, "ns", "hourly", "hourly-2",
                               {{"scheduledTime", "2026-01-01T02:00:00Z"}, {"skewSeconds", 180}});
    h_.Decide("ns", "hourly", At(3, 0, 1), DecisionAction::kCreateJob, At(3));
    seq_[2] = h_.AddDivergence(At(3, 31), kUnexpectedJob, "ns", "hourly", "hourly-x",
                               {{"createdAt", "2026-01-01T03:30:00Z"}});
    seq_[3] = h_.AddDivergence(At(3, 32), kUnexpectedJob, "other", "batch", "batch-x");
    h_.DeleteCronJob("other", "batch");
    seq_[4] = h_.AddDivergence(At(24, 1, 1), kMissedRun, "ns", "nightly", "nightly-24",
                               {{"scheduledTime", "2026-01-02T00:00:00Z"}});
  }
  std::vector<uint64_t> Seqs(const DivergenceQuery& q) {
    auto found = ListDivergences(h_.ledger(), q);
    EXPECT_TRUE(found.ok()) << found.status().ToString();
    std::vector<uint64_t> out;
    if (found.ok()) {
      for (const Divergence& d : *found) out.push_back(d.seq);
    }
    return out;
  }

  HandLedger h_;
  uint64_t seq_[5] = {};
};

TEST_F(DivergencesTest, ARecordReadsBackAsWritten) {
  auto all = ListDivergences(h_.ledger(), {});
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 5u);
  const Divergence& late = (*all)[1];
  EXPECT_EQ(late.seq, seq_[1]);
  EXPECT_EQ(late.time, At(2, 3));
  EXPECT_EQ(late.kind, "LateRun");
  EXPECT_EQ(late.namespace_, "ns");
  EXPECT_EQ(late.cron_job, "hourly");
  EXPECT_EQ(late.job, "hourly-2");
  EXPECT_EQ(late.detail["skewSeconds"], 180);
  EXPECT_EQ(DivergenceJson(late), (Json{{"seq", seq_[1]},
                                        {"time", "2026-01-01T02:03:00Z"},
                                        {"kind", "LateRun"},
                                        {"namespace", "ns"},
                                        {"cronJob", "hourly"},
                                        {"job", "hourly-2"},
                                        {"detail",
                                         {{"job", "hourly-2"},
                                          {"scheduledTime", "2026-01-01T02:00:00Z"},
                                          {"skewSeconds", 180}}}}));
  // The stored outcome answers no intent, so replay ignores it.
  model::ActionOutcome o = DivergenceRecord(At(1), kMissedRun, "ns", "hourly", "j", {});
  EXPECT_EQ(o.verb, "divergence");
  EXPECT_EQ(o.decision_seq, 0u);
  EXPECT_EQ(o.kind, model::ObjectKind::kCronJob);
  EXPECT_EQ(o.result, "MissedRun");
  EXPECT_EQ(o.payload, R"({"job":"j"})");
}

TEST_F(DivergencesTest, FiltersAndPages) {
  auto q = [](auto set) {
    DivergenceQuery query;
    set(query);
    return query;
  };
  EXPECT_EQ(Seqs(q([](auto& x) { x.namespace_ = "ns"; })),
            (std::vector<uint64_t>{seq_[0], seq_[1], seq_[2], seq_[4]}));
  EXPECT_EQ(Seqs(q([](auto& x) {
              x.namespace_ = "ns";
              x.cron_job = "nightly";
            })),
            (std::vector<uint64_t>{seq_[4]}));
  EXPECT_EQ(Seqs(q([](auto& x) { x.kind = kUnexpectedJob; })),
            (std::vector<uint64_t>{seq_[2], seq_[3]}));
  EXPECT_EQ(Seqs(q([](auto& x) {
              x.since = At(2, 3);
              x.until = At(3, 32);
            })),
            (std::vector<uint64_t>{seq_[1], seq_[2]}));
  EXPECT_EQ(Seqs(q([&](auto& x) {
              x.after_seq = seq_[1];
              x.limit = 2;
            })),
            (std::vector<uint64_t>{seq_[2], seq_[3]}));
  EXPECT_TRUE(Seqs(q([](auto& x) { x.cron_job = "none"; })).empty());
  EXPECT_EQ(ListDivergences(h_.ledger(), q([](auto& x) { x.kind = "Late"; })).status().message(),
            "unknown divergence kind \"Late\" (MissedRun, LateRun or UnexpectedJob)");
  EXPECT_TRUE(ListDivergences(h_.ledger(), q([](auto& x) {
                                x.since = At(2);
                                x.until = At(2);
                              }))
                  .status()
                  .IsInvalidArgument());
}

// A ledger that remembers where each input scan started.
class ScanStarts : public store::testing::ForwardingLedger {
 public:
  using ForwardingLedger::ForwardingLedger;
  std::vector<uint64_t> starts;
  Status ScanInputs(uint64_t from_seq, bool with_raw,
                    const std::function<bool(const store::LogRecord&)>& fn) override {
    starts.push_back(from_seq);
    return base().ScanInputs(from_seq, with_raw, fn);
  }
};

TEST_F(DivergencesTest, AWindowReadsTheLogFromAnHourBeforeItsStart) {
  ScanStarts scans(h_.ledger());
  DivergenceQuery q;
  q.since = At(24);
  auto found = ListDivergences(scans, q);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), 1u);
  // The inputs before nightly's are stamped before 23:00: the read starts at nightly's record.
  EXPECT_EQ(scans.starts.back(), seq_[4]);
  scans.starts.clear();
  q.since = At(3, 31);  // the unexpected Jobs of 03:31 and 03:32 and nightly's
  found = ListDivergences(scans, q);
  ASSERT_TRUE(found.ok());
  EXPECT_EQ(found->size(), 3u);
  // From the first input stamped at or after 02:31: the inputs up to the LateRun (02:03) and the
  // pass committed after it are skipped.
  EXPECT_EQ(scans.starts.back(), seq_[2]);
  // Without `since` the whole log is read.
  scans.starts.clear();
  ASSERT_TRUE(ListDivergences(scans, {}).ok());
  EXPECT_EQ(scans.starts, (std::vector<uint64_t>{1}));
}

TEST_F(DivergencesTest, ARecordWhoseDetailDoesNotDecodeIsListedWithItsError) {
  model::ActionOutcome bad = DivergenceRecord(At(4), kMissedRun, "ns", "hourly", "j", {});
  bad.payload = "{not json";
  const uint64_t seq = h_.CommitInput(bad);
  DivergenceQuery q;
  q.after_seq = seq - 1;
  auto found = ListDivergences(h_.ledger(), q);
  ASSERT_TRUE(found.ok());
  ASSERT_EQ(found->size(), 1u);
  const Json j = DivergenceJson((*found)[0]);
  EXPECT_EQ(j["seq"], seq);
  EXPECT_EQ(j["kind"], "MissedRun");
  EXPECT_EQ(j["cronJob"], "hourly");
  EXPECT_EQ(j["detail"], Json::object());
  EXPECT_NE(j["error"].get<std::string>().find("detail does not decode"), std::string::npos) << j;
}

class DivergenceReportTest : public DivergencesTest {
 protected:
  void SetUp() override {
    DivergencesTest::SetUp();
    auto db = model::OpenSystemTimeZoneDb({});
    ASSERT_TRUE(db.ok());
    tzdb_ = std::move(*db);
  }
  AdherenceReport Report(Time since, Time until, bool slots = false, std::string ns = "") {
    AdherenceOptions o;
    o.since = since;
    o.until = until;
    o.with_slots = slots;
    o.namespace_ = std::move(ns);
    auto r = ComputeAdherence(h_.ledger(), *tzdb_, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : AdherenceReport{};
  }
  std::unique_ptr<model::TimeZoneDb> tzdb_;
};

TEST_F(DivergenceReportTest, CountsEachCronJobsDivergencesByKindInTheWindow) {
  using Counts = std::map<std::string, uint64_t>;
  AdherenceReport r = Report(At(0), At(12));
  ASSERT_EQ(r.items.size(), 2u);  // other/batch was deleted from the view
  EXPECT_EQ(r.items[0].name, "hourly");
  EXPECT_EQ(r.items[0].divergences_by_kind,
            (Counts{{"MissedRun", 1}, {"LateRun", 1}, {"UnexpectedJob", 1}}));
  EXPECT_EQ(r.items[1].divergences_by_kind,
            (Counts{{"MissedRun", 0}, {"LateRun", 0}, {"UnexpectedJob", 0}}));
  // The totals count other/batch's divergence too: nothing recorded is left out.
  EXPECT_EQ(r.totals.divergences_by_kind,
            (Counts{{"MissedRun", 1}, {"LateRun", 1}, {"UnexpectedJob", 2}}));
  EXPECT_TRUE(r.items[0].divergences.empty()) << "records only with slots";

  const Json j = EncodeReport(Report(At(2, 2), At(25), true, "ns"));
  EXPECT_EQ(j["totals"]["divergencesByKind"],
            (Json{{"MissedRun", 1}, {"LateRun", 1}, {"UnexpectedJob", 1}}));
  const Json& hourly = j["items"][0];
  EXPECT_EQ(hourly["divergencesByKind"],
            (Json{{"MissedRun", 0}, {"LateRun", 1}, {"UnexpectedJob", 1}}));
  ASSERT_EQ(hourly["divergences"].size(), 2u);
  EXPECT_EQ(hourly["divergences"][0]["seq"], seq_[1]);
  EXPECT_EQ(hourly["divergences"][1]["seq"], seq_[2]);
  EXPECT_EQ(j["items"][1]["divergences"][0]["kind"], "MissedRun");
  // The columns of table and csv end with the counts.
  EXPECT_EQ(AdherenceColumns().back(), "divergencesByKind");
}

class DivergenceApiTest : public DivergencesTest {
 protected:
  void SetUp() override {
    DivergencesTest::SetUp();
    auto db = model::OpenSystemTimeZoneDb({});
    ASSERT_TRUE(db.ok());
    tzdb_ = std::move(*db);
    std::ofstream(dir_.Sub("token")) << "t0ken\n";
    ApiOptions o;
    o.token_file = dir_.Sub("token");
    o.rate_burst = 1000;
    o.max_page = 3;
    api_ = std::make_unique<Api>(h_.ledger(), *tzdb_, o);
  }
  ApiResponse Get(const std::string& target) {
    return api_->Handle({"GET", target, "Bearer t0ken", "10.0.0.1"});
  }
  Json Body(const std::string& target) {
    ApiResponse r = Get(target);
    EXPECT_EQ(r.status, 200) << target << ": " << r.body;
    auto j = model::ParseJson(r.body);
    EXPECT_TRUE(j.ok()) << r.body;
    return j.ok() ? *j : Json();
  }
  std::vector<uint64_t> Seqs(const std::string& target) {
    std::vector<uint64_t> out;
    const Json j = Body(target);
    for (const Json& d : j["items"]) out.push_back(d["seq"].get<uint64_t>());
    return out;
  }
  store::testing::TempDir dir_;
  std::unique_ptr<model::TimeZoneDb> tzdb_;
  std::unique_ptr<Api> api_;
};

TEST_F(DivergenceApiTest, ListsWithTheFiltersOfTheCommand) {
  // The items are DivergenceJson of the reader's records, the command's -o json items.
  auto all = ListDivergences(h_.ledger(), {});
  ASSERT_TRUE(all.ok());
  const Json page = Body("/v1/divergences?limit=2");
  ASSERT_EQ(page["items"].size(), 2u);
  EXPECT_EQ(page["items"][0], DivergenceJson((*all)[0]));
  EXPECT_EQ(page["items"][1], DivergenceJson((*all)[1]));
  EXPECT_EQ(Seqs("/v1/divergences?cronjob=ns/hourly&kind=UnexpectedJob"),
            (std::vector<uint64_t>{seq_[2]}));
  EXPECT_EQ(Seqs("/v1/divergences?namespace=other"), (std::vector<uint64_t>{seq_[3]}));
  EXPECT_EQ(Seqs("/v1/divergences?namespace=ns&cronjob=ns/nightly"),
            (std::vector<uint64_t>{seq_[4]}));
  EXPECT_EQ(Seqs("/v1/divergences?since=2026-01-01T02:03:00Z&until=2026-01-01T03:32:00Z"),
            (std::vector<uint64_t>{seq_[1], seq_[2]}));
  // Nothing matches: an empty list, not an error.
  const ApiResponse none = Get("/v1/divergences?cronjob=ns/none");
  EXPECT_EQ(none.status, 200);
  EXPECT_EQ(none.body, "{\"items\":[],\"metadata\":{}}\n");
}

TEST_F(DivergenceApiTest, PagesFollowTheContinueTokenToTheEnd) {
  std::vector<uint64_t> seqs;
  std::string target = "/v1/divergences?limit=2";
  int pages = 0;
  for (; pages < 10; ++pages) {
    const Json j = Body(target);
    for (const Json& d : j["items"]) seqs.push_back(d["seq"].get<uint64_t>());
    if (!j["metadata"].contains("continue")) break;
    target = "/v1/divergences?limit=2&continue=" + j["metadata"]["continue"].get<std::string>();
  }
  EXPECT_EQ(seqs, (std::vector<uint64_t>(std::begin(seq_), std::end(seq_))));
  EXPECT_EQ(pages, 2);  // 2 + 2 + 1, and the last page says no more
  EXPECT_EQ(Body("/v1/divergences")["items"].size(), 3u) << "the default page is max_page";
}

TEST_F(DivergenceApiTest, MalformedParametersAre400WithAClearMessage) {
  struct Case {
    std::string target, message;
  } cases[] = {
      {"/v1/divergences?kind=Late",
       "kind: unknown divergence kind \"Late\" (MissedRun, LateRun or UnexpectedJob)"},
      {"/v1/divergences?since=today", "since: expected an RFC 3339 time, got \"today\""},
      {"/v1/divergences?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z",
       "since must be before until"},
      {"/v1/divergences?cronjob=hourly", "expected NAMESPACE/NAME, got \"hourly\""},
      {"/v1/divergences?cronjob=ns/hourly&namespace=other",
       "cronjob and namespace name different namespaces"},
      {"/v1/divergences?limit=4", "limit: expected an integer from 1 to 3"},
      {"/v1/divergences?continue=zz", "malformed continue token"},
      {"/v1/divergences?action=createJob", "unknown query parameter \"action\""},
  };
  for (const Case& c : cases) {
    ApiResponse r = Get(c.target);
    EXPECT_EQ(r.status, 400) << c.target;
    auto j = model::ParseJson(r.body);
    ASSERT_TRUE(j.ok()) << r.body;
    EXPECT_EQ((*j)["error"], c.message) << c.target;
  }
  EXPECT_EQ(api_->Handle({"GET", "/v1/divergences", "", "10.0.0.1"}).status, 401);
}

TEST_F(DivergenceApiTest, ReportAndTimelineCarryTheDivergences) {
  const Json rep =
      Body("/v1/reports/adherence?since=2026-01-01T00:00:00Z&until=2026-01-01T12:00:00Z");
  EXPECT_EQ(rep["items"][0]["divergencesByKind"],
            (Json{{"MissedRun", 1}, {"LateRun", 1}, {"UnexpectedJob", 1}}));
  EXPECT_EQ(rep["totals"]["divergencesByKind"]["UnexpectedJob"], 2);
  const Json tl =
      Body("/v1/cronjobs/ns/hourly/timeline?since=2026-01-01T00:00:00Z&until=2026-01-01T12:00:00Z");
  ASSERT_EQ(tl["divergences"].size(), 3u);
  EXPECT_EQ(tl["divergences"][2]["kind"], "UnexpectedJob");
  const Json quiet = Body(
      "/v1/cronjobs/ns/nightly/timeline?since=2026-01-01T00:00:00Z&until=2026-01-01T12:00:00Z");
  EXPECT_EQ(quiet["divergences"], Json::array());
  EXPECT_EQ(quiet["divergencesByKind"],
            (Json{{"MissedRun", 0}, {"LateRun", 0}, {"UnexpectedJob", 0}}));
}

}  // namespace
}  // namespace cronledger::audit
