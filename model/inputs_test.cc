#include "model/inputs.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

namespace cronledger::model {
namespace {

std::vector<Input> SampleInputs() {
  WatchEvent added{WatchEventType::kAdded,
                   ObjectKind::kJob,
                   "batch/v1",
                   "prod",
                   "backup-28000000",
                   "7f0c1d2e-uid",
                   "12345",
                   "backup",
                   "owner-uid",
                   R"({"kind":"Job","metadata":{"name":"backup-28000000"}})"};
  WatchEvent bookmark;
  bookmark.type = WatchEventType::kBookmark;
  bookmark.api_version = "batch/v1";
  bookmark.resource_version = "999";
  Tick tick{Time::FromUnix(1700000000, 123456789), "prod", "backup", "timer"};
  Tick negative{Time::GoZero(), "", "", ""};
  ActionOutcome outcome{Time::FromUnix(1700000001),
                        42,
                        "create",
                        ObjectKind::kJob,
                        "prod",
                        "backup-28000000",
                        "AlreadyExists",
                        R"({"reason":"AlreadyExists"})"};
  ConfigChange config{Time::FromUnix(1700000002, 5), "historyCleanup", "false"};
  ActionIntent intent{Time::FromUnix(1700000003, 7),
                      41,
                      2,
                      "create",
                      ObjectKind::kJob,
                      "prod",
                      "backup-28000000",
                      R"({"verb":"create","kind":"Job"})"};
  PassEnd end{Time::FromUnix(1700000003, 7),
              41,
              40,
              "prod",
              "backup",
              "cj-uid",
              3,
              "requeue",
              R"({"accountedThrough":"2023-11-14T22:13:00Z"})"};
  return {added, bookmark, tick, negative, outcome, config, intent, ActionIntent{}, end, PassEnd{}};
}

Decision SampleDecision() {
  Decision d;
  d.seq = 77;
  d.time = Time::FromUnix(1700000000, 1);
  d.cron_job = {"prod", "backup", "cj-uid"};
  d.action = DecisionAction::kCreateJob;
  d.scheduled_time = Time::FromUnix(1699999980);
  d.range_end = Time::FromUnix(1700000000);
  d.job_name = "backup-28333333";
  d.job_object = Json::parse(R"({"metadata":{"name":"backup-28333333"},"spec":{"x":[1,2.5,-3]}})");
  d.message = "created";
  d.requeue_after = Duration(-5);
  d.status = Json::parse(R"({"active":[]})");
  d.cause = {9, 8, "timer"};
  d.policy = {"*/5 * * * *", "Europe/Berlin", "Forbid", 200, true};
  return d;
}

TEST(InputsTest, EveryInputTypeRoundTrips) {
  for (const Input& in : SampleInputs()) {
    const std::string bytes = EncodeInput(in);
    EXPECT_EQ(static_cast<uint8_t>(bytes[0]), kInputFormatV1);
    EXPECT_EQ(static_cast<uint8_t>(bytes[1]), static_cast<uint8_t>(InputRecordType(in)));
    auto decoded = DecodeInput(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, in);
    EXPECT_EQ(EncodeInput(*decoded), bytes);  // encode -> decode -> encode is stable
  }
}

// DecodeInputInto reuses the holder's strings; whatever the holder held, the result equals
// DecodeInput's, for every record type and in any order.
TEST(InputsTest, DecodeIntoEqualsDecodeWhateverTheHolderHeld) {
  const auto samples = SampleInputs();
  Input holder;
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < samples.size(); ++i) {
      const auto& in = samples[pass == 0 ? i : samples.size() - 1 - i];
      const std::string bytes = EncodeInput(in);
      ASSERT_TRUE(DecodeInputInto(bytes, &holder).ok()) << i;
      EXPECT_EQ(holder, in) << i;
      EXPECT_EQ(holder, *DecodeInput(bytes)) << i;
    }
  }
  // Errors are the same as DecodeInput's.
  std::string bytes = EncodeInput(samples.front());
  bytes.push_back('x');
  EXPECT_TRUE(DecodeInputInto(bytes, &holder).IsCorruption());
  EXPECT_TRUE(DecodeInputInto(bytes.substr(0, 5), &holder).IsCorruption());
  EXPECT_TRUE(DecodeInputInto("", &holder).IsCorruption());
}

