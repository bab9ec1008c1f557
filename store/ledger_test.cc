#include "store/ledger.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <utility>
#include <vector>

#include "store/keys.h"
#include "store/test_util.h"

namespace cronledger::store {
namespace {

using model::WatchEventType;
using testing::CronJobEvent;
using testing::JobEvent;
using testing::ManualClock;
using testing::TempDir;

std::unique_ptr<Ledger> OpenLedger(const std::string& path, const WallClock* clock = nullptr,
                                   SyncMode sync = SyncMode::kAlways) {
  LedgerOptions o;
  o.path = path;
  o.sync = sync;
  o.clock = clock;
  return testing::OpenTestLedger(o);
}

model::Decision MakeDecision(const std::string& name, Time t, model::DecisionAction action,
                             const std::string& reason) {
  model::Decision d;
  d.time = t;
  d.cron_job = {"ns", name, name + "-uid"};
  d.action = action;
  d.reason = reason;
  d.scheduled_time = t;
  return d;
}

// CronJob ns/a (seq 1) with Jobs a-1 and a-0 (seqs 2, 3), and Job b-0 of another owner (seq 4).
UnitOfWork CronJobAWithTwoJobsAndAnotherOwnersJob() {
  UnitOfWork unit;
  unit.inputs.push_back(CronJobEvent(WatchEventType::kAdded, "ns", "a", "ua", "1"));
  unit.inputs.push_back(JobEvent(WatchEventType::kAdded, "ns", "a-1", "uj1", "2", "a"));
  unit.inputs.push_back(JobEvent(WatchEventType::kAdded, "ns", "a-0", "uj0", "3", "a"));
  unit.inputs.push_back(JobEvent(WatchEventType::kAdded, "ns", "b-0", "ujb", "4", "b"));
  return unit;
}

TEST(LedgerTest, CommitFoldsIntoTheViewAndPersists) {
  TempDir dir;
  {
    auto ledger = OpenLedger(dir.path());
    UnitOfWork unit = CronJobAWithTwoJobsAndAnotherOwnersJob();
    unit.positions.push_back({"file:/x", "offset=10"});
    auto r = ledger->Commit(std::move(unit));
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->first_input_seq, 1u);
    EXPECT_EQ(r->last_input_seq, 4u);
  }
  auto ledger = OpenLedger(dir.path());
  auto cj = ledger->GetCronJob("ns", "a");
  ASSERT_TRUE(cj.ok()) << cj.status().ToString();
  EXPECT_EQ(cj->metadata.uid, "ua");
  EXPECT_EQ(cj->spec.schedule, "*/5 * * * *");
  auto jobs = ledger->ListJobsByOwner("ns", "a");
  ASSERT_TRUE(jobs.ok());
  ASSERT_EQ(jobs->size(), 2u);
  EXPECT_EQ((*jobs)[0].metadata.name, "a-0");
  EXPECT_EQ((*jobs)[1].metadata.name, "a-1");
  auto view = ledger->ReadCronJobView("ns", "a");
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->jobs.size(), 2u);
  EXPECT_EQ(view->last_input_seq, 4u);
  EXPECT_TRUE(ledger->GetCronJob("ns", "missing").status().IsNotFound());
  EXPECT_EQ(*ledger->GetResourceVersion("batch/v1/Job"), "4");
  EXPECT_EQ(*ledger->GetSourcePosition("file:/x"), "offset=10");
  auto meta = ledger->Meta();
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ(meta->schema_version, 1);
  EXPECT_EQ(meta->last_input_seq, 4u);
  auto all = ledger->ListCronJobs();
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->size(), 1u);
}

