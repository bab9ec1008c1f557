// Replay throughput (goal: >= 1 M records/s). Records a ledger with the real controller
// loop against the SimCluster in virtual time (CRONJOBS CronJobs with mixed schedules and
// policies over VIRTUAL_MINUTES), then measures, on the same records:
//   peer:   the raw ledger scan — ScanInputs(with raw bytes) + ScanDecisions, records decoded;
//   replay: what replay --verify runs (ReplayOptions::verify_only, passes decided on a second
//           thread) — the input scan with raw bytes and the decision log as stored bytes, the view
//           fold, Decide for every pass, the byte comparison and the SHA-256 chain;
//   and the same replay with the passes decided on the scanning thread (digest checked);
//   the audit trail on the same records: the first checkpoint (every leaf and head computed and
//   stored) and `verify-trail` (replay::trail::VerifyStore), against a second peer: the records as
//   stored (ScanStoredInputs, ScanDecisionBytes) with one SHA-256 of each record's bytes and of a
//   watch event's raw bytes, the bytes the trail hashes, hashed once.
// Each is run three times; the best is reported with its CPU time (all threads, and the scanning
// thread alone). Rates count input + decision records.
//
// REPLAY_BENCH_DIR=DIR keeps the recorded ledger in DIR and reuses it when DIR already holds one
// recorded with the same arguments (for profiling the replay alone); by default a temporary
// directory is recorded and removed. REPLAY_BENCH_ROUNDS=N (default 3) sets the repetitions;
// REPLAY_BENCH_PROFILE=1 skips the single-thread variant.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>

#include "controller/controller.h"
#include "controller/sim_cluster.h"
#include "model/clock.h"
#include "model/json.h"
#include "model/sha256.h"
#include "replay/engine.h"
#include "replay/trail.h"
#include "store/ledger.h"

namespace cl = cronledger;

