// The child process of the kill -9 test (kill_test.cc): runs the controller on a RocksDB ledger in
// DIR/ledger against a FakeActuator cluster persisted in DIR/cluster.journal, in virtual time
// (DIR/clock), through a busy stretch of minutes in which every CronJob fires each minute. With
// --kill MODE --at K it SIGKILLs itself at the K-th event of that kind:
//   commit       inside the K-th ledger commit, before it is written
//   before-call  inside the K-th API call, before the cluster applies it
//   after-call   inside the K-th API call, after the cluster applied it, before it returns
// Started again on the same DIR it recovers like a restarted controller: the cluster relists into
// the controller (an informer's initial list, deletions included), then every CronJob is enqueued.
// Exit 0 when virtual time reached the end; the kill shows as death by SIGKILL.

#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "controller/controller.h"
#include "controller/testing/failing_ledger.h"
#include "controller/testing/fake_actuator.h"
#include "store/ledger.h"
#include "tests/controller/journal.h"

namespace cronledger::controller::testing {
namespace {

// 2024-01-01: CronJobs are created at 12:00:30 and fire every minute.
constexpr int64_t kStartUnix = 1704067200 + 12 * 3600 + 30;
// The busy fire times are 12:01 ... 12:05; the run goes on past 12:06 so that every one of them
// has its terminal record (a fire time that did not start is settled when the next one is due).
constexpr int64_t kEndUnix = 1704067200 + 12 * 3600 + 6 * 60 + 30;
constexpr auto kRunDuration = std::chrono::seconds(20);  // a Job completes 20 s after it started

struct Args {
  std::string dir;
  int cron_jobs = 100;
  std::string kill = "none";
  long at = 0;
};

Args Parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i];
    if (k == "--dir") a.dir = argv[i + 1];
    if (k == "--cronjobs") a.cron_jobs = std::atoi(argv[i + 1]);
    if (k == "--kill") a.kill = argv[i + 1];
    if (k == "--at") a.at = std::atol(argv[i + 1]);
  }
  CL_CHECK(!a.dir.empty());
  return a;
}

model::Json Manifest(int i) {
  return {{"apiVersion", "batch/v1"},
          {"kind", "CronJob"},
          {"metadata", {{"name", "busy-" + std::to_string(i)}, {"namespace", "default"}}},
          {"spec",
           {{"schedule", "* * * * *"},
            {"concurrencyPolicy", "Allow"},
            {"successfulJobsHistoryLimit", 1},
            {"failedJobsHistoryLimit", 1},
            {"jobTemplate", {{"spec", {{"template", {{"spec", model::Json::object()}}}}}}}}}};
}

// The informer's initial list after a restart: every object the cluster has, and a delete for
// every Job the view still holds that the cluster no longer has.
std::vector<model::WatchEvent> Relist(FakeActuator& cluster, store::Ledger& ledger) {
  std::vector<model::WatchEvent> events = cluster.List();
  const std::vector<store::ObjectEntry> cron_jobs = ledger.ListCronJobEntries().value();
  for (const store::ObjectEntry& cj : cron_jobs) {
    const std::vector<model::Job> jobs = ledger.ListJobsByOwner(cj.namespace_, cj.name).value();
    for (const model::Job& job : jobs) {
      if (cluster.HasJob(job.metadata.namespace_, job.metadata.name)) continue;
      auto stored = ledger.GetObject(model::ObjectKind::kJob, cj.namespace_, job.metadata.name);
      auto gone = MakeWatchEvent(model::WatchEventType::kDeleted,
                                 model::ParseJson(stored.value().raw).value());
      events.push_back(gone.value());
    }
  }
  return events;
}

void Pump(Controller& ctl, FakeActuator& cluster) {
  for (;;) {
    std::vector<model::WatchEvent> events = cluster.TakeEvents();
    if (!events.empty()) CL_CHECK(ctl.Ingest(events).ok());
    auto ran = ctl.RunReady();
    CL_CHECK(ran.ok());
    if (*ran == 0 && events.empty()) return;  // only passes change the cluster
  }
}

int Run(const Args& args) {
  const std::string journal_path = args.dir + "/cluster.journal";
  const std::string clock_path = args.dir + "/clock";
  ManualClock clock(ReadClock(clock_path).value_or(Time::FromUnix(kStartUnix)));
  auto tzdb = model::OpenSystemTimeZoneDb({}).value();

  store::LedgerOptions lo;
  lo.path = args.dir + "/ledger";
  lo.sync = store::SyncMode::kNone;  // a process kill loses nothing written (no machine crash here)
  std::unique_ptr<store::Ledger> base = store::Ledger::Open(lo).value();
  FailingLedger ledger(*base);
  long commits = 0;
  if (args.kill == "commit") {
    ledger.FailCommitsWhere([&](const store::UnitOfWork&) {
      if (++commits == args.at) raise(SIGKILL);
      return false;
    });
  }

  FakeActuator cluster(clock);
  const std::vector<model::WatchEvent> history = Journal::Read(journal_path).value();
  cluster.Restore(history);
  Journal journal(journal_path);
  cluster.SetChangeHook([&](const model::WatchEvent& ev) { journal.Append(ev); });
  long calls = 0;
  const int kill_phase = args.kill == "before-call" ? 0 : args.kill == "after-call" ? 1 : -1;
  cluster.SetCallHook([&](const model::ApiCall&, int phase) {
    if (phase == 0) ++calls;
    if (phase == kill_phase && calls == args.at) raise(SIGKILL);
  });
  if (history.empty()) {
    for (int i = 0; i < args.cron_jobs; ++i) cluster.PutCronJob(Manifest(i));
  }
  cluster.TakeEvents();  // superseded by the relist below

  auto ctl = Controller::Open(ControllerOptions{}, ledger, cluster, clock, clock, *tzdb).value();
  CL_CHECK(ctl->Ingest(Relist(cluster, ledger)).ok());
  CL_CHECK(ctl->EnqueueAll().ok());
  const Time end = Time::FromUnix(kEndUnix);
  for (;;) {
    Pump(*ctl, cluster);
    for (const std::string& job :
         cluster.RunningJobsStartedBefore(clock.Now().Add(-kRunDuration))) {
      cluster.FinishJob("default", job, "Complete");
    }
    Pump(*ctl, cluster);
    if (clock.Now() >= end) break;
    // Fast-forward to the next timer, but at least once per virtual second (Job lifecycle).
    Time next = Time::FromUnix(clock.Now().unix_seconds() + 1);
    if (auto due = ctl->NextDueNanos()) {
      const Time at = clock.Now().Add(Duration(*due - clock.NowNanos()));
      if (at < next) next = at;
    }
    clock.AdvanceTo(next);
    WriteClock(clock_path, clock.Now());
  }
  const ControllerStats s = ctl->Stats();
  std::printf("passes=%llu decisions=%llu api_calls=%llu commits=%ld\n",
              static_cast<unsigned long long>(s.passes),
              static_cast<unsigned long long>(s.decisions),
              static_cast<unsigned long long>(s.api_calls), commits);
  return 0;
}

}  // namespace
}  // namespace cronledger::controller::testing

int main(int argc, char** argv) {
  return cronledger::controller::testing::Run(cronledger::controller::testing::Parse(argc, argv));
}