TEST(LedgerTest, ScanViewObjectsListsEveryObjectOfTheViewWithItsRawBytes) {
  TempDir dir;
  auto ledger = OpenLedger(dir.path());
  ASSERT_TRUE(ledger->Commit(CronJobAWithTwoJobsAndAnotherOwnersJob()).ok());
  UnitOfWork later;  // an object replaced and one removed: the view's versions, not the log's
  later.inputs.push_back(JobEvent(WatchEventType::kModified, "ns", "a-1", "uj1", "5", "b"));
  later.inputs.push_back(JobEvent(WatchEventType::kDeleted, "ns", "a-0", "uj0", "6", "a"));
  ASSERT_TRUE(ledger->Commit(std::move(later)).ok());

  std::vector<ViewObject> seen;
  auto last = ledger->ScanViewObjects([&seen](ViewObject o) {
    seen.push_back(std::move(o));
    return Status::Ok();
  });
  ASSERT_TRUE(last.ok()) << last.status().ToString();
  EXPECT_EQ(*last, 6u);
  ASSERT_EQ(seen.size(), 3u);  // CronJobs first, then Jobs, each by key
  const std::vector<std::pair<model::ObjectKind, std::string>> expected = {
      {model::ObjectKind::kCronJob, "a"},
      {model::ObjectKind::kJob, "a-1"},
      {model::ObjectKind::kJob, "b-0"}};
  for (size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].entry.kind, expected[i].first);
    EXPECT_EQ(seen[i].entry.name, expected[i].second);
    auto stored = ledger->GetObject(seen[i].entry.kind, "ns", seen[i].entry.name);
    ASSERT_TRUE(stored.ok());
    EXPECT_EQ(seen[i].entry, stored->entry);
    EXPECT_EQ(seen[i].raw, stored->raw);
  }
  EXPECT_EQ(seen[1].entry.source_seq, 5u);

  // Any watch event's bytes by its seq, the versions the view no longer holds too.
  for (const ViewObject& o : seen) {
    auto raw = ledger->GetInputRaw(o.entry.source_seq);
    ASSERT_TRUE(raw.ok()) << raw.status().ToString();
    EXPECT_EQ(*raw, o.raw);
  }
  auto replaced = ledger->GetInputRaw(2);  // a-1 before it changed owner
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ(*replaced, JobEvent(WatchEventType::kAdded, "ns", "a-1", "uj1", "2", "a").raw);
  UnitOfWork tick;
  tick.inputs.push_back(model::Tick{Time::FromUnix(1), "ns", "a", "timer"});
  ASSERT_TRUE(ledger->Commit(std::move(tick)).ok());
  EXPECT_TRUE(ledger->GetInputRaw(7).status().IsNotFound());   // not a watch event
  EXPECT_TRUE(ledger->GetInputRaw(99).status().IsNotFound());  // no such input

  // The callback's error stops the scan and is returned.
  int calls = 0;
  auto stopped = ledger->ScanViewObjects([&calls](ViewObject) {
    ++calls;
    return Status::Corruption("stop");
  });
  EXPECT_TRUE(stopped.status().IsCorruption());
  EXPECT_EQ(calls, 1);
}

TEST(LedgerTest, ScanInputsReturnsEveryRecordTypeWithRawBytes) {
  TempDir dir;
  ManualClock clock(Time::FromUnix(1000));
  auto ledger = OpenLedger(dir.path(), &clock);
  const auto added = CronJobEvent(WatchEventType::kAdded, "ns", "a", "ua", "1");
  UnitOfWork unit;
  unit.inputs = {added, model::Tick{Time::FromUnix(5), "ns", "a", "timer"},
                 model::ActionOutcome{Time::FromUnix(6), 1, "create", model::ObjectKind::kJob, "ns",
                                      "a-1", "AlreadyExists", "{}"},
                 model::ConfigChange{Time::FromUnix(7), "historyCleanup", "false"}};
  ASSERT_TRUE(ledger->Commit(unit).ok());
  std::vector<LogRecord> with_raw;
  ASSERT_TRUE(ledger
                  ->ScanInputs(0, true,
                               [&](const LogRecord& r) {
                                 with_raw.push_back(r);
                                 return true;
                               })
                  .ok());
  ASSERT_EQ(with_raw.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(with_raw[i].seq, i + 1);
    EXPECT_EQ(with_raw[i].input, unit.inputs[i]);
    EXPECT_EQ(with_raw[i].recorded_at, Time::FromUnix(1000));
  }
  std::vector<LogRecord> from3;
  ASSERT_TRUE(ledger
                  ->ScanInputs(3, false,
                               [&](const LogRecord& r) {
                                 from3.push_back(r);
                                 return true;
                               })
                  .ok());
  ASSERT_EQ(from3.size(), 2u);
  EXPECT_EQ(from3[0].seq, 3u);
}

