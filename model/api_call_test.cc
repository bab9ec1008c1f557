#include "model/api_call.h"

#include <gtest/gtest.h>

#include "model/decision.h"

namespace cronledger::model {
namespace {

// Every persisted record round-trips: encode -> decode -> encode gives the same bytes.
template <typename T, typename Enc, typename Dec>
void ExpectRoundTrip(const T& value, Enc encode, Dec decode) {
  const std::string bytes = DumpJson(encode(value));
  auto parsed = ParseJson(bytes);
  ASSERT_TRUE(parsed.ok());
  auto back = decode(*parsed);
  ASSERT_TRUE(back.ok()) << bytes << ": " << back.status().ToString();
  EXPECT_EQ(*back, value) << bytes;
  EXPECT_EQ(DumpJson(encode(*back)), bytes);
}

TEST(ApiCallCodec, EveryVerbAndKindRoundTrips) {
  const Json job = {{"kind", "Job"}, {"metadata", {{"name", "c-24394200"}}}};
  const ApiCall calls[] = {
      {ApiVerb::kGet, ApiKind::kCronJob, "ns", "c", nullptr},
      {ApiVerb::kGet, ApiKind::kJob, "ns", "c-1", nullptr},
      {ApiVerb::kCreate, ApiKind::kJob, "ns", "c-24394200", job},
      {ApiVerb::kDelete, ApiKind::kJob, "ns", "c-1", nullptr},
      {ApiVerb::kUpdateStatus, ApiKind::kCronJob, "ns", "c", Json{{"status", Json::object()}}},
  };
  for (const auto& c : calls) ExpectRoundTrip(c, EncodeApiCall, DecodeApiCall);
  EXPECT_EQ(EncodeApiCall(calls[4])["verb"], "updateStatus");
  EXPECT_EQ(EncodeApiCall(calls[0])["kind"], "CronJob");
}

TEST(ApiCallCodec, OutcomesRoundTrip) {
  ExpectRoundTrip(ApiOutcome::Ok(Json{{"metadata", {{"uid", "test-uid"}}}}), EncodeApiOutcome,
                  DecodeApiOutcome);
  ExpectRoundTrip(ApiOutcome::Error("NotFound", "jobs.batch \"x\" not found"), EncodeApiOutcome,
                  DecodeApiOutcome);
  ExpectRoundTrip(ApiOutcome::Error("NamespaceTerminating", "forbidden"), EncodeApiOutcome,
                  DecodeApiOutcome);
}

TEST(ApiCallCodec, RejectsMalformed) {
  EXPECT_FALSE(DecodeApiCall(Json::array()).ok());
  EXPECT_FALSE(DecodeApiCall(Json{{"verb", "patch"}, {"kind", "Job"}}).ok());
  EXPECT_FALSE(DecodeApiCall(Json{{"verb", "get"}, {"kind", "Pod"}}).ok());
  EXPECT_FALSE(DecodeApiCall(Json{{"verb", "get"}, {"kind", "Job"}, {"name", 3}}).ok());
  EXPECT_FALSE(DecodeApiOutcome(Json{{"reason", true}}).ok());
}

TEST(AccountingStateCodec, RoundTrips) {
  AccountingState empty;
  ExpectRoundTrip(empty, EncodeAccountingState, DecodeAccountingState);
  AccountingState full;
  full.accounted_through = Time::FromUnix(1463652000, 5);
  full.pending_slot = Time::FromUnix(1463655600);
  full.pending_reason = "ConcurrencyForbid";
  full.blocked_reason = "UnknownTimeZone";
  full.blocked_key = "UnknownTimeZone|0 * * * *|Mars/Olympus";
  full.blocked_until = Time::FromUnix(1463651000);
  ExpectRoundTrip(full, EncodeAccountingState, DecodeAccountingState);
}

TEST(DecisionCodec, RangeRecordRoundTrips) {
  Decision d;
  d.time = Time::FromUnix(1463652000);
  d.cron_job = {"ns", "c", "uid"};
  d.action = DecisionAction::kSkipped;
  d.reason = std::string(skip_reason::kTooManyMissed);
  d.scheduled_time = Time::FromUnix(1463000000);
  d.range_end = Time::FromUnix(1463600000);
  const std::string bytes = CanonicalDecisionBytes(d);
  auto back = DecodeDecision(*ParseJson(bytes));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(*back, d);
  EXPECT_NE(bytes.find("\"rangeEnd\":\"2016-05-18T19:33:20Z\""), std::string::npos) << bytes;
}

}  // namespace
}  // namespace cronledger::model
