// A corrupted ledger or bundle is detected by verify, with the first differing record and the
// inputs that produced it — never silently accepted.

#include <gtest/gtest.h>

#include "model/sha256.h"
#include "reconciler/job_builder.h"
#include "replay/bundle.h"
#include "replay/engine.h"
#include "tests/replay/sim_world.h"

namespace cronledger::replay {
namespace {

using model::Sha256;
using testing::At;
using testing::SimWorld;

// A short day: forbid's 10:00 Job runs past 10:05 and 10:10.
void RecordForbid(SimWorld& w) {
  w.Apply(testing::Manifest("forbid", "*/5 * * * *", {{"concurrencyPolicy", "Forbid"}}));
  w.Apply(testing::Manifest("plain", "*/5 * * * *"));
  w.RunUntil(At(10, 31));
}

// Every input (with raw bytes) and every decision of `ledger`, in log order.
void ReadLedger(store::Ledger& ledger, std::vector<store::LogRecord>* inputs,
                std::vector<model::Decision>* decisions) {
  ASSERT_TRUE(ledger
                  .ScanInputs(1, true,
                              [&](const store::LogRecord& r) {
                                inputs->push_back(r);
                                return true;
                              })
                  .ok());
  ASSERT_TRUE(ledger
                  .ScanDecisions(1,
                                 [&](const model::Decision& d) {
                                   decisions->push_back(d);
                                   return true;
                                 })
                  .ok());
}

// Copies every input and decision into a new ledger, letting `edit` change decisions.
void CopyLedger(store::Ledger& from, const std::string& path,
                const std::function<void(model::Decision*)>& edit) {
  store::LedgerOptions lo;
  lo.path = path;
  lo.sync = store::SyncMode::kNone;
  auto to = store::Ledger::Open(lo);
  ASSERT_TRUE(to.ok());
  store::UnitOfWork inputs, decisions;
  ASSERT_TRUE(from.ScanInputs(1, true,
                              [&](const store::LogRecord& r) {
                                inputs.inputs.push_back(r.input);
                                return true;
                              })
                  .ok());
  ASSERT_TRUE(from.ScanDecisions(1,
                                 [&](const model::Decision& d) {
                                   decisions.decisions.push_back(d);
                                   edit(&decisions.decisions.back());
                                   return true;
                                 })
                  .ok());
  ASSERT_TRUE((*to)->Commit(std::move(inputs)).ok());
  ASSERT_TRUE((*to)->Commit(std::move(decisions)).ok());
}

ReplayResult Verify(RecordSource& src, bool verify_only = false) {
  ReplayOptions o;
  o.verify_only = verify_only;
  o.decide_on_second_thread = verify_only;  // as replay --verify runs
  auto r = Replay(src, o);
  CL_CHECK(r.ok());
  return std::move(*r);
}

TEST(Tamper, AnUntouchedCopyVerifiesWithTheSameDigest) {
  SimWorld w(At(9, 59, 30), std::chrono::minutes(12));
  RecordForbid(w);
  CopyLedger(w.ledger(), w.dir().Sub("copy"), [](model::Decision*) {});
  LedgerSource original(w.ledger());
  const ReplayResult a = Verify(original);
  store::LedgerOptions lo;
  lo.path = w.dir().Sub("copy");
  auto copy = store::Ledger::Open(lo);
  ASSERT_TRUE(copy.ok());
  LedgerSource copied(**copy);
  const ReplayResult b = Verify(copied);
  EXPECT_EQ(a.divergences, 0u);
  EXPECT_EQ(b.divergences, 0u);
  EXPECT_EQ(a.recorded_digest.sha256, b.recorded_digest.sha256);
}

TEST(Tamper, AModifiedDecisionIsTheFirstDivergenceWithItsPass) {
  SimWorld w(At(9, 59, 30), std::chrono::minutes(12));
  RecordForbid(w);
  uint64_t forged_tick = 0;
  CopyLedger(w.ledger(), w.dir().Sub("copy"), [&](model::Decision* d) {
    if (d->cron_job.name == "forbid" && d->scheduled_time == At(10, 5) &&
        d->action == model::DecisionAction::kSkipped) {
      d->reason = "Suspended";  // what a forger would claim
      forged_tick = d->cause.tick_seq;
    }
  });
  ASSERT_NE(forged_tick, 0u);
  store::LedgerOptions lo;
  lo.path = w.dir().Sub("copy");
  auto copy = store::Ledger::Open(lo);
  ASSERT_TRUE(copy.ok());
  LedgerSource src(**copy);
  // The same report from the full replay and from a verify-only one (replay --verify).
  for (const bool verify_only : {false, true}) {
    const ReplayResult r = Verify(src, verify_only);
    ASSERT_TRUE(r.first_divergence.has_value());
    EXPECT_EQ(r.divergences, 1u);
    EXPECT_NE(r.derived_digest.sha256, r.recorded_digest.sha256);
    const Divergence& d = *r.first_divergence;
    EXPECT_EQ(d.recorded->reason, "Suspended");
    EXPECT_EQ(d.derived->reason, "ConcurrencyForbid");
    ASSERT_TRUE(d.pass.has_value());
    EXPECT_EQ(d.pass->tick_seq, forged_tick);
    EXPECT_EQ(d.pass->job_seqs.count(reconciler::JobName("forbid", At(10, 0))), 1u);
  }
}

// Rewrites a bundle without line `drop` (1-based), with consistent counts and checksum: what a
// tool that edits bundles carelessly (or on purpose) would produce.
std::string DropLine(const std::string& text, size_t drop) {
  std::vector<std::string> lines;
  for (size_t pos = 0; pos < text.size();) {
    const size_t nl = text.find('\n', pos);
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  lines.erase(lines.begin() + static_cast<long>(drop - 1));
  auto header = model::ParseJson(lines.front());
  (*header)["inputs"] = (*header)["inputs"].get<uint64_t>() - 1;
  lines.front() = model::DumpJson(*header);
  std::string body;
  for (size_t i = 0; i + 1 < lines.size(); ++i) body += lines[i] + "\n";
  auto end = model::ParseJson(lines.back());
  (*end)["inputs"] = (*header)["inputs"];
  (*end)["sha256"] = Sha256::Hex(Sha256::Hash(body));
  return body + model::DumpJson(*end) + "\n";
}

TEST(Tamper, AnInputRemovedFromABundleIsDetected) {
  SimWorld w(At(9, 59, 30), std::chrono::minutes(12));
  RecordForbid(w);
  LedgerSource src(w.ledger());
  const std::string text = *ExportBundle(src, ReplayScope{}, BundleHeader{});
  auto whole = ReadBundle(text);
  ASSERT_TRUE(whole.ok());
  // The watch event that reports forbid's 10:00 Job finished.
  const std::string job = reconciler::JobName("forbid", At(10, 0));
  size_t line = 0;
  const auto& inputs = whole->source->inputs();
  for (size_t i = 0; i < inputs.size() && line == 0; ++i) {
    const auto* ev = std::get_if<model::WatchEvent>(&inputs[i].input);
    if (ev && ev->name == job && ev->raw.find("\"Complete\"") != std::string::npos) line = i + 2;
  }
  ASSERT_NE(line, 0u);
  // Dropping the line naively breaks the checksum.
  std::string naive = text;
  size_t pos = 0;
  for (size_t i = 1; i < line; ++i) pos = naive.find('\n', pos) + 1;
  naive.erase(pos, naive.find('\n', pos) + 1 - pos);
  EXPECT_TRUE(ReadBundle(naive).status().IsCorruption());
  // Dropping it consistently is caught by verify: the Job stays active in the replayed view.
  auto edited = ReadBundle(DropLine(text, line));
  ASSERT_TRUE(edited.ok()) << edited.status().ToString();
  const ReplayResult r = Verify(*edited->source);
  ASSERT_TRUE(r.first_divergence.has_value());
  const Divergence& d = *r.first_divergence;
  ASSERT_TRUE(d.pass.has_value());
  EXPECT_EQ(d.pass->tick.name, "forbid");
  EXPECT_GT(d.pass->tick.now, At(10, 12));
  EXPECT_EQ(d.pass->job_seqs.count(job), 1u);  // the view still holds the finished Job
}

// A decision log with a record removed, one added (a forged record no pass made, in scope) or
// one given a Job object it did not have: a verify-only replay reports what the full replay
// reports — the same count of divergences, first divergence and digests.
TEST(Tamper, VerifyOnlyReportsMissingAddedAndChangedDecisionsAsTheFullReplay) {
  SimWorld w(At(9, 59, 30), std::chrono::minutes(12));
  RecordForbid(w);
  std::vector<store::LogRecord> inputs;
  std::vector<model::Decision> decisions;
  ReadLedger(w.ledger(), &inputs, &decisions);
  ASSERT_GT(decisions.size(), 10u);
  std::vector<std::vector<model::Decision>> logs;
  logs.push_back(decisions);  // intact
  logs.push_back(decisions);
  logs.back().erase(logs.back().begin() + static_cast<long>(decisions.size() / 2));
  logs.push_back(decisions);
  model::Decision forged = decisions.back();
  forged.seq = decisions.back().seq + 1;
  forged.cause.tick_seq = inputs.back().seq + 100;  // no such Tick
  forged.reason = "Forged";
  logs.back().push_back(forged);
  logs.push_back(decisions);
  logs.back().front().job_object = model::Json{{"x", 1}};
  for (size_t i = 0; i < logs.size(); ++i) {
    SCOPED_TRACE(i);
    MemorySource src(inputs, logs[i]);
    const ReplayResult full = Verify(src, false);
    const ReplayResult fast = Verify(src, true);
    EXPECT_EQ(full.divergences == 0, i == 0);
    EXPECT_EQ(fast.divergences, full.divergences);
    EXPECT_EQ(fast.derived_digest.sha256, full.derived_digest.sha256);
    EXPECT_EQ(fast.recorded_digest.sha256, full.recorded_digest.sha256);
    EXPECT_EQ(fast.recorded_digest.decisions, full.recorded_digest.decisions);
    ASSERT_EQ(fast.first_divergence.has_value(), full.first_divergence.has_value());
    if (!full.first_divergence) continue;
    EXPECT_EQ(fast.first_divergence->index, full.first_divergence->index);
    EXPECT_EQ(fast.first_divergence->what, full.first_divergence->what);
  }
}

// The input log as a source reads it, with a failing scan after `fail_after` records (0: never).
class BrokenInputs final : public RecordSource {
 public:
  BrokenInputs(std::vector<store::LogRecord> inputs, std::vector<model::Decision> decisions,
               size_t fail_after)
      : inner_(std::move(inputs), std::move(decisions)), fail_after_(fail_after) {}
  Status ScanInputs(const std::function<bool(const store::LogRecord&)>& fn) override {
    size_t n = 0;
    bool failed = false;
    CL_RETURN_IF_ERROR(inner_.ScanInputs([&](const store::LogRecord& r) {
      if (fail_after_ != 0 && n++ == fail_after_) {
        failed = true;
        return false;
      }
      return fn(r);
    }));
    return failed ? Status::Corruption("input log: malformed envelope") : Status::Ok();
  }
  Status ScanDecisions(const std::function<bool(const model::Decision&)>& fn) override {
    return inner_.ScanDecisions(fn);
  }
  uint64_t ApproximateRecords() override { return inner_.ApproximateRecords(); }

 private:
  MemorySource inner_;
  size_t fail_after_;
};

// Corrupted inputs under replay --verify (verify-only, the passes and the objects' decode on a
// second thread): a Job whose recorded bytes no longer parse makes the passes that
// read it divergences, and an input scan that fails midway fails the replay — both exactly as in
// the full replay on one thread.
TEST(Tamper, VerifyOnlyReportsCorruptInputsAsTheFullReplay) {
  SimWorld w(At(9, 59, 30), std::chrono::minutes(12));
  RecordForbid(w);
  std::vector<store::LogRecord> inputs;
  std::vector<model::Decision> decisions;
  ReadLedger(w.ledger(), &inputs, &decisions);
  const std::string job = reconciler::JobName("forbid", At(10, 0));
  // Every version of the Job: the passes that read it are those that did something (a pass that
  // changes nothing is not recorded), which need not be the first version's.
  bool broken = false;
  for (auto& r : inputs) {
    auto* ev = std::get_if<model::WatchEvent>(&r.input);
    if (ev != nullptr && ev->name == job && ev->type != model::WatchEventType::kDeleted) {
      ev->raw = "{\"apiVersion\": \"batch/v1\", \"kind\": ";  // truncated
      broken = true;
    }
  }
  ASSERT_TRUE(broken);
  {
    BrokenInputs src(inputs, decisions, 0);
    const ReplayResult full = Verify(src, false);
    const ReplayResult fast = Verify(src, true);
    EXPECT_GT(full.divergences, 0u);
    EXPECT_EQ(fast.divergences, full.divergences);
    EXPECT_EQ(fast.derived_digest.sha256, full.derived_digest.sha256);
    ASSERT_TRUE(full.first_divergence.has_value());
    ASSERT_TRUE(fast.first_divergence.has_value());
    EXPECT_EQ(fast.first_divergence->index, full.first_divergence->index);
    EXPECT_EQ(fast.first_divergence->what, full.first_divergence->what);
    EXPECT_EQ(fast.recorded_digest.sha256, full.recorded_digest.sha256);
  }
  for (const size_t fail_after : {size_t{1}, inputs.size() / 2, inputs.size() - 1}) {
    SCOPED_TRACE(fail_after);
    BrokenInputs src(inputs, decisions, fail_after);
    for (const bool verify_only : {false, true}) {
      ReplayOptions o;
      o.verify_only = verify_only;
      o.decide_on_second_thread = verify_only;
      auto r = Replay(src, o);
      ASSERT_FALSE(r.ok());
      EXPECT_TRUE(r.status().IsCorruption()) << r.status().ToString();
    }
  }
}

}  // namespace
}  // namespace cronledger::replay
