// The API as a function: auth order, 405/414/429, parameters (400), routes, pagination,
// metrics, token rotation. HTTP transport is covered by server_test.cc.
#include "audit/api.h"

#include <gtest/gtest.h>

#include <fstream>

#include "audit/metrics.h"
#include "audit/testing.h"
#include "model/build_info.h"
#include "model/decision.h"

namespace cronledger::audit {
namespace {

using model::DecisionAction;
using testing::At;
using testing::HandLedger;

class ApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = model::OpenSystemTimeZoneDb({});
    ASSERT_TRUE(db.ok());
    tzdb_ = std::move(*db);
    WriteToken("s3cret\n");
    h_.AddCronJob("ns", "hourly", "0 * * * *", At(0, 30));
    h_.AddCronJob("ns", "paused", "0 * * * *", At(0, 30), true);
    h_.Decide("ns", "hourly", At(1, 0, 1), DecisionAction::kCreateJob, At(1));
    h_.Decide("ns", "hourly", At(2, 0, 3), DecisionAction::kCreateJob, At(2));
    h_.Decide("ns", "hourly", At(3, 0, 40), DecisionAction::kCreateJob, At(3));
    h_.Decide("ns", "paused", At(3, 0, 41), DecisionAction::kSkipped, At(1), "Suspended");
    h_.Decide("ns", "paused", At(3, 0, 41), DecisionAction::kSkipped, At(2), "Suspended");
    h_.Decide("ns", "paused", At(3, 0, 41), DecisionAction::kSkipped, At(3), "Suspended");
    ApiOptions o;
    o.token_file = token_path_;
    o.rate_per_second = 1;
    o.rate_burst = 1000;
    o.monotonic_nanos = [this] { return now_; };
    o.log = [this](const std::string& m) { logged_ += m; };
    api_ = std::make_unique<Api>(h_.ledger(), *tzdb_, o);
  }
  void WriteToken(const std::string& t) { std::ofstream(token_path_, std::ios::trunc) << t; }
  ApiResponse Get(const std::string& target, const std::string& token = "s3cret",
                  const std::string& method = "GET") {
    return api_->Handle({method, target, token.empty() ? "" : "Bearer " + token, "10.0.0.1"});
  }
  model::Json Body(const ApiResponse& r) {
    auto j = model::ParseJson(r.body);
    EXPECT_TRUE(j.ok()) << r.body;
    return j.ok() ? *j : model::Json();
  }

  HandLedger h_;
  store::testing::TempDir dir_;
  std::string token_path_ = dir_.Sub("token");
  std::unique_ptr<model::TimeZoneDb> tzdb_;
  int64_t now_ = 0;
  std::string logged_;
  std::unique_ptr<Api> api_;
};

TEST_F(ApiTest, HealthIsOpenAndEverythingElseNeedsTheToken) {
  EXPECT_EQ(Get("/healthz", "").status, 200);
  EXPECT_EQ(Get("/readyz", "").status, 200);
  EXPECT_EQ(Get("/v1/cronjobs", "").status, 401);
  EXPECT_EQ(Get("/v1/cronjobs", "wrong").status, 401);
  EXPECT_EQ(Get("/v1/cronjobs", "s3cre").status, 401);
  EXPECT_EQ(Get("/metrics", "").status, 401);
  ApiResponse ok = Get("/v1/cronjobs");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(Body(ok)["items"].size(), 2u);
}

TEST_F(ApiTest, ATokenRotatedInTheFileTakesEffect) {
  EXPECT_EQ(Get("/v1/cronjobs").status, 200);
  WriteToken("rotated-token-value\n");
  EXPECT_EQ(Get("/v1/cronjobs").status, 401);
  EXPECT_EQ(Get("/v1/cronjobs", "rotated-token-value").status, 200);
  WriteToken("");
  EXPECT_EQ(Get("/v1/cronjobs", "").status, 401);
  EXPECT_EQ(Get("/readyz", "").status, 503);
}