TEST(LedgerTest, IntentsAndPassEndsWithoutTickSeqGetTheLastTickOfTheirUnit) {
  TempDir dir;
  auto ledger = OpenLedger(dir.path());
  auto intent = [](uint64_t tick_seq, uint32_t index) {
    return model::ActionIntent{Time::FromUnix(5),       tick_seq, index, "create",
                               model::ObjectKind::kJob, "ns",     "a-1", "{}"};
  };
  auto end = [](uint64_t tick_seq) {
    return model::PassEnd{Time::FromUnix(5), tick_seq, 1, "ns", "a", "ua", 0, "done", "{}"};
  };
  UnitOfWork first;  // seqs 1..6: an intent before any Tick keeps 0; explicit seqs stay
  first.inputs = {intent(0, 0), model::Tick{Time::FromUnix(5), "ns", "a", "timer"},
                  intent(0, 0), model::Tick{Time::FromUnix(5), "ns", "b", "timer"},
                  end(0),       end(2)};
  first.decisions = {MakeDecision("b", Time::FromUnix(5), model::DecisionAction::kCreateJob, "")};
  ASSERT_TRUE(ledger->Commit(first).ok());
  UnitOfWork second;  // seq 7: no Tick in the unit, so nothing to fill
  second.inputs = {end(0)};
  ASSERT_TRUE(ledger->Commit(second).ok());

  std::vector<model::Input> got;
  ASSERT_TRUE(ledger
                  ->ScanInputs(0, false,
                               [&](const LogRecord& r) {
                                 got.push_back(r.input);
                                 return true;
                               })
                  .ok());
  const std::vector<model::Input> want = {
      intent(0, 0), model::Tick{Time::FromUnix(5), "ns", "a", "timer"},
      intent(2, 0), model::Tick{Time::FromUnix(5), "ns", "b", "timer"},
      end(4),       end(2),
      end(0)};
  EXPECT_EQ(got, want);
  std::vector<model::Decision> decisions;
  ASSERT_TRUE(ledger
                  ->ScanDecisions(0,
                                  [&](const model::Decision& d) {
                                    decisions.push_back(d);
                                    return true;
                                  })
                  .ok());
  ASSERT_EQ(decisions.size(), 1u);
  EXPECT_EQ(decisions[0].cause.tick_seq, 4u);
}

TEST(LedgerTest, GivenRecordedTimesReplaceTheClockPerInput) {
  TempDir dir;
  ManualClock clock(Time::FromUnix(1000));
  auto ledger = OpenLedger(dir.path(), &clock);
  UnitOfWork copy;  // as a copy of another ledger writes it: its source's times
  copy.inputs = {model::Tick{Time::FromUnix(5), "ns", "a", "timer"},
                 model::Tick{Time::FromUnix(6), "ns", "b", "timer"}};
  copy.recorded_at = {Time::FromUnix(7), Time::FromUnix(9)};
  ASSERT_TRUE(ledger->Commit(copy).ok());
  UnitOfWork own;
  own.inputs = {model::Tick{Time::FromUnix(8), "ns", "c", "timer"}};
  ASSERT_TRUE(ledger->Commit(own).ok());
  UnitOfWork bad;
  bad.inputs = {model::Tick{Time::FromUnix(8), "ns", "d", "timer"}};
  bad.recorded_at = {Time::FromUnix(1), Time::FromUnix(2)};
  const auto refused = ledger->Commit(bad);
  EXPECT_TRUE(refused.status().IsInvalidArgument()) << refused.status().ToString();

  std::vector<Time> times;
  ASSERT_TRUE(ledger
                  ->ScanInputs(0, false,
                               [&](const LogRecord& r) {
                                 times.push_back(r.recorded_at);
                                 return true;
                               })
                  .ok());
  EXPECT_EQ(times, (std::vector<Time>{Time::FromUnix(7), Time::FromUnix(9), Time::FromUnix(1000)}));
}

