#include "model/decision.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "model/objects.h"

namespace cronledger::model {
namespace {

Decision Sample(DecisionAction action) {
  Decision d;
  d.seq = 42;
  d.time = Time::FromUnix(1463652000, 123000000);
  d.cron_job = {"default", "hello", "uid-1"};
  d.action = action;
  d.cause = {7, 41, "timer"};
  d.policy = {"*/5 * * * *", "Europe/Rome", "Forbid", 200, false};
  return d;
}

TEST(DecisionCodec, EveryActionRoundTrips) {
  std::vector<Decision> all;
  Decision skipped = Sample(DecisionAction::kSkipped);
  skipped.scheduled_time = Time::FromUnix(1463651700);
  skipped.reason = std::string(skip_reason::kConcurrencyForbid);
  all.push_back(skipped);
  Decision create = Sample(DecisionAction::kCreateJob);
  create.scheduled_time = Time::FromUnix(1463652000);
  create.job_name = "hello-24394200";
  create.job_object = Json{{"kind", "Job"}, {"metadata", {{"name", "hello-24394200"}}}};
  all.push_back(create);
  Decision event = Sample(DecisionAction::kEvent);
  event.reason = "SuccessfulCreate";
  event.event_type = "Normal";
  event.message = "Created job hello-24394200";
  all.push_back(event);
  Decision requeue = Sample(DecisionAction::kRequeue);
  requeue.requeue_after = std::chrono::milliseconds(299'100);
  requeue.policy.time_zone.reset();
  requeue.policy.starting_deadline_seconds.reset();
  all.push_back(requeue);
  Decision status = Sample(DecisionAction::kUpdateStatus);
  status.status = Json{{"lastScheduleTime", "2016-05-19T10:00:00Z"}};
  all.push_back(status);
  all.push_back(Sample(DecisionAction::kScheduled));
  Decision del = Sample(DecisionAction::kDeleteJob);
  del.job_name = "hello-1";
  all.push_back(del);

  for (const auto& d : all) {
    const std::string bytes = CanonicalDecisionBytes(d);
    auto back = DecodeDecision(*ParseJson(bytes));
    ASSERT_TRUE(back.ok()) << bytes << ": " << back.status().ToString();
    EXPECT_EQ(*back, d) << bytes;
    EXPECT_EQ(CanonicalDecisionBytes(*back), bytes);
  }
}

TEST(DecisionCodec, ShapeMatchesDesign) {
  Decision d = Sample(DecisionAction::kRequeue);
  d.requeue_after = std::chrono::milliseconds(1500);
  const Json j = EncodeDecision(d);
  EXPECT_EQ(j["action"], "requeue");
  EXPECT_EQ(j["time"], "2016-05-19T10:00:00.123Z");
  EXPECT_EQ(j["cronJob"]["uid"], "uid-1");
  EXPECT_EQ(j["cause"]["tickSeq"], 7);
  EXPECT_EQ(j["policy"]["startingDeadlineSeconds"], 200);
  EXPECT_DOUBLE_EQ(j["requeueAfterSeconds"].get<double>(), 1.5);
  EXPECT_FALSE(j.contains("scheduledTime"));
}

// The direct writers must produce exactly what the nlohmann tree produced (the recorded digests
// depend on it): generated decisions and accounting states with every optional on and off,
// strings that need escaping or replacement, extreme numbers and nested job objects.
class Gen {
 public:
  explicit Gen(uint64_t seed) : rng_(seed) {}
  int64_t Int(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }
  bool Coin() { return Int(0, 1) == 1; }
  std::string Str() {
    static const std::vector<std::string> kStrings = {"",
                                                      "plain",
                                                      "cj-17-28401234",
                                                      "with \"quotes\"",
                                                      "back\\slash",
                                                      "tab\tnew\nline",
                                                      std::string("nul\0byte", 8),
                                                      "\x01\x1f ctl",
                                                      "del \x7f",
                                                      "caf\xc3\xa9 \xe6\x97\xa5",
                                                      "bad \xff\xfe utf8",
                                                      "trunc \xe6\x97",
                                                      "</script>",
                                                      "emoji \xf0\x9f\x98\x80",
                                                      "/slash/"};
    return kStrings[static_cast<size_t>(Int(0, static_cast<int64_t>(kStrings.size()) - 1))];
  }
  Time Instant() { return Time::FromUnix(Int(-70000000000, 300000000000), Int(0, 999999999)); }
  Json Value(int depth) {
    switch (Int(0, depth > 2 ? 5 : 7)) {
      case 0:
        return Json(nullptr);
      case 1:
        return Json(Coin());
      case 2:
        return Json(Int(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
      case 3:
        return Json(static_cast<double>(Int(-1000000, 1000000)) /
                    static_cast<double>(Int(1, 1000)));
      case 4:
        return Json(static_cast<uint64_t>(Int(0, std::numeric_limits<int64_t>::max())) * 2 + 1);
      case 5:
        return Json(Str());
      case 6: {
        Json a = Json::array();
        for (int64_t i = Int(0, 3); i > 0; --i) a.push_back(Value(depth + 1));
        return a;
      }
      default: {
        Json o = Json::object();
        for (int64_t i = Int(0, 4); i > 0; --i) o[Str()] = Value(depth + 1);
        return o;
      }
    }
  }

 private:
  std::mt19937_64 rng_;
};

TEST(DecisionCodec, CanonicalBytesAreTheTreeEncodingByteForByte) {
  Gen g(8);
  for (int i = 0; i < 5000; ++i) {
    SCOPED_TRACE(i);
    Decision d;
    d.seq = g.Coin() ? static_cast<uint64_t>(g.Int(0, 1 << 30))
                     : std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(g.Int(0, 9));
    d.time = g.Instant();
    d.cron_job = {g.Str(), g.Str(), g.Str()};
    d.action = static_cast<DecisionAction>(g.Int(0, 6));
    if (g.Coin()) d.scheduled_time = g.Instant();
    if (g.Coin()) d.range_end = g.Instant();
    if (g.Coin()) d.reason = g.Str();
    if (g.Coin()) d.job_name = g.Str();
    if (g.Coin()) d.job_object = g.Value(0);
    if (g.Coin()) d.event_type = g.Str();
    if (g.Coin()) d.message = g.Str();
    if (g.Coin()) {
      d.requeue_after = Duration(g.Coin() ? g.Int(-4000000000000, 4000000000000)
                                          : g.Int(std::numeric_limits<int64_t>::min(),
                                                  std::numeric_limits<int64_t>::max()));
    }
    if (g.Coin()) d.status = g.Value(0);
    d.cause = {static_cast<uint64_t>(g.Int(0, 1 << 30)), static_cast<uint64_t>(g.Int(0, 1 << 30)),
               g.Str()};
    d.policy.schedule = g.Str();
    if (g.Coin()) d.policy.time_zone = g.Str();
    d.policy.concurrency_policy = g.Str();
    if (g.Coin()) {
      d.policy.starting_deadline_seconds =
          g.Int(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
    }
    d.policy.suspend = g.Coin();
    ASSERT_EQ(CanonicalDecisionBytes(d), DumpJson(EncodeDecision(d)));
    std::string appended = "prefix";
    AppendCanonicalDecisionBytes(d, &appended);
    EXPECT_EQ(appended, "prefix" + DumpJson(EncodeDecision(d)));

    AccountingState s;
    if (g.Coin()) s.accounted_through = g.Instant();
    if (g.Coin()) s.pending_slot = g.Instant();
    if (g.Coin()) s.pending_reason = g.Str();
    if (g.Coin()) s.blocked_reason = g.Str();
    if (g.Coin()) s.blocked_key = g.Str();
    if (g.Coin()) s.blocked_until = g.Instant();
    ASSERT_EQ(AccountingStateBytes(s), DumpJson(EncodeAccountingState(s)));
  }
}

// The direct writer's fast paths against the tree encoding: strings copied as they are when
// plain (checked eight bytes at a time), and times written from a cached date.
TEST(DecisionCodec, CanonicalStringsAndTimesMatchTheTreeEncodingAtEveryPosition) {
  // Every byte value at every position of strings of 0..40 bytes (covers the 8-byte words, their
  // tails, and a special byte just before/after a word boundary).
  Decision d = Sample(DecisionAction::kEvent);
  for (size_t len = 1; len <= 40; ++len) {
    for (size_t pos = 0; pos < len; ++pos) {
      for (int b = 0; b < 256; ++b) {
        std::string s(len, 'a' + static_cast<char>(len % 26));
        s[pos] = static_cast<char>(b);
        d.message = s;
        d.status = Json::object({{s, s}});
        ASSERT_EQ(CanonicalDecisionBytes(d), DumpJson(EncodeDecision(d)))
            << "len " << len << " pos " << pos << " byte " << b;
      }
    }
  }
  d.message.reset();
  d.status = Json();
  // Times around day, year and range boundaries, with and without fractions, one after the
  // other (the cached date changes between them) and repeated (it is reused).
  std::vector<int64_t> seconds = {
      -62135596801, -62135596800, -62135596799, -1,          0,          1,
      86399,        86400,        951782400,    951868799,   1709164800, 1709251199,
      253402300799, 253402300800, -70000000000, 300000000000};
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) {
    seconds.push_back(std::uniform_int_distribution<int64_t>(-62135596800, 253402300799)(rng));
    seconds.push_back(1700000000 + std::uniform_int_distribution<int64_t>(0, 3 * 86400)(rng));
  }
  for (const int32_t nanos : {0, 1, 10, 100000000, 120000000, 999999999, 500}) {
    for (const int64_t s : seconds) {
      for (int repeat = 0; repeat < 2; ++repeat) {
        d.time = Time::FromUnix(s, nanos);
        d.scheduled_time = Time::FromUnix(s + 86400 * repeat, nanos);
        ASSERT_EQ(CanonicalDecisionBytes(d), DumpJson(EncodeDecision(d)))
            << s << " " << nanos << " " << repeat;
        AccountingState st;
        st.accounted_through = d.time;
        st.blocked_until = d.scheduled_time;
        ASSERT_EQ(AccountingStateBytes(st), DumpJson(EncodeAccountingState(st)));
      }
    }
  }
}

// The writer appends after what the string holds (and across its growth), whatever its capacity.
TEST(DecisionCodec, CanonicalBytesAppendAfterExistingContent) {
  Decision d = Sample(DecisionAction::kCreateJob);
  Json big = Json::object();
  for (int i = 0; i < 300; ++i)
    big["key-" + std::to_string(i)] = std::string(static_cast<size_t>(i), 'x');
  d.job_object = big;
  const std::string want = DumpJson(EncodeDecision(d));
  for (const size_t prefix : {size_t{0}, size_t{1}, size_t{511}, size_t{4096}}) {
    std::string out(prefix, 'p');
    AppendCanonicalDecisionBytes(d, &out);
    ASSERT_EQ(out, std::string(prefix, 'p') + want);
    AppendCanonicalDecisionBytes(d, &out);
    ASSERT_EQ(out, std::string(prefix, 'p') + want + want);
  }
}

TEST(DecisionCodec, RejectsUnknownAction) {
  Json j = EncodeDecision(Sample(DecisionAction::kEvent));
  j["action"] = "launchMissiles";
  EXPECT_FALSE(DecodeDecision(j).ok());
}

}  // namespace
}  // namespace cronledger::model
