#include "ingest/stream_ingest.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

#include "model/test_events.h"
#include "store/test_util.h"

namespace cronledger::ingest {
namespace {

using store::testing::TempDir;

class StreamIngestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store::LedgerOptions o;
    o.path = dir_.Sub("ledger");
    o.sync = store::SyncMode::kNone;
    ledger_ = std::move(store::Ledger::Open(o)).value();
  }

  void Write(const std::string& text, bool append = false) {
    std::ofstream f(file(), append ? std::ios::app : std::ios::trunc);
    f << text;
  }

  Result<IngestProgress> Ingest(size_t batch = 3, std::vector<IngestProgress>* acks = nullptr) {
    StreamIngestOptions o;
    o.source = "file:" + file();
    o.label = "events.jsonl";
    o.batch_documents = batch;
    o.read_size = 100;  // small reads exercise documents split across reads
    int fd = ::open(file().c_str(), O_RDONLY);
    EXPECT_GE(fd, 0);
    auto r = IngestStream(fd, ledger_.get(), o, [&](const IngestProgress& p) {
      if (acks) acks->push_back(p);
    });
    ::close(fd);
    return r;
  }

  std::vector<store::LogRecord> Log() {
    std::vector<store::LogRecord> out;
    EXPECT_TRUE(ledger_
                    ->ScanInputs(0, true,
                                 [&](const store::LogRecord& r) {
                                   out.push_back(r);
                                   return true;
                                 })
                    .ok());
    return out;
  }

  std::string file() const { return dir_.Sub("events.jsonl"); }

  TempDir dir_;
  std::unique_ptr<store::Ledger> ledger_;
};

std::string Lines(uint64_t from, uint64_t to) {
  std::string out;
  for (uint64_t i = from; i < to; ++i) out += model::testing::StreamLine(i, 5);
  return out;
}

TEST_F(StreamIngestTest, IngestsQuarantinesAndResumesWithoutDuplicates) {
  Write(Lines(0, 4) + "garbage line\n" + Lines(4, 8) +
        R"({"type":"ERROR","object":{"kind":"Status","message":"expired"}})"
        "\n");
  std::vector<IngestProgress> acks;
  auto r = Ingest(3, &acks);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->documents, 10u);
  EXPECT_EQ(r->events, 8u);
  EXPECT_EQ(r->quarantined, 2u);
  EXPECT_EQ(r->line, 11u);
  // Units of 3 documents (3 + 3 + 3 + 1); units queued behind a running commit are merged.
  ASSERT_GE(acks.size(), 1u);
  ASSERT_LE(acks.size(), 4u);
  for (size_t i = 0; i < acks.size(); ++i) {
    if (i + 1 < acks.size()) {
      EXPECT_EQ(acks[i].documents % 3, 0u);
    }
    if (i > 0) {
      EXPECT_GT(acks[i].offset, acks[i - 1].offset);
    }
  }
  EXPECT_EQ(acks.back().documents, 10u);

  auto q = ledger_->ListQuarantine(0, 0);
  ASSERT_EQ(q->size(), 2u);
  EXPECT_EQ((*q)[0].source, "events.jsonl:5");
  EXPECT_EQ((*q)[0].raw, "garbage line");
  EXPECT_EQ((*q)[1].source, "events.jsonl:10");
  EXPECT_EQ((*q)[1].reason, "watch ERROR event: expired");

  auto log = Log();
  ASSERT_EQ(log.size(), 8u);
  const auto& first = std::get<model::WatchEvent>(log[0].input);
  EXPECT_EQ(first.kind, model::ObjectKind::kCronJob);
  EXPECT_EQ(first.resource_version, "1");
  EXPECT_GT(first.raw.size(), 2000u);

  // The same file again: nothing new.
  auto again = Ingest();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->documents, 0u);
  EXPECT_EQ(Log().size(), 8u);

  // Appended lines: only those are read.
  Write(Lines(8, 12), /*append=*/true);
  auto more = Ingest();
  ASSERT_TRUE(more.ok()) << more.status().ToString();
  EXPECT_EQ(more->events, 4u);
  EXPECT_EQ(more->line, 15u);
  auto all = Log();
  ASSERT_EQ(all.size(), 12u);
  EXPECT_EQ(std::get<model::WatchEvent>(all.back().input).resource_version, "12");
  EXPECT_TRUE(ledger_->Rebuild(false)->differences.empty());
}

TEST_F(StreamIngestTest, ARewrittenFileIsRefusedNotSkipped) {
  Write(Lines(0, 6));
  ASSERT_TRUE(Ingest().ok());
  Write(Lines(1, 7));  // same size class, different bytes
  EXPECT_EQ(Ingest().status().code(), Status::Code::kFailedPrecondition);
  Write(Lines(0, 2));  // shorter than the committed position
  EXPECT_EQ(Ingest().status().code(), Status::Code::kFailedPrecondition);
  EXPECT_EQ(Log().size(), 6u);
}

TEST_F(StreamIngestTest, PrettyPrintedKubectlOutput) {
  std::string pretty;
  auto reparsed = model::ParseJson(model::testing::CronJobObject("ns", "a", "ua", 3));
  ASSERT_TRUE(reparsed.ok());
  pretty += reparsed->dump(4) + "\n";
  pretty += "{\n    \"kind\": \"Job\",\n";  // cut off by the next document
  pretty +=
      R"({"type":"DELETED","object":)" + model::testing::CronJobObject("ns", "a", "ua", 4) + "}\n";
  Write(pretty);
  auto r = Ingest(100);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->events, 2u);
  EXPECT_EQ(r->quarantined, 1u);
  auto q = ledger_->ListQuarantine(0, 0);
  EXPECT_EQ((*q)[0].reason, "truncated JSON document");
  EXPECT_TRUE(ledger_->GetCronJob("ns", "a").status().IsNotFound());  // deleted at the end
}

TEST(StreamPositionTest, RoundTrips) {
  StreamPosition p{123, 45, 0xfedcba9876543210ull, 123};
  auto d = DecodeStreamPosition(EncodeStreamPosition(p));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->offset, 123u);
  EXPECT_EQ(d->line, 45u);
  EXPECT_EQ(d->prefix_hash, p.prefix_hash);
  EXPECT_FALSE(DecodeStreamPosition("offset=x").ok());
}

}  // namespace
}  // namespace cronledger::ingest