// A holder of the record's own type (a log scan's) gives the same errors as a fresh one for every
// truncated prefix, and decodes the next record whole after one of them.
TEST(InputsTest, DecodeIntoAHolderOfTheSameTypeFailsAsAFreshDecode) {
  for (const Input& in : SampleInputs()) {
    const std::string bytes = EncodeInput(in);
    Input holder = in;
    for (size_t n = 0; n < bytes.size(); ++n) {
      const Status fresh = DecodeInput(bytes.substr(0, n)).status();
      ASSERT_TRUE(fresh.IsCorruption()) << n;
      EXPECT_EQ(DecodeInputInto(bytes.substr(0, n), &holder).ToString(), fresh.ToString()) << n;
      ASSERT_TRUE(DecodeInputInto(bytes, &holder).ok()) << n;
      EXPECT_EQ(holder, in) << n;
    }
  }
}

TEST(InputsTest, IntentAndPassEndHaveTheirOwnRecordTypes) {
  EXPECT_EQ(InputRecordType(Input(ActionIntent{})), RecordType::kActionIntent);
  EXPECT_EQ(InputRecordType(Input(PassEnd{})), RecordType::kPassEnd);
  EXPECT_EQ(static_cast<uint8_t>(EncodeInput(Input(ActionIntent{}))[1]), 5);
  EXPECT_EQ(static_cast<uint8_t>(EncodeInput(Input(PassEnd{}))[1]), 6);
  ActionIntent epoch;
  epoch.time = Time::FromUnix(0);
  std::string bad_kind = EncodeInput(Input(epoch));
  // version, type, time (2 bytes), tick_seq, call_index, empty verb, then the kind byte.
  bad_kind[2 + 2 + 1 + 1 + 1] = 9;
  EXPECT_TRUE(DecodeInput(bad_kind).status().IsCorruption());
}

TEST(InputsTest, DecisionRoundTripsWithAndWithoutOptionals) {
  Decision full = SampleDecision();
  Decision minimal;
  minimal.time = Time::FromUnix(5);
  minimal.action = DecisionAction::kSkipped;
  minimal.reason = "TooLate";
  for (const Decision& d : {full, minimal}) {
    const std::string bytes = EncodeDecisionRecord(d);
    auto decoded = DecodeDecisionRecord(bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    EXPECT_EQ(*decoded, d);
    EXPECT_EQ(EncodeDecisionRecord(*decoded), bytes);
    EXPECT_EQ(CanonicalDecisionBytes(*decoded), CanonicalDecisionBytes(d));
  }
}

TEST(InputsTest, BinaryDecisionIsSmallerThanJson) {
  const Decision d = SampleDecision();
  EXPECT_LT(EncodeDecisionRecord(d).size(), CanonicalDecisionBytes(d).size());
}

TEST(InputsTest, EveryTruncationIsCorruptionNotACrash) {
  std::vector<std::string> all;
  for (const Input& in : SampleInputs()) all.push_back(EncodeInput(in));
  all.push_back(EncodeDecisionRecord(SampleDecision()));
  for (const std::string& bytes : all) {
    for (size_t n = 0; n < bytes.size(); ++n) {
      const std::string_view prefix(bytes.data(), n);
      if (static_cast<uint8_t>(bytes[1]) == static_cast<uint8_t>(RecordType::kDecision)) {
        EXPECT_TRUE(DecodeDecisionRecord(prefix).status().IsCorruption()) << n;
      } else {
        EXPECT_TRUE(DecodeInput(prefix).status().IsCorruption()) << n;
      }
    }
    EXPECT_FALSE(DecodeInput(bytes + "x").ok());
  }
}

TEST(InputsTest, RejectsUnknownVersionAndType) {
  std::string bytes = EncodeInput(SampleInputs()[2]);
  bytes[0] = 2;
  EXPECT_TRUE(DecodeInput(bytes).status().IsCorruption());
  bytes[0] = 1;
  bytes[1] = 9;
  EXPECT_TRUE(DecodeInput(bytes).status().IsCorruption());
  EXPECT_TRUE(DecodeDecisionRecord(EncodeInput(SampleInputs()[2])).status().IsCorruption());
}

TEST(InputsTest, VarintEdges) {
  for (uint64_t v : {0ull, 127ull, 128ull, 300ull, ~0ull}) {
    std::string out;
    RecordWriter(&out).Varint(v);
    RecordReader r(out);
    uint64_t got = 1;
    ASSERT_TRUE(r.Varint(&got));
    EXPECT_EQ(got, v);
    EXPECT_TRUE(r.done());
  }
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1}, INT64_MIN, INT64_MAX}) {
    std::string out;
    RecordWriter(&out).Signed(v);
    RecordReader r(out);
    int64_t got = 7;
    ASSERT_TRUE(r.Signed(&got));
    EXPECT_EQ(got, v);
  }
  // 11 continuation bytes overflow 64 bits.
  const std::string too_long = std::string(10, '\xff') + "\x01";  // outlives the reader
  RecordReader overflow(too_long);
  uint64_t v = 0;
  EXPECT_FALSE(overflow.Varint(&v));
}