TEST(LedgerTest, DecisionsGetSeqsCauseAndAuditIndexes) {
  TempDir dir;
  auto ledger = OpenLedger(dir.path());
  UnitOfWork first;
  first.inputs.push_back(CronJobEvent(WatchEventType::kAdded, "ns", "a", "ua", "1"));
  ASSERT_TRUE(ledger->Commit(first).ok());
  UnitOfWork tick;
  tick.inputs.push_back(model::Tick{Time::FromUnix(100), "ns", "a", "timer"});
  tick.decisions = {
      MakeDecision("a", Time::FromUnix(100), model::DecisionAction::kSkipped, "TooLate"),
      MakeDecision("a", Time::FromUnix(100), model::DecisionAction::kCreateJob, ""),
  };
  tick.controller_state.push_back({"ns/a", std::string("through=100")});
  auto r = ledger->Commit(tick);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first_decision_seq, 1u);
  EXPECT_EQ(r->last_decision_seq, 2u);
  UnitOfWork later;
  later.decisions = {
      MakeDecision("a", Time::FromUnix(200), model::DecisionAction::kSkipped, "Suspended"),
      MakeDecision("b", Time::FromUnix(150), model::DecisionAction::kSkipped, "TooLate"),
  };
  ASSERT_TRUE(ledger->Commit(later).ok());
  EXPECT_EQ(*ledger->GetControllerState("ns/a"), "through=100");

  std::vector<model::Decision> all;
  ASSERT_TRUE(ledger
                  ->ScanDecisions(0,
                                  [&](const model::Decision& d) {
                                    all.push_back(d);
                                    return true;
                                  })
                  .ok());
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(all[0].seq, 1u);
  EXPECT_EQ(all[0].cause.tick_seq, 2u);  // the unit's tick
  EXPECT_EQ(all[0].cause.input_seq, 1u);

  auto by_cj = ledger->DecisionsByCronJob("ns", "a", Time::FromUnix(0), Time::FromUnix(150), 0);
  ASSERT_TRUE(by_cj.ok());
  ASSERT_EQ(by_cj->size(), 2u);
  EXPECT_EQ((*by_cj)[0].seq, 1u);
  EXPECT_EQ((*by_cj)[1].seq, 2u);
  auto by_cj_late =
      ledger->DecisionsByCronJob("ns", "a", Time::FromUnix(150), Time::FromUnix(300), 0);
  ASSERT_EQ(by_cj_late->size(), 1u);
  EXPECT_EQ((*by_cj_late)[0].reason, "Suspended");
  // "a" must not match a CronJob named "ab" or namespace prefixes.
  EXPECT_TRUE(
      ledger->DecisionsByCronJob("n", "sa", Time::GoZero(), Time::FromUnix(999), 0)->empty());

  auto too_late = ledger->DecisionsByActionReason(std::nullopt, "TooLate", Time::FromUnix(0),
                                                  Time::FromUnix(1000), 0);
  ASSERT_EQ(too_late->size(), 2u);
  EXPECT_EQ((*too_late)[0].cron_job.name, "a");
  EXPECT_EQ((*too_late)[1].cron_job.name, "b");
  auto creates = ledger->DecisionsByActionReason(model::DecisionAction::kCreateJob, "",
                                                 Time::FromUnix(0), Time::FromUnix(1000), 0);
  ASSERT_EQ(creates->size(), 1u);
  auto skipped_too_late = ledger->DecisionsByActionReason(
      model::DecisionAction::kCreateJob, "TooLate", Time::FromUnix(0), Time::FromUnix(1000), 0);
  EXPECT_TRUE(skipped_too_late->empty());
  auto limited =
      ledger->DecisionsByActionReason(std::nullopt, "", Time::FromUnix(0), Time::FromUnix(1000), 3);
  ASSERT_EQ(limited->size(), 3u);
  EXPECT_EQ((*limited)[2].cron_job.name, "b");  // time order: 100, 100, 150
}

TEST(LedgerTest, DecisionCronJobNamesSkipScansTheCronJobIndex) {
  TempDir dir;
  auto ledger = OpenLedger(dir.path());
  auto decide = [&](const std::string& ns, const std::string& name, int64_t t) {
    UnitOfWork u;
    model::Decision d =
        MakeDecision(name, Time::FromUnix(t), model::DecisionAction::kCreateJob, "");
    d.cron_job.namespace_ = ns;
    u.decisions.push_back(d);
    ASSERT_TRUE(ledger->Commit(std::move(u)).ok());
  };
  // Namespaces and names that share prefixes, several decisions per name, written out of order.
  for (int64_t t : {300, 100, 200}) {
    for (const char* ns : {"a", "ab", "a-b"}) {
      for (const char* name : {"b", "ab", "a", "a-b"}) decide(ns, name, t);
    }
  }
  decide("ab", "only-ab", 50);
  // A CronJob deleted from the view keeps its decisions, so its name is listed.
  UnitOfWork added;
  added.inputs.push_back(CronJobEvent(WatchEventType::kAdded, "a", "gone", "ug", "1"));
  ASSERT_TRUE(ledger->Commit(std::move(added)).ok());
  decide("a", "gone", 150);
  UnitOfWork deleted;
  deleted.inputs.push_back(CronJobEvent(WatchEventType::kDeleted, "a", "gone", "ug", "2"));
  ASSERT_TRUE(ledger->Commit(std::move(deleted)).ok());
  ASSERT_TRUE(ledger->GetCronJob("a", "gone").status().IsNotFound());

  using Names = std::vector<std::string>;
  const std::vector<std::pair<std::string, Names>> want = {
      {"a", {"a", "a-b", "ab", "b", "gone"}},
      {"ab", {"a", "a-b", "ab", "b", "only-ab"}},
      {"a-b", {"a", "a-b", "ab", "b"}},
      {"b", {}},
      {"missing", {}},
  };
  for (const auto& [ns, names] : want) {
    auto got = ledger->DecisionCronJobNames(ns);
    ASSERT_TRUE(got.ok()) << ns << ": " << got.status().ToString();
    EXPECT_EQ(*got, names) << ns;
    // The default (a whole decision-log scan, for wrappers) gives the same answer.
    auto by_log = ledger->Ledger::DecisionCronJobNames(ns);
    ASSERT_TRUE(by_log.ok()) << ns;
    EXPECT_EQ(*by_log, names) << ns;
  }
}

