#include "emit/ledger_record.h"

#include <gtest/gtest.h>

#include "emit/outbox_emitter.h"

namespace cronledger::emit {
namespace {

store::LogRecord Rec(uint64_t seq, model::Input in, bool pruned = false) {
  store::LogRecord r;
  r.seq = seq;
  r.recorded_at = Time::FromUnix(1716112800, 123456789);
  r.input = std::move(in);
  r.raw_pruned = pruned;
  return r;
}

TEST(LedgerRecord, EveryInputTypeRoundTrips) {
  const Time t = Time::FromUnix(1716112805, 5);
  model::WatchEvent e;
  e.type = model::WatchEventType::kModified;
  e.kind = model::ObjectKind::kJob;
  e.api_version = "batch/v1";
  e.namespace_ = "prod";
  e.name = "backup-28600000";
  e.uid = "u1";
  e.resource_version = "42";
  e.owner_name = "backup";
  e.owner_uid = "u0";
  e.raw = R"({"kind":"Job", "metadata":{"name":"backup-28600000"}})";
  const store::LogRecord records[] = {
      Rec(1, e),
      Rec(2, model::Tick{t, "prod", "backup", "timer"}, true),
      Rec(3, model::ActionIntent{t, 2, 1, "create", model::ObjectKind::kJob, "prod", "backup-1",
                                 R"({"verb":"create"})"}),
      Rec(4, model::ActionOutcome{t, 3, "create", model::ObjectKind::kJob, "prod", "backup-1",
                                  "AlreadyExists", ""}),
      Rec(5, model::ConfigChange{t, "historyCleanup", "false"}),
      Rec(6, model::PassEnd{t, 2, 1, "prod", "backup", "u0", 2, "requeue", R"({"a":1})"}),
  };
  for (const auto& r : records) {
    const model::Json j = EncodeLedgerRecord(r);
    auto back = DecodeLedgerRecord(model::ParseJson(model::DumpJson(j)).value());
    ASSERT_TRUE(back.ok()) << back.status().ToString() << " " << j.dump();
    EXPECT_EQ(back->seq, r.seq);
    EXPECT_EQ(back->recorded_at, r.recorded_at);
    EXPECT_EQ(back->raw_pruned, r.raw_pruned);
    EXPECT_EQ(back->input, r.input) << j.dump();
    EXPECT_EQ(model::DumpJson(EncodeLedgerRecord(*back)), model::DumpJson(j));
  }
}

TEST(LedgerRecord, MalformedRecordsAreRejected) {
  const char* bad[] = {
      R"([1,2])",
      R"({"seq":1,"recordedAt":"2024-05-19T10:00:00Z","type":"nope"})",
      R"({"seq":"1","recordedAt":"2024-05-19T10:00:00Z","type":"tick","now":"2024-05-19T10:00:00Z"})",
      R"({"seq":1,"recordedAt":"yesterday","type":"tick","now":"2024-05-19T10:00:00Z"})",
      R"({"seq":1,"recordedAt":"2024-05-19T10:00:00Z","type":"watchEvent","eventType":"X"})",
      R"({"seq":1,"recordedAt":"2024-05-19T10:00:00Z","type":"actionOutcome","kind":"Pod",
          "time":"2024-05-19T10:00:00Z"})",
  };
  for (const char* text : bad) {
    EXPECT_FALSE(DecodeLedgerRecord(model::ParseJson(text).value()).ok()) << text;
  }
}

TEST(LedgerRecord, DecisionKeyIsNamespaceSlashName) {
  model::Decision d;
  d.cron_job = {"prod", "backup", "u0"};
  EXPECT_EQ(KeyOfDecision(d), "prod/backup");
}

TEST(EmitPosition, RoundTripsAndRejectsGarbage) {
  EXPECT_EQ(EncodeEmitPosition(1234), "seq=1234");
  EXPECT_EQ(DecodeEmitPosition("seq=1234").value(), 1234u);
  for (const char* bad : {"", "seq=", "seq=12x", "offset=3", "seq=-1"}) {
    EXPECT_FALSE(DecodeEmitPosition(bad).ok()) << bad;
  }
}

}  // namespace
}  // namespace cronledger::emit