std::string FromHex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// Bytes written by the v1 encoder, frozen. If a format change breaks these, add a new version
// instead: stored ledgers hold v1 records forever.
constexpr std::string_view kV1WatchEvent =
    "010102020862617463682f76310470726f64056a6f622d31037569640231300663726f6e2d61036f75750e"
    "7b226b696e64223a224a6f62227d";
constexpr std::string_view kV1Tick = "010284c49fd50cfb0c0470726f640663726f6e2d610574696d6572";
constexpr std::string_view kV1Decision =
    "011093018a0884c49fd50c000470726f640663726f6e2d6105637675696401000007546f6f4c617465076a6f"
    "622d3132330b63726561746564206a6f6209070574696d65720b2a2f35202a202a202a202a0355544306466f"
    "72626964";

TEST(InputsTest, DecodesFrozenV1Fixtures) {
  auto event = DecodeInput(FromHex(kV1WatchEvent));
  ASSERT_TRUE(event.ok()) << event.status().ToString();
  const auto& e = std::get<WatchEvent>(*event);
  EXPECT_EQ(e.type, WatchEventType::kModified);
  EXPECT_EQ(e.kind, ObjectKind::kJob);
  EXPECT_EQ(e.namespace_, "prod");
  EXPECT_EQ(e.name, "job-1");
  EXPECT_EQ(e.uid, "uid");
  EXPECT_EQ(e.resource_version, "10");
  EXPECT_EQ(e.owner_name, "cron-a");
  EXPECT_EQ(e.owner_uid, "ouu");
  EXPECT_EQ(e.raw, R"({"kind":"Job"})");

  auto tick = DecodeInput(FromHex(kV1Tick));
  ASSERT_TRUE(tick.ok()) << tick.status().ToString();
  EXPECT_EQ(std::get<Tick>(*tick),
            (Tick{Time::FromUnix(1700000002, 1659), "prod", "cron-a", "timer"}));

  auto d = DecodeDecisionRecord(FromHex(kV1Decision));
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ(d->seq, 1034u);
  EXPECT_EQ(d->time, Time::FromUnix(1700000002));
  EXPECT_EQ(d->cron_job, (CronJobRef{"prod", "cron-a", "cvuid"}));
  EXPECT_EQ(d->action, DecisionAction::kSkipped);
  EXPECT_EQ(d->scheduled_time, Time::FromUnix(0));
  EXPECT_EQ(d->reason, "TooLate");
  EXPECT_EQ(d->job_name, "job-123");
  EXPECT_EQ(d->message, "created job");
  EXPECT_EQ(d->cause, (DecisionCause{9, 7, "timer"}));
  EXPECT_EQ(d->policy, (PolicySnapshot{"*/5 * * * *", "UTC", "Forbid", std::nullopt, false}));
}