TEST(LedgerTest, QuarantineKeepsReasonSourceAndBytes) {
  TempDir dir;
  ManualClock clock(Time::FromUnix(42));
  auto ledger = OpenLedger(dir.path(), &clock);
  UnitOfWork unit;
  unit.quarantine.push_back({0, Time(), "malformed JSON", "f.jsonl:3", "{nope"});
  unit.quarantine.push_back({0, Time(), "unknown kind Pod", "f.jsonl:4", "{\"kind\":\"Pod\"}"});
  ASSERT_TRUE(ledger->Commit(unit).ok());
  auto q = ledger->ListQuarantine(0, 0);
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->size(), 2u);
  EXPECT_EQ((*q)[0],
            (QuarantineEntry{1, Time::FromUnix(42), "malformed JSON", "f.jsonl:3", "{nope"}));
  EXPECT_EQ((*q)[1].id, 2u);
  EXPECT_EQ(ledger->ListQuarantine(2, 0)->size(), 1u);
  EXPECT_EQ(ledger->Meta()->quarantine_count, 2u);
}

TEST(LedgerTest, InvalidUnitIsRejectedWhole) {
  TempDir dir;
  auto ledger = OpenLedger(dir.path());
  UnitOfWork unit;
  unit.inputs.push_back(CronJobEvent(WatchEventType::kAdded, "ns", "a", "ua", "1"));
  unit.inputs.push_back(CronJobEvent(WatchEventType::kAdded, "ns", "", "ub", "2"));
  EXPECT_TRUE(ledger->Commit(unit).status().IsInvalidArgument());
  EXPECT_EQ(ledger->Meta()->last_input_seq, 0u);
  EXPECT_TRUE(ledger->GetCronJob("ns", "a").status().IsNotFound());
}

TEST(LedgerTest, SecondOpenOfALockedLedgerFails) {
  TempDir dir;
  auto ledger = OpenLedger(dir.path());
  LedgerOptions o;
  o.path = dir.path();
  EXPECT_FALSE(Ledger::Open(o).ok());
}

TEST(LedgerTest, SyncModes) {
  EXPECT_EQ(*ParseSyncMode("always"), SyncMode::kAlways);
  EXPECT_EQ(*ParseSyncMode("none"), SyncMode::kNone);
  EXPECT_EQ(SyncModeName(*ParseSyncMode("batch")), "batch");
  EXPECT_TRUE(ParseSyncMode("sometimes").status().IsInvalidArgument());
  for (SyncMode mode : {SyncMode::kBatch, SyncMode::kNone}) {
    TempDir dir;
    {
      auto ledger = OpenLedger(dir.path(), nullptr, mode);
      for (int i = 0; i < 10; ++i) {
        UnitOfWork u;
        u.inputs.push_back(model::ConfigChange{Time::FromUnix(i), "k", std::to_string(i)});
        ASSERT_TRUE(ledger->Commit(u).ok());
      }
    }
    EXPECT_EQ(OpenLedger(dir.path())->Meta()->last_input_seq, 10u);
  }
}