TEST_F(ApiTest, OnlyGetAndHeadAreAllowed) {
  for (const char* m : {"POST", "PUT", "DELETE", "PATCH"}) {
    ApiResponse r = Get("/v1/cronjobs", "s3cret", m);
    EXPECT_EQ(r.status, 405) << m;
    ASSERT_EQ(r.headers.size(), 1u);
    EXPECT_EQ(r.headers[0].second, "GET, HEAD");
  }
  EXPECT_EQ(Get("/v1/cronjobs", "s3cret", "HEAD").status, 200);
  EXPECT_EQ(Get("/" + std::string(5000, 'a')).status, 414);
}

TEST_F(ApiTest, MalformedParametersAre400WithAClearMessage) {
  struct Case {
    std::string target, message;
  } cases[] = {
      {"/v1/decisions?since=yesterday", "since: expected an RFC 3339 time, got \"yesterday\""},
      {"/v1/decisions?limit=0", "limit: expected an integer from 1 to 1000"},
      {"/v1/decisions?bogus=1", "unknown query parameter \"bogus\""},
      {"/v1/decisions?action=explode", "unknown action \"explode\""},
      {"/v1/decisions?cronjob=nons", "expected NAMESPACE/NAME, got \"nons\""},
      {"/v1/decisions?continue=zz", "malformed continue token"},
      {"/v1/decisions?limit=1&limit=2", "query parameter \"limit\" given twice"},
      {"/v1/reports/adherence?since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z",
       "since must be before until"},
      {"/v1/why?cronjob=ns/hourly", "exactly one of scheduled and at is required"},
  };
  for (const Case& c : cases) {
    ApiResponse r = Get(c.target);
    EXPECT_EQ(r.status, 400) << c.target;
    EXPECT_EQ(Body(r)["error"], c.message) << c.target;
  }
  EXPECT_EQ(Get("/v1/nothing").status, 404);
  EXPECT_EQ(Get("/v1/cronjobs/ns/missing").status, 404);
}