// The zero-copy decoder (log scans, the fold) sees exactly what DecodeInput sees, minus the raw
// bytes; it refuses what DecodeInput refuses, and other record types.
TEST(InputsTest, WatchEventRefViewsTheSameFields) {
  for (const Input& in : SampleInputs()) {
    const std::string bytes = EncodeInput(in);
    WatchEventRef ref;
    const Status s = DecodeWatchEventRef(bytes, &ref);
    const auto* ev = std::get_if<WatchEvent>(&in);
    EXPECT_EQ(EncodedRecordType(bytes), static_cast<uint8_t>(InputRecordType(in)));
    if (ev == nullptr) {
      EXPECT_TRUE(s.IsCorruption()) << s.ToString();
      continue;
    }
    ASSERT_TRUE(s.ok()) << s.ToString();
    const WatchEventRef want = WatchEventRef::Of(*ev);
    EXPECT_EQ(ref.type, want.type);
    EXPECT_EQ(ref.kind, want.kind);
    EXPECT_EQ(ref.api_version, want.api_version);
    EXPECT_EQ(ref.namespace_, want.namespace_);
    EXPECT_EQ(ref.name, want.name);
    EXPECT_EQ(ref.uid, want.uid);
    EXPECT_EQ(ref.resource_version, want.resource_version);
    EXPECT_EQ(ref.owner_name, want.owner_name);
    EXPECT_EQ(ref.owner_uid, want.owner_uid);
    // Views into `bytes`, not copies.
    EXPECT_GE(ref.name.data(), bytes.data());
    EXPECT_LE(ref.name.data() + ref.name.size(), bytes.data() + bytes.size());
    for (size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_TRUE(DecodeWatchEventRef(std::string_view(bytes.data(), n), &ref).IsCorruption()) << n;
    }
    EXPECT_TRUE(DecodeWatchEventRef(bytes + "x", &ref).IsCorruption());
    std::string bad = bytes;
    bad[0] = 2;  // an unknown format version
    EXPECT_TRUE(DecodeWatchEventRef(bad, &ref).IsCorruption());
  }
  WatchEventRef ref;
  const std::string v1 = FromHex(kV1WatchEvent);  // the views point into it
  ASSERT_TRUE(DecodeWatchEventRef(v1, &ref).ok());
  EXPECT_EQ(ref.type, WatchEventType::kModified);
  EXPECT_EQ(ref.name, "job-1");
  EXPECT_EQ(ref.owner_uid, "ouu");
  EXPECT_EQ(EncodedRecordType("\x01"), 0);
}

