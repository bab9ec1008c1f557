#include "model/decision.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "model/byte_sink.h"
#include "model/inputs.h"
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

// A decision with every optional field drawn at random (strings with escapes and invalid UTF-8,
// extreme times and numbers, nested Json values).
Decision Generated(Gen& g) {
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
    d.requeue_after = Duration(
        g.Coin() ? g.Int(-4000000000000, 4000000000000)
                 : g.Int(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
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
  return d;
}

// The decision as a Json tree built field by field, dumped by nlohmann: the oracle the direct
// writer is checked against (escapes, invalid UTF-8, number and time formats, key order).
Json ReferenceTree(const Decision& d) {
  Json j = Json::object();
  j["seq"] = d.seq;
  j["time"] = FormatRfc3339Nano(d.time);
  j["cronJob"] = {
      {"namespace", d.cron_job.namespace_}, {"name", d.cron_job.name}, {"uid", d.cron_job.uid}};
  j["action"] = DecisionActionName(d.action);
  if (d.scheduled_time) j["scheduledTime"] = FormatRfc3339Nano(*d.scheduled_time);
  if (d.range_end) j["rangeEnd"] = FormatRfc3339Nano(*d.range_end);
  if (!d.reason.empty()) j["reason"] = d.reason;
  if (d.job_name || !d.job_object.is_null()) {
    Json job = Json::object();
    if (d.job_name) job["name"] = *d.job_name;
    if (!d.job_object.is_null()) job["object"] = d.job_object;
    j["job"] = std::move(job);
  }
  if (d.event_type) j["eventType"] = *d.event_type;
  if (d.message) j["message"] = *d.message;
  if (d.requeue_after) {
    j["requeueAfterSeconds"] = static_cast<double>(d.requeue_after->count()) / 1e9;
    j["requeueAfterNanos"] = d.requeue_after->count();
  }
  if (!d.status.is_null()) j["status"] = d.status;
  j["cause"] = {
      {"tickSeq", d.cause.tick_seq}, {"inputSeq", d.cause.input_seq}, {"trigger", d.cause.trigger}};
  Json policy = Json::object();
  policy["schedule"] = d.policy.schedule;
  policy["timeZone"] = d.policy.time_zone ? Json(*d.policy.time_zone) : Json(nullptr);
  policy["concurrencyPolicy"] = d.policy.concurrency_policy;
  policy["startingDeadlineSeconds"] = d.policy.starting_deadline_seconds
                                          ? Json(*d.policy.starting_deadline_seconds)
                                          : Json(nullptr);
  policy["suspend"] = d.policy.suspend;
  j["policy"] = std::move(policy);
  return j;
}

Json ReferenceAccountingTree(const AccountingState& s) {
  Json j = Json::object();
  auto put_time = [&j](const char* key, const std::optional<Time>& t) {
    j[key] = t ? Json(FormatRfc3339Nano(*t)) : Json(nullptr);
  };
  put_time("accountedThrough", s.accounted_through);
  put_time("pendingSlot", s.pending_slot);
  j["pendingReason"] = s.pending_reason;
  j["blockedReason"] = s.blocked_reason;
  j["blockedKey"] = s.blocked_key;
  put_time("blockedUntil", s.blocked_until);
  return j;
}

TEST(DecisionCodec, TheCanonicalArrayIsTheDumpOfTheTreesArray) {
  Gen g(9);
  std::vector<Decision> ds;
  for (int n = 0; n < 4; ++n) {
    Json trees = Json::array();
    for (const Decision& d : ds) trees.push_back(ReferenceTree(d));
    std::string text = "{";
    AppendCanonicalDecisionArray(ds, &text);
    std::string expected = "{";
    expected += DumpJson(trees);
    EXPECT_EQ(text, expected) << n;
    ds.push_back(Generated(g));
  }
}

TEST(DecisionCodec, CanonicalBytesAreTheReferenceTreeByteForByte) {
  Gen g(8);
  for (int i = 0; i < 5000; ++i) {
    SCOPED_TRACE(i);
    const Decision d = Generated(g);
    ASSERT_EQ(CanonicalDecisionBytes(d), DumpJson(ReferenceTree(d)));
    ASSERT_EQ(DumpJson(EncodeDecision(d)), CanonicalDecisionBytes(d));
    std::string appended = "prefix";
    AppendCanonicalDecisionBytes(d, &appended);
    EXPECT_EQ(appended, "prefix" + DumpJson(ReferenceTree(d)));

    AccountingState s;
    if (g.Coin()) s.accounted_through = g.Instant();
    if (g.Coin()) s.pending_slot = g.Instant();
    if (g.Coin()) s.pending_reason = g.Str();
    if (g.Coin()) s.blocked_reason = g.Str();
    if (g.Coin()) s.blocked_key = g.Str();
    if (g.Coin()) s.blocked_until = g.Instant();
    ASSERT_EQ(AccountingStateBytes(s), DumpJson(ReferenceAccountingTree(s)));
    ASSERT_EQ(DumpJson(EncodeAccountingState(s)), AccountingStateBytes(s));
  }
}

// The direct writer's fast paths against the tree encoding: strings copied as they are when
// plain (checked sixteen bytes at a time), and times written from a cached date.
TEST(DecisionCodec, CanonicalStringsAndTimesMatchTheTreeEncodingAtEveryPosition) {
  // Every byte value at every position of strings of 1..40 bytes (covers the 16-byte blocks, their
  // tails, and a special byte just before/after a block boundary).
  Decision d = Sample(DecisionAction::kEvent);
  for (size_t len = 1; len <= 40; ++len) {
    for (size_t pos = 0; pos < len; ++pos) {
      for (int b = 0; b < 256; ++b) {
        std::string s(len, 'a' + static_cast<char>(len % 26));
        s[pos] = static_cast<char>(b);
        d.message = s;
        d.status = Json::object({{s, s}});
        ASSERT_EQ(CanonicalDecisionBytes(d), DumpJson(ReferenceTree(d)))
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
        ASSERT_EQ(CanonicalDecisionBytes(d), DumpJson(ReferenceTree(d)))
            << s << " " << nanos << " " << repeat;
        AccountingState st;
        st.accounted_through = d.time;
        st.blocked_until = d.scheduled_time;
        ASSERT_EQ(AccountingStateBytes(st), DumpJson(ReferenceAccountingTree(st)));
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
  const std::string want = DumpJson(ReferenceTree(d));
  for (const size_t prefix : {size_t{0}, size_t{1}, size_t{511}, size_t{4096}}) {
    std::string out(prefix, 'p');
    AppendCanonicalDecisionBytes(d, &out);
    ASSERT_EQ(out, std::string(prefix, 'p') + want);
    AppendCanonicalDecisionBytes(d, &out);
    ASSERT_EQ(out, std::string(prefix, 'p') + want + want);
  }
}

TEST(DecisionCodec, AccountingStateBytesAppendAfterExistingContent) {
  AccountingState s;
  s.accounted_through = Time::FromUnix(1704067200);
  s.pending_reason = "TooLate \"quoted\"";
  s.blocked_key = std::string(300, 'k');
  const std::string want = DumpJson(ReferenceAccountingTree(s));
  ASSERT_EQ(AccountingStateBytes(s), want);
  for (const size_t prefix : {size_t{0}, size_t{1}, size_t{511}}) {
    std::string out(prefix, 'p');
    AppendAccountingStateBytes(s, &out);
    ASSERT_EQ(out, std::string(prefix, 'p') + want);
  }
}

// The decision record as RecordWriter and Json::to_cbor wrote it before EncodeDecisionRecord
// wrote through a ByteSink with AppendCbor: the stored format, which replay compares byte for
// byte with what it derives.
std::string ReferenceRecord(const Decision& d) {
  std::string out;
  RecordWriter w(&out);
  auto put_json = [&w](const Json& j) {
    std::string cbor;
    Json::to_cbor(j, nlohmann::detail::output_adapter<char, std::string>(cbor));
    w.Bytes(cbor);
  };
  w.Byte(kInputFormatV1);
  w.Byte(static_cast<uint8_t>(RecordType::kDecision));
  uint64_t flags = 0;
  if (d.scheduled_time) flags |= 1 << 0;
  if (d.job_name) flags |= 1 << 1;
  if (!d.job_object.is_null()) flags |= 1 << 2;
  if (d.event_type) flags |= 1 << 3;
  if (d.message) flags |= 1 << 4;
  if (d.requeue_after) flags |= 1 << 5;
  if (!d.status.is_null()) flags |= 1 << 6;
  if (d.policy.time_zone) flags |= 1 << 7;
  if (d.policy.starting_deadline_seconds) flags |= 1 << 8;
  if (d.policy.suspend) flags |= 1 << 9;
  if (d.range_end) flags |= 1 << 10;
  w.Varint(flags);
  w.Varint(d.seq);
  w.Time(d.time);
  w.Bytes(d.cron_job.namespace_);
  w.Bytes(d.cron_job.name);
  w.Bytes(d.cron_job.uid);
  w.Byte(static_cast<uint8_t>(d.action));
  if (d.scheduled_time) w.Time(*d.scheduled_time);
  w.Bytes(d.reason);
  if (d.job_name) w.Bytes(*d.job_name);
  if (!d.job_object.is_null()) put_json(d.job_object);
  if (d.event_type) w.Bytes(*d.event_type);
  if (d.message) w.Bytes(*d.message);
  if (d.requeue_after) w.Signed(d.requeue_after->count());
  if (!d.status.is_null()) put_json(d.status);
  w.Varint(d.cause.tick_seq);
  w.Varint(d.cause.input_seq);
  w.Bytes(d.cause.trigger);
  w.Bytes(d.policy.schedule);
  if (d.policy.time_zone) w.Bytes(*d.policy.time_zone);
  w.Bytes(d.policy.concurrency_policy);
  if (d.policy.starting_deadline_seconds) w.Signed(*d.policy.starting_deadline_seconds);
  if (d.range_end) w.Time(*d.range_end);
  return out;
}

std::string ToCbor(const Json& j) {
  std::string out;
  Json::to_cbor(j, nlohmann::detail::output_adapter<char, std::string>(out));
  return out;
}

std::string DirectCbor(const Json& j, std::string prefix = "") {
  {
    ByteSink sink(&prefix);
    AppendCbor(j, &sink);
  }
  return prefix;
}

// Values whose CBOR heads take every size (0..23 inline, 1, 2, 4 and 8 bytes): integers of both
// signs, strings, arrays and objects at each boundary; doubles and binary (binary_writer's own).
std::vector<Json> CborEdgeValues() {
  std::vector<Json> out;
  for (const uint64_t u :
       {0ULL, 1ULL, 23ULL, 24ULL, 255ULL, 256ULL, 65535ULL, 65536ULL, 4294967295ULL, 4294967296ULL,
        9223372036854775807ULL, 18446744073709551615ULL}) {
    out.push_back(Json(u));
    if (u <= 9223372036854775807ULL) {
      out.push_back(Json(static_cast<int64_t>(u)));
      out.push_back(Json(-static_cast<int64_t>(u)));
      out.push_back(Json(-static_cast<int64_t>(u) - 1));
    }
  }
  out.push_back(Json(std::numeric_limits<int64_t>::min()));
  for (const size_t n : {size_t{0}, size_t{23}, size_t{24}, size_t{255}, size_t{256}, size_t{65535},
                         size_t{65536}}) {
    out.push_back(Json(std::string(n, 's')));
    out.push_back(Json(std::string(n, '\xe6')));
    Json a = Json::array();
    for (size_t i = 0; i < n; ++i) a.push_back(Json(static_cast<int64_t>(i) - 30));
    out.push_back(a);
    Json o = Json::object();
    for (size_t i = 0; i < n; ++i) {
      std::string key = "k";
      key += std::to_string(i);
      o[key] = Json(i % 2 == 0);
    }
    out.push_back(o);
  }
  for (const double v : {0.0, -0.0, 0.5, 1.1, 1e300, -3.25, std::numeric_limits<double>::infinity(),
                         std::numeric_limits<double>::quiet_NaN()}) {
    out.push_back(Json(v));
  }
  out.push_back(Json::binary({1, 2, 3}));
  out.push_back(Json::binary({1, 2, 3}, 42));
  out.push_back(Json::object({{"nested", Json::array({Json(1.5), Json(nullptr), Json("x")})}}));
  return out;
}

TEST(DecisionRecord, AppendCborIsToCborByteForByte) {
  for (const Json& j : CborEdgeValues()) {
    ASSERT_EQ(DirectCbor(j), ToCbor(j)) << j.dump().substr(0, 80);
    ASSERT_EQ(DirectCbor(j, std::string(600, 'p')), std::string(600, 'p') + ToCbor(j));
  }
  Gen g(11);
  for (int i = 0; i < 5000; ++i) {
    const Json j = g.Value(0);
    ASSERT_EQ(DirectCbor(j), ToCbor(j)) << i;
  }
}

TEST(DecisionRecord, EncodingIsRecordWritersByteForByte) {
  Gen g(9);
  for (int i = 0; i < 5000; ++i) {
    SCOPED_TRACE(i);
    const Decision d = Generated(g);
    ASSERT_EQ(EncodeDecisionRecord(d), ReferenceRecord(d));
    std::string appended = "prefix";
    EncodeDecisionRecord(d, &appended);
    ASSERT_EQ(appended, "prefix" + ReferenceRecord(d));
  }
  // Json members whose CBOR length takes 1, 2 and 3 varint bytes (the in-place length is moved).
  Decision d = Sample(DecisionAction::kCreateJob);
  for (const Json& j : CborEdgeValues()) {
    d.job_object = j.is_null() ? Json(0) : j;
    d.status = j;
    ASSERT_EQ(EncodeDecisionRecord(d), ReferenceRecord(d)) << j.dump().substr(0, 80);
  }
}

TEST(DecisionCodec, RejectsUnknownAction) {
  Json j = EncodeDecision(Sample(DecisionAction::kEvent));
  j["action"] = "launchMissiles";
  EXPECT_FALSE(DecodeDecision(j).ok());
}

}  // namespace
}  // namespace cronledger::model