TEST_F(ApiTest, DecisionPagesAreStableAndComplete) {
  std::vector<uint64_t> seqs;
  std::string target = "/v1/decisions?namespace=ns&limit=2";
  for (int i = 0; i < 10; ++i) {
    const ApiResponse r = Get(target);
    model::Json j = Body(r);
    // The page is written as text from the decisions' canonical bytes: it is the canonical JSON
    // of the page, and every item decodes to a decision whose canonical bytes it holds.
    EXPECT_EQ(r.body, model::DumpJson(j) + "\n");
    for (const auto& d : j["items"]) {
      seqs.push_back(d["seq"].get<uint64_t>());
      auto decoded = model::DecodeDecision(d);
      ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
      EXPECT_NE(r.body.find(model::CanonicalDecisionBytes(*decoded)), std::string::npos);
    }
    if (!j["metadata"].contains("continue")) break;
    target = "/v1/decisions?namespace=ns&limit=2&continue=" +
             j["metadata"]["continue"].get<std::string>();
  }
  EXPECT_EQ(seqs, (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  model::Json counts = Body(Get("/v1/decisions?cronjob=ns/paused&count=true"));
  ASSERT_EQ(counts["items"].size(), 1u);
  EXPECT_EQ(counts["items"][0]["count"], 3);
  EXPECT_EQ(counts["metadata"]["index"], "cronjob");
}

TEST_F(ApiTest, TimelineAndReportShowSuspendedSlots) {
  model::Json tl = Body(Get("/v1/cronjobs/ns/paused/timeline?since=2026-01-01T00:00:00Z"));
  EXPECT_EQ(tl["expected"], 3);
  EXPECT_EQ(tl["skippedByReason"]["Suspended"], 3);
  ASSERT_EQ(tl["slots"].size(), 3u);
  EXPECT_EQ(tl["slots"][0]["status"], "skipped");
  EXPECT_EQ(tl["slots"][0]["reason"], "Suspended");
  model::Json rep = Body(Get("/v1/reports/adherence?since=2026-01-01T00:00:00Z&limit=1"));
  ASSERT_EQ(rep["items"].size(), 1u);
  EXPECT_EQ(rep["items"][0]["name"], "hourly");
  EXPECT_EQ(rep["metadata"]["continue"], "ns/hourly");
  EXPECT_EQ(rep["totals"]["expected"], 6);
  model::Json next =
      Body(Get("/v1/reports/adherence?since=2026-01-01T00:00:00Z&limit=1&continue=ns/hourly"));
  ASSERT_EQ(next["items"].size(), 1u);
  EXPECT_EQ(next["items"][0]["name"], "paused");
  model::Json one = Body(Get("/v1/cronjobs/ns/hourly"));
  EXPECT_EQ(one["schedule"], "0 * * * *");
  EXPECT_EQ(one["decisionCounts"][0]["count"], 3);
}

TEST_F(ApiTest, MetricsHistogramComesFromCreateDecisions) {
  ApiResponse r = Get("/metrics");
  ASSERT_EQ(r.status, 200);
  EXPECT_NE(r.content_type.find("version=0.0.4"), std::string::npos);
  // Skews 1 s, 3 s, 40 s.
  EXPECT_NE(
      r.body.find("cronjob_controller_job_creation_skew_duration_seconds_bucket{le=\"1\"} 1\n"),
      std::string::npos)
      << r.body;
  EXPECT_NE(r.body.find("_bucket{le=\"4\"} 2\n"), std::string::npos);
  EXPECT_NE(r.body.find("_bucket{le=\"32\"} 2\n"), std::string::npos);
  EXPECT_NE(r.body.find("_bucket{le=\"64\"} 3\n"), std::string::npos);
  EXPECT_NE(r.body.find("_bucket{le=\"+Inf\"} 3\n"), std::string::npos);
  EXPECT_NE(r.body.find("_count 3\n"), std::string::npos);
  EXPECT_NE(r.body.find("cronledger_decisions_total{action=\"skipped\",reason=\"Suspended\"} 3"),
            std::string::npos);
  // Incremental: a new create is folded on the next scrape only once.
  h_.Decide("ns", "hourly", At(4, 0, 1), DecisionAction::kCreateJob, At(4));
  r = Get("/metrics");
  EXPECT_NE(r.body.find("_count 4\n"), std::string::npos);
  r = Get("/metrics");
  EXPECT_NE(r.body.find("_count 4\n"), std::string::npos);
  EXPECT_EQ(EscapeLabel("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  // The build and the tz database the API's schedules and `why` answers come from.
  EXPECT_NE(r.body.find("\n# TYPE cronledger_build_info gauge\ncronledger_build_info{version=\"" +
                        std::string(model::CronledgerVersion()) + "\",tzdata=\"" +
                        model::TzdataLabel(ApiOptions().zoneinfo_dir) + "\"} 1\n"),
            std::string::npos)
      << r.body;
}

TEST_F(ApiTest, RateLimitAnswers429WithRetryAfter) {
  ApiOptions o;
  o.token_file = token_path_;
  o.rate_per_second = 1;
  o.rate_burst = 2;
  o.monotonic_nanos = [this] { return now_; };
  Api api(h_.ledger(), *tzdb_, o);
  auto get = [&] { return api.Handle({"GET", "/v1/cronjobs", "Bearer s3cret", "10.0.0.9"}); };
  EXPECT_EQ(get().status, 200);
  EXPECT_EQ(get().status, 200);
  ApiResponse limited = get();
  EXPECT_EQ(limited.status, 429);
  EXPECT_EQ(limited.headers.at(0).second, "1");
  EXPECT_EQ(api.Handle({"GET", "/healthz", "", "10.0.0.9"}).status, 200);  // never limited
  EXPECT_EQ(api.Handle({"GET", "/v1/cronjobs", "Bearer s3cret", "10.0.0.8"}).status, 200);
  now_ += 1'000'000'000;
  EXPECT_EQ(get().status, 200);
}

TEST(ConstantTime, EqualsComparesWholeStrings) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", std::string_view("abc\0", 4)));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
}

}  // namespace
}  // namespace cronledger::audit