// encoded_fields is set exactly when every field's length is one byte, and is then the record's
// bytes of the seven fields (what a view entry holds between its kind and its seq); a decode that
// cannot set it clears what an earlier decode into the same ref left there.
TEST(InputsTest, WatchEventRefEncodedFieldsAreTheFieldsAsRecorded) {
  WatchEvent ev = std::get<WatchEvent>(SampleInputs()[0]);
  const std::string bytes = EncodeInput(ev);
  WatchEventRef ref;
  ASSERT_TRUE(DecodeWatchEventRef(bytes, &ref).ok());
  std::string want;
  RecordWriter w(&want);
  for (const std::string* f : {&ev.api_version, &ev.namespace_, &ev.name, &ev.uid,
                               &ev.resource_version, &ev.owner_name, &ev.owner_uid}) {
    w.Bytes(*f);
  }
  EXPECT_EQ(ref.encoded_fields, want);
  EXPECT_EQ(ref.encoded_fields.data(), bytes.data() + 4);  // a view into the record
  EXPECT_EQ(ref.api_version.data(), ref.encoded_fields.data() + 1);

  WatchEvent bookmark = std::get<WatchEvent>(SampleInputs()[1]);  // empty fields, 1 byte each
  const std::string bookmark_bytes = EncodeInput(bookmark);
  ASSERT_TRUE(DecodeWatchEventRef(bookmark_bytes, &ref).ok());
  EXPECT_EQ(ref.encoded_fields.size(), 7 + bookmark.api_version.size() + 3);

  ev.name = std::string(200, 'n');  // a two-byte length
  const std::string long_bytes = EncodeInput(ev);
  ASSERT_TRUE(DecodeWatchEventRef(long_bytes, &ref).ok());
  EXPECT_EQ(ref.name, ev.name);
  EXPECT_TRUE(ref.encoded_fields.empty());

  // A length written in two bytes (0x85 0x00 = 5) decodes, but is not the entries' encoding.
  std::string padded = "\x01\x01\x02\x02";
  padded += "\x85";
  padded += '\0';
  padded += "abcde";
  for (int i = 0; i < 7; ++i) padded += '\0';  // six more empty fields and no raw bytes
  ASSERT_TRUE(DecodeWatchEventRef(bytes, &ref).ok());
  ASSERT_FALSE(ref.encoded_fields.empty());
  ASSERT_TRUE(DecodeWatchEventRef(padded, &ref).ok());
  EXPECT_EQ(ref.api_version, "abcde");
  EXPECT_TRUE(ref.encoded_fields.empty());
  EXPECT_TRUE(WatchEventRef::Of(ev).encoded_fields.empty());
}

// DecodeWatchEventRef (its fast path and the reader-based one) accepts exactly the watch event
// records DecodeInput accepts and gives the same fields, on records with random bytes changed,
// cut or appended.
TEST(InputsTest, WatchEventRefDecodesWhatDecodeInputDecodes) {
  std::mt19937 rng(3);
  std::vector<std::string> records;
  for (const Input& in : SampleInputs()) records.push_back(EncodeInput(in));
  WatchEvent long_ev = std::get<WatchEvent>(SampleInputs()[0]);
  long_ev.uid = std::string(130, 'u');
  records.push_back(EncodeInput(long_ev));
  int accepted = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes = records[rng() % records.size()];
    const uint32_t how = rng() % 4;
    if (how == 0 && !bytes.empty()) {
      bytes.resize(rng() % bytes.size());
    } else if (how == 1) {
      bytes.push_back(static_cast<char>(rng()));
    } else {
      for (uint32_t n = 1 + rng() % 3; n > 0 && !bytes.empty(); --n) {
        // Mostly the header and the lengths, where a change decides what decodes.
        const size_t at =
            rng() % 2 == 0 ? rng() % std::min<size_t>(bytes.size(), 12) : rng() % bytes.size();
        bytes[at] = static_cast<char>(rng() % 3 == 0 ? rng() : bytes[at] ^ (1u << (rng() % 8)));
      }
    }
    WatchEventRef ref;
    const Status got = DecodeWatchEventRef(bytes, &ref);
    const Result<Input> want = DecodeInput(bytes);
    const auto* ev = want.ok() ? std::get_if<WatchEvent>(&*want) : nullptr;
    ASSERT_EQ(got.ok(), ev != nullptr) << i << " " << got.ToString();
    if (ev == nullptr) {
      EXPECT_TRUE(got.IsCorruption());
      continue;
    }
    ++accepted;
    EXPECT_EQ(ref.type, ev->type);
    EXPECT_EQ(ref.kind, ev->kind);
    EXPECT_EQ(ref.api_version, ev->api_version);
    EXPECT_EQ(ref.namespace_, ev->namespace_);
    EXPECT_EQ(ref.name, ev->name);
    EXPECT_EQ(ref.uid, ev->uid);
    EXPECT_EQ(ref.resource_version, ev->resource_version);
    EXPECT_EQ(ref.owner_name, ev->owner_name);
    EXPECT_EQ(ref.owner_uid, ev->owner_uid);
  }
  EXPECT_GT(accepted, 1000);  // the changes left many records decodable, not only broken ones
}

}  // namespace
}  // namespace cronledger::model