// A commit group writes only the counters it moves (last input seq, last decision seq, last
// quarantine id); a reopened ledger goes on from each, whichever groups moved it last.
TEST(LedgerTest, AReopenedLedgerGoesOnFromEveryCounter) {
  TempDir dir;
  auto commit = [](Ledger& l, int inputs, int decisions, int quarantined) {
    UnitOfWork u;
    for (int i = 0; i < inputs; ++i) {
      u.inputs.push_back(model::ConfigChange{Time::FromUnix(i), "k", std::to_string(i)});
    }
    for (int i = 0; i < decisions; ++i) {
      u.decisions.push_back(
          MakeDecision("a", Time::FromUnix(60 * i), model::DecisionAction::kRequeue, ""));
    }
    for (int i = 0; i < quarantined; ++i) u.quarantine.push_back({0, Time(), "bad", "src", "{"});
    auto r = l.Commit(std::move(u));
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : CommitResult{};
  };
  {
    auto l = OpenLedger(dir.path());
    commit(*l, 3, 0, 0);  // inputs 1..3
    commit(*l, 0, 2, 0);  // decisions 1..2
    commit(*l, 0, 0, 2);  // quarantine 1..2
    commit(*l, 1, 0, 0);  // input 4
  }
  auto l = OpenLedger(dir.path());
  const CommitResult r = commit(*l, 1, 1, 0);
  EXPECT_EQ(r.first_input_seq, 5u);
  EXPECT_EQ(r.first_decision_seq, 3u);
  commit(*l, 0, 0, 1);
  auto q = l->ListQuarantine(0, 0);
  ASSERT_TRUE(q.ok());
  ASSERT_EQ(q->size(), 3u);
  EXPECT_EQ(q->back().id, 3u);
  EXPECT_EQ(l->Meta()->last_input_seq, 5u);
}

size_t SstFiles(const std::string& dir) {
  size_t n = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    n += f.path().extension() == ".sst";
  return n;
}

// A write-buffer budget bounds the memtables of all column families together: writing 4 MiB with
// a 1 MiB budget flushes while the ledger is open (the same writes under the defaults, 64 MiB per
// family, stay in memory). Nothing is lost either way.
TEST(LedgerTest, AWriteBufferBudgetFlushesMemtablesEarlyAndKeepsEveryRecord) {
  for (const size_t budget : {size_t{0}, size_t{1} << 20}) {
    TempDir dir;
    LedgerOptions o;
    o.path = dir.path();
    o.sync = SyncMode::kNone;
    o.write_buffer_budget_bytes = budget;
    o.block_cache_bytes = 1u << 20;
    const std::string value(2048, 'v');
    {
      auto ledger = testing::OpenTestLedger(o);
      for (int i = 0; i < 2048; ++i) {
        UnitOfWork u;
        u.inputs.push_back(model::ConfigChange{Time::FromUnix(i), "k", value});
        ASSERT_TRUE(ledger->Commit(u).ok());
      }
      if (budget == 0) {
        EXPECT_EQ(SstFiles(dir.path()), 0u);
      } else {
        // The flush the budget triggered runs in the background: poll with a deadline.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (SstFiles(dir.path()) == 0 && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        EXPECT_GT(SstFiles(dir.path()), 0u);
      }
    }
    auto reopened = OpenLedger(dir.path());
    EXPECT_EQ(reopened->Meta()->last_input_seq, 2048u);
    size_t records = 0;
    ASSERT_TRUE(reopened
                    ->ScanInputs(0, false,
                                 [&](const LogRecord& r) {
                                   const auto* c = std::get_if<model::ConfigChange>(&r.input);
                                   records += c != nullptr && c->value == value;
                                   return true;
                                 })
                    .ok());
    EXPECT_EQ(records, 2048u);
  }
}

// The scan-only envelope skip (ScanWatchEvents) finds the same record as the full decode, and
// refuses every truncated envelope.
TEST(LedgerTest, LogValueInputSkipsTheEnvelopeDecodeLogValueReads) {
  const model::Input in = CronJobEvent(WatchEventType::kAdded, "ns", "a", "u", "1");
  for (const Time t : {Time::FromUnix(1700000000, 999999999), Time::FromUnix(0), Time::GoZero(),
                       Time::FromUnix(-5, 1)}) {
    for (const uint8_t flags : {uint8_t{0}, keys::kFlagRawPruned}) {
      const std::string bytes = keys::EncodeLogValue(t, flags, in);
      auto full = keys::DecodeLogValue(bytes);
      ASSERT_TRUE(full.ok());
      std::string_view input;
      ASSERT_TRUE(keys::LogValueInput(bytes, &input));
      EXPECT_EQ(input, full->input);
      const size_t envelope = bytes.size() - input.size();
      for (size_t n = 0; n < envelope; ++n) {
        EXPECT_FALSE(keys::LogValueInput(std::string_view(bytes.data(), n), &input)) << n;
      }
      std::string other = bytes;
      other[0] = 2;  // an unknown envelope version
      EXPECT_FALSE(keys::LogValueInput(other, &input));
    }
  }
}

}  // namespace
}  // namespace cronledger::store