namespace {

cl::model::CronJob Manifest(int i) {
  static const char* kSchedules[] = {"* * * * *", "*/2 * * * *", "*/5 * * * *", "*/3 * * * *"};
  static const char* kPolicies[] = {"Allow", "Forbid", "Replace", "Allow"};
  cl::model::Json j = {
      {"apiVersion", "batch/v1"},
      {"kind", "CronJob"},
      {"metadata", {{"name", "cj-" + std::to_string(i)}, {"namespace", "bench"}}},
      {"spec",
       {{"schedule", kSchedules[i % 4]},
        {"concurrencyPolicy", kPolicies[(i / 4) % 4]},
        {"successfulJobsHistoryLimit", 2},
        {"jobTemplate", {{"spec", {{"template", {{"spec", {{"restartPolicy", "Never"}}}}}}}}}}}};
  return *cl::model::DecodeCronJob(j);
}

void Quiesce(cl::controller::SimCluster& sim, cl::controller::Controller& ctl, cl::Time now) {
  for (;;) {
    auto events = sim.TakeDueEvents(now, 4096);
    const bool had = !events.empty();
    if (had) CL_CHECK(ctl.Ingest(std::move(events)).ok());
    const size_t ran = *ctl.RunReady();
    if (ran == 0 && !had) return;
  }
}

void Record(cl::store::Ledger& ledger, int cronjobs, int minutes) {
  const cl::Time start = cl::Time::FromUnix(1704067200);
  cl::ManualClock clock(start);
  auto tzdb = cl::model::OpenSystemTimeZoneDb({});
  CL_CHECK(tzdb.ok());
  cl::controller::SimCluster sim({}, clock);
  auto ctl = cl::controller::Controller::Open({}, ledger, sim, clock, clock, **tzdb);
  CL_CHECK(ctl.ok());
  for (int i = 0; i < cronjobs; ++i) CL_CHECK(sim.ApplyCronJob(Manifest(i)).ok());
  const cl::Time stop = start.AddSeconds(60LL * minutes);
  for (;;) {
    Quiesce(sim, **ctl, clock.Now());
    std::optional<cl::Time> next = sim.NextEventTime();
    if (const auto due = (*ctl)->NextDueNanos()) {
      const cl::Time c = clock.Now().Add(cl::Duration(*due - clock.NowNanos()));
      next = next ? std::min(*next, c) : c;
    }
    if (!next || *next > stop) break;
    clock.AdvanceTo(std::max(*next, clock.Now().Add(std::chrono::milliseconds(1))));
  }
}

constexpr double kGoalRecordsPerSecond = 1e6;

// REPLAY_BENCH_ROUNDS=N runs each measurement N times (default 3; 1 for profiling).
int Rounds() {
  const char* r = std::getenv("REPLAY_BENCH_ROUNDS");
  const int n = r != nullptr ? std::atoi(r) : 3;
  return n > 0 ? n : 3;
}

double CpuSeconds(clockid_t clock = CLOCK_PROCESS_CPUTIME_ID) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// The best wall time of Rounds() runs; *cpu gets that run's CPU time (all threads): on a busy
// machine the wall time says little, the CPU time what the work costs.
// *main_cpu that of the calling (scanning) thread alone.
template <typename F>
double BestSeconds(F&& f, double* cpu = nullptr, double* main_cpu = nullptr) {
  double best = 1e100;
  for (int i = 0; i < Rounds(); ++i) {
    const double c0 = CpuSeconds();
    const double m0 = CpuSeconds(CLOCK_THREAD_CPUTIME_ID);
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (wall < best && cpu != nullptr) *cpu = CpuSeconds() - c0;
    if (wall < best && main_cpu != nullptr) {
      *main_cpu = CpuSeconds(CLOCK_THREAD_CPUTIME_ID) - m0;
    }
    best = std::min(best, wall);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const int cronjobs = argc > 1 ? std::atoi(argv[1]) : 400;
  const int minutes = argc > 2 ? std::atoi(argv[2]) : 180;
  const char* keep = std::getenv("REPLAY_BENCH_DIR");
  char tmpl[] = "/tmp/cronledger-replay-bench-XXXXXX";
  const std::string dir = keep != nullptr ? std::string(keep) : std::string(mkdtemp(tmpl));
  const std::string stamp =
      dir + "/recorded-" + std::to_string(cronjobs) + "x" + std::to_string(minutes);
  const bool reuse = keep != nullptr && std::filesystem::exists(stamp);
  if (keep != nullptr && !reuse) std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  cl::store::LedgerOptions lo;
  lo.path = dir + "/ledger";
  lo.sync = cl::store::SyncMode::kNone;
  auto ledger = cl::store::Ledger::Open(lo);
  CL_CHECK(ledger.ok());
  if (reuse) {
    std::printf("reusing the ledger recorded in %s\n", dir.c_str());
  } else {
    std::printf("recording: %d CronJobs over %d virtual minutes with the controller loop...\n",
                cronjobs, minutes);
    Record(**ledger, cronjobs, minutes);
    if (keep != nullptr) std::ofstream(stamp) << "recorded\n";
  }

  uint64_t inputs = 0, decisions = 0;
  const double scan = BestSeconds([&] {
    inputs = decisions = 0;
    CL_CHECK(
        (*ledger)->ScanInputs(1, true, [&](const cl::store::LogRecord&) { return ++inputs; }).ok());
    CL_CHECK(
        (*ledger)->ScanDecisions(1, [&](const cl::model::Decision&) { return ++decisions; }).ok());
  });
  const uint64_t records = inputs + decisions;
  // What replay --verify runs: the verify-only comparison, passes decided on a second thread.
  auto verify = [&](bool second_thread, cl::replay::ReplayResult* out) {
    cl::replay::LedgerSource src(**ledger);
    cl::replay::ReplayOptions o;
    o.verify_only = true;
    o.decide_on_second_thread = second_thread;
    auto r = cl::replay::Replay(src, o);
    CL_CHECK(r.ok());
    *out = std::move(*r);
  };
  cl::replay::ReplayResult result;
  double replay_cpu = 0, replay_main_cpu = 0, one_thread_main_cpu = 0, one_thread_cpu = 0;
  const double replay = BestSeconds([&] { verify(true, &result); }, &replay_cpu, &replay_main_cpu);
  // The same with the passes decided on the scanning thread (the digest must not change).
  // REPLAY_BENCH_PROFILE=1 skips it (profiling the default replay alone).
  const bool profile = std::getenv("REPLAY_BENCH_PROFILE") != nullptr;
  cl::replay::ReplayResult one_thread;
  one_thread.derived_digest = result.derived_digest;
  const double one_thread_wall = profile ? 0.0
                                         : BestSeconds([&] { verify(false, &one_thread); },
                                                       &one_thread_cpu, &one_thread_main_cpu);
  const std::string& one_thread_digest = one_thread.derived_digest.sha256;
  std::printf("records: %llu (%llu inputs, %llu decisions), %llu passes\n",
              static_cast<unsigned long long>(records), static_cast<unsigned long long>(inputs),
              static_cast<unsigned long long>(decisions),
              static_cast<unsigned long long>(result.passes_replayed));
  std::printf("verify: %s, digest %s\n", result.divergences == 0 ? "match" : "MISMATCH",
              result.derived_digest.sha256.c_str());
  std::printf("raw ledger scan:  %10.0f records/s  (%.3f s)\n", records / scan, scan);
  std::printf("replay --verify:  %10.0f records/s  (%.3f s, cpu %.3f s, scanning thread %.3f s)\n",
              records / replay, replay, replay_cpu, replay_main_cpu);
  std::printf(
      "  passes decided on the scanning thread: %10.0f records/s  (%.3f s, cpu %.3f s, scanning "
      "thread %.3f s), digest %s\n",
      records / one_thread_wall, one_thread_wall, one_thread_cpu, one_thread_main_cpu,
      one_thread_digest == result.derived_digest.sha256 ? "equal" : "DIFFERENT");
  std::printf("ratio replay/scan: %.3f\n", scan / replay);
  std::printf("goal: >= %.0f records/s: %s\n", kGoalRecordsPerSecond,
              records / replay >= kGoalRecordsPerSecond ? "met" : "NOT met");

  // The audit trail. A reused ledger may hold its chains already: then the checkpoint is an
  // incremental one over nothing new and its time says nothing.
  auto had_trail = cl::replay::trail::HasTrail(**ledger);
  CL_CHECK(had_trail.ok());
  const auto checkpoint_start = std::chrono::steady_clock::now();
  auto checkpoint = cl::replay::trail::UpdateTrail(**ledger, {}, cl::Time::FromUnix(1767225600));
  CL_CHECK(checkpoint.ok());
  const double checkpoint_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - checkpoint_start).count();
  uint64_t verified = 0;
  const double verify_trail = BestSeconds([&] {
    auto v = cl::replay::trail::VerifyStore(**ledger, *checkpoint);
    CL_CHECK(v.ok() && v->intact());
    verified = 0;
    for (const auto& c : v->chains) verified += c.verified;
  });
  uint64_t hashed = 0;
  uint8_t sink = 0;
  const double hash_scan = BestSeconds([&] {
    hashed = 0;
    CL_CHECK((*ledger)
                 ->ScanStoredInputs(1,
                                    [&](const cl::store::StoredInput& in) {
                                      sink ^= cl::model::Sha256::Hash(in.record)[0];
                                      if (in.has_raw) sink ^= cl::model::Sha256::Hash(in.raw)[0];
                                      return ++hashed > 0;
                                    })
                 .ok());
    CL_CHECK((*ledger)
                 ->ScanDecisionBytes(1,
                                     [&](uint64_t, std::string_view bytes) {
                                       sink ^= cl::model::Sha256::Hash(bytes)[0];
                                       return ++hashed > 0;
                                     })
                 .ok());
  });
  std::printf("\naudit trail (%llu records verified, %llu hashed by the peer; sink %u)\n",
              static_cast<unsigned long long>(verified), static_cast<unsigned long long>(hashed),
              static_cast<unsigned>(sink));
  if (*had_trail) {
    std::printf("checkpoint:       the reused ledger's chains were there already\n");
  } else {
    std::printf("first checkpoint: %10.0f records/s  (%.3f s: every leaf and head, stored)\n",
                records / checkpoint_s, checkpoint_s);
  }
  std::printf("verify-trail:     %10.0f records/s  (%.3f s)\n", verified / verify_trail,
              verify_trail);
  std::printf("peer: raw scan + SHA-256 of the same bytes: %10.0f records/s  (%.3f s)\n",
              hashed / hash_scan, hash_scan);
  std::printf("ratio verify-trail/peer: %.3f\n", hash_scan / verify_trail);
  ledger->reset();
  if (keep == nullptr) std::filesystem::remove_all(dir);
  return result.divergences == 0 && one_thread_digest == result.derived_digest.sha256 ? 0 : 1;
}
