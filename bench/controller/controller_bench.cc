// Controller scale benchmark (docs/benchmarks.md): N CronJobs in real time against the
// simulated cluster with zero-latency actuation. The full controller runs (ledger commits, outbox
// passes, workers), the cluster answers at once and runs every Job's lifecycle (start 1-3 s, run
// ~20 s), so every created Job also brings its ADDED/MODIFIED/DELETED events back through ingest.
//
// Measured: creation skew (scheduled time -> createJob decision committed, MeasuringLedger) for the
// fire times in a window that starts at the first whole minute after every CronJob had its first
// pass; decisions committed per second; RSS per CronJob (VmRSS minus the RSS before the CronJobs
// were created). Prints `key value` lines for run.sh.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/controller/measuring_ledger.h"
#include "bench/controller/raw_create_peer.h"
#include "bench/controller/sim_cpu.h"
#include "bench/cpu_time.h"
#include "controller/controller.h"
#include "controller/controller_impl.h"
#include "controller/sim_cluster.h"
#include "controller/sim_pump.h"
#include "model/objects.h"
#include "reconciler/decide.h"
#include "reconciler/schedule.h"
#include "reconciler/schedule_memo.h"

namespace cronledger::bench {
namespace {

using std::chrono::seconds;

class SystemClocks final : public WallClock, public MonotonicClock {
 public:
  Time Now() const override {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    return Time::FromUnix(ns / 1'000'000'000, static_cast<int32_t>(ns % 1'000'000'000));
  }
  int64_t NowNanos() const override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
};

struct Options {
  uint64_t cronjobs = 10'000;
  std::string mix = "every-minute";  // or "mixed"
  Duration measure = std::chrono::minutes(3);
  Duration max_load = std::chrono::minutes(10);
  int workers = 2;
  std::string data_dir;
  std::string sync = "none";
  // store::LedgerOptions memory settings; unset = the ledger's defaults.
  std::optional<size_t> write_buffer_budget_mib;
  std::optional<size_t> block_cache_mib;
  bool floor = true;
  size_t peer_batch = 4096;  // creates per raw-peer WriteBatch (one fsync each)
};

[[noreturn]] void Die(const std::string& msg) {
  std::fprintf(stderr, "controller_bench: %s\n", msg.c_str());
  std::exit(1);
}

template <typename T>
T Check(Result<T> r, const char* what) {
  if (!r.ok()) Die(std::string(what) + ": " + r.status().ToString());
  return std::move(r).value();
}

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) Die("missing value for " + a);
      return argv[++i];
    };
    if (a == "--cronjobs") {
      o.cronjobs = std::strtoull(next().c_str(), nullptr, 10);
    } else if (a == "--mix") {
      o.mix = next();
    } else if (a == "--measure") {
      o.measure = Check(ParseGoDuration(next()), "--measure");
    } else if (a == "--max-load") {
      o.max_load = Check(ParseGoDuration(next()), "--max-load");
    } else if (a == "--workers") {
      o.workers = std::atoi(next().c_str());
    } else if (a == "--data-dir") {
      o.data_dir = next();
    } else if (a == "--sync") {
      o.sync = next();
    } else if (a == "--ledger-write-buffer-mib") {
      o.write_buffer_budget_mib = std::strtoull(next().c_str(), nullptr, 10);
    } else if (a == "--ledger-block-cache-mib") {
      o.block_cache_mib = std::strtoull(next().c_str(), nullptr, 10);
    } else if (a == "--no-floor") {
      o.floor = false;
    } else if (a == "--peer-batch") {
      o.peer_batch = std::strtoull(next().c_str(), nullptr, 10);
    } else {
      Die("unknown flag " + a);
    }
  }
  if (o.data_dir.empty()) Die("--data-dir is required");
  if (o.mix != "every-minute" && o.mix != "mixed") Die("--mix must be every-minute or mixed");
  return o;
}

// VmRSS / VmHWM of this process in bytes.
uint64_t ProcStatus(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const size_t len = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, len, field) == 0 && line.size() > len && line[len] == ':') {
      return std::strtoull(line.c_str() + len + 1, nullptr, 10) * 1024;
    }
  }
  return 0;
}

// The 1-minute load average of the machine (other processes compete for the same cores).
double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double one = -1;
  in >> one;
  return one;
}

// A field of /proc/self/io (e.g. "wchar": bytes this process handed to write(2), the ledger's WAL,
// flushes and compactions included).
uint64_t ProcIo(const char* field) {
  std::ifstream in("/proc/self/io");
  std::string line;
  const size_t len = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, len, field) == 0 && line.size() > len && line[len] == ':') {
      return std::strtoull(line.c_str() + len + 1, nullptr, 10);
    }
  }
  return 0;
}

struct ScheduleChoice {
  const char* schedule;
  const char* time_zone;  // nullptr = none
  int weight;             // percent
};
// The mixed variant: mostly frequent schedules, some daily ones in zones.
constexpr ScheduleChoice kMixed[] = {{"* * * * *", nullptr, 35},
                                     {"*/2 * * * *", nullptr, 10},
                                     {"*/5 * * * *", nullptr, 20},
                                     {"*/15 * * * *", nullptr, 15},
                                     {"0 * * * *", nullptr, 10},
                                     {"30 2 * * *", "Europe/Berlin", 5},
                                     {"15 9-17 * * MON-FRI", "Asia/Kolkata", 5}};

const ScheduleChoice& Choose(const Options& o, uint64_t i) {
  static const ScheduleChoice kEveryMinute{"*/1 * * * *", nullptr, 100};
  if (o.mix == "every-minute") return kEveryMinute;
  int pick = static_cast<int>(controller::SimHash(2026, "mix", std::to_string(i)) % 100);
  for (const auto& c : kMixed) {
    if (pick < c.weight) return c;
    pick -= c.weight;
  }
  return kMixed[0];
}

model::CronJob Template() {
  const char* kJson = R"({"apiVersion": "cronledger.io/v1", "kind": "CronJob",
    "metadata": {"name": "t", "namespace": "bench"},
    "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": {"spec": {
      "restartPolicy": "Never",
      "containers": [{"name": "main", "image": "busybox:1.36", "command": ["true"]}]}}}}}})";
  return Check(model::DecodeCronJob(Check(model::ParseJson(kJson), "template")), "template");
}

// Fire times of every CronJob in [from, until).
uint64_t ExpectedSlots(const Options& o, const model::TimeZoneDb& tzdb, Time from, Time until) {
  std::map<std::pair<std::string, std::string>, uint64_t> by_schedule;
  for (uint64_t i = 0; i < o.cronjobs; ++i) {
    const auto& c = Choose(o, i);
    ++by_schedule[{c.schedule, c.time_zone ? c.time_zone : ""}];
  }
  uint64_t total = 0;
  for (const auto& [key, count] : by_schedule) {
    std::optional<std::string> tz;
    if (!key.second.empty()) tz = key.second;
    auto s = Check(reconciler::ParseStandard(reconciler::FormatSchedule(key.first, tz).text, tzdb),
                   "schedule");
    uint64_t n = 0;
    for (auto t = s->Next(from.Add(Duration(-1))); t && *t < until; t = s->Next(*t)) ++n;
    total += n * count;
  }
  return total;
}

Time NextMinute(Time t) { return Time::FromUnix((t.unix_seconds() / 60 + 1) * 60); }

// Flushed at once: a run that is stopped (or whose shutdown drains a long backlog) still shows
// what it measured.
void Print(const char* key, double v) {
  std::printf("%s %.6g\n", key, v);
  std::fflush(stdout);
}

// The upstream figures this benchmark is compared with (other machines, not measured here).
void PrintReference() {
  std::printf(
      "reference_upstream_v2 \"Kubernetes CronJob v2 controller: no delay at 6,120 CronJobs on 64 "
      "vCPU\"\n"
      "reference_upstream_v1 \"Kubernetes CronJob v1 controller (10 s poll of every CronJob): last "
      "schedule 5m53s late at 1,000 CronJobs\"\n"
      "goal \"1,000,000 every-minute CronJobs, p99 skew <= 2 s, RSS <= 1 KiB per CronJob, 2 "
      "cores\"\n");
}

// The CPU floor: reconciler::Decide alone over create passes of the bench's CronJobs, as the
// ledger holds them after the window (the CronJob, its Jobs, its accounting state), at the next
// fire time. A create pass calls Decide once per API call plus once (create, updateStatus, end);
// the outcomes fed back are OK with the requested object, which is what the simulated cluster
// returns for them in substance, in the form the controller records and decides on
// (reconciler::RecordedOutcome); parsed schedules are memoized and only the pending call's body
// is built, as in the controller. Returns {ns per create pass, Decide calls per pass}.
std::pair<double, double> DecideFloor(const Options& o, store::Ledger& ledger,
                                      const model::TimeZoneDb& tzdb, Time now) {
  std::vector<reconciler::SyncInput> inputs;
  const uint64_t n = std::min<uint64_t>(o.cronjobs, 20'000);
  for (uint64_t i = 0; i < n; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "cj-%07llu", static_cast<unsigned long long>(i));
    const std::string ns = "bench-" + std::to_string(i % 64);
    auto view = ledger.ReadCronJobView(ns, name);
    if (!view.ok()) continue;
    reconciler::SyncInput in;
    in.cron_job = std::move(view->cron_job);
    in.jobs = std::move(view->jobs);
    in.now = now;
    in.tzdb = &tzdb;
    if (auto blob = ledger.GetControllerState(ns + "/" + name); blob.ok()) {
      if (auto st = controller::DecodeControllerState(*blob); st.ok()) {
        in.accounting = std::move(st->second);
      }
    }
    inputs.push_back(std::move(in));
  }
  if (inputs.empty()) return {-1, 0};
  // Borrowed (SyncInputRef): the loop times Decide, not copies of its input.
  std::vector<std::vector<const model::Job*>> jobs(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    for (const model::Job& j : inputs[i].jobs) jobs[i].push_back(&j);
  }
  uint64_t passes = 0, calls = 0;
  std::vector<model::ApiOutcome> outcomes;
  reconciler::ScheduleMemo memo;  // as the controller's passes decide
  const double cpu0 = ProcessCpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  do {
    for (size_t i = 0; i < inputs.size(); ++i) {
      reconciler::SyncInputRef ref;
      ref.cron_job = &inputs[i].cron_job;
      ref.jobs = jobs[i];
      ref.now = inputs[i].now;
      ref.tzdb = &tzdb;
      ref.accounting = &inputs[i].accounting;
      ref.options.schedule_memo = &memo;
      ref.options.call_objects = reconciler::DecideOptions::CallObjects::kPending;
      outcomes.clear();
      for (;;) {
        ref.outcomes = outcomes;
        reconciler::Step step = reconciler::Decide(ref);
        ++calls;
        if (!step.next_call) break;
        model::Json object = std::move(step.next_call->object);
        outcomes.push_back(
            reconciler::RecordedOutcome(*step.next_call, model::ApiOutcome::Ok(std::move(object))));
      }
      ++passes;
    }
  } while (std::chrono::steady_clock::now() - t0 < seconds(2));
  const double cpu = ProcessCpuSeconds() - cpu0;
  return {cpu * 1e9 / static_cast<double>(passes),
          static_cast<double>(calls) / static_cast<double>(passes)};
}

int Run(const Options& o) {
  static const SystemClocks clocks;
  auto tzdb = Check(model::OpenSystemTimeZoneDb({}), "tzdb");
  store::LedgerOptions lo;
  lo.path = o.data_dir;
  lo.sync = Check(store::ParseSyncMode(o.sync), "--sync");
  if (o.write_buffer_budget_mib) lo.write_buffer_budget_bytes = *o.write_buffer_budget_mib << 20;
  if (o.block_cache_mib) lo.block_cache_bytes = *o.block_cache_mib << 20;
  std::printf("ledger_write_buffer_budget_bytes %zu\nledger_block_cache_bytes %zu\n",
              lo.write_buffer_budget_bytes, lo.block_cache_bytes);
  auto ledger_holder =
      std::make_unique<MeasuringLedger>(Check(store::Ledger::Open(lo), "ledger"), clocks);
  MeasuringLedger& ledger = *ledger_holder;
  controller::SimClusterOptions so;
  so.event_log_capacity = 0;
  controller::SimCluster sim(so, clocks);
  SimCpu sim_cpu;
  SimCpu::TimedActuator actuator(sim, sim_cpu);
  controller::ControllerOptions co;
  co.workers = o.workers;
  // Which CronJobs a pass has looked at ("bench-K/cj-NNNNNNN", NNNNNNN = its index): loading
  // ends when every one has had its first pass.
  std::vector<std::atomic<bool>> passed(o.cronjobs);
  std::atomic<uint64_t> cronjobs_passed{0};
  co.before_pass = [&passed, &cronjobs_passed](const std::string& key) {
    const size_t dash = key.rfind('-');
    if (dash == std::string::npos) return;
    const uint64_t i = std::strtoull(key.c_str() + dash + 1, nullptr, 10);
    if (i < passed.size() && !passed[i].exchange(true)) cronjobs_passed.fetch_add(1);
  };
  auto ctrl =
      Check(controller::Controller::Open(co, ledger, actuator, clocks, clocks, *tzdb), "open");
  controller::SimEventPump pump(sim, clocks,
                                [&ctrl, &sim_cpu](std::vector<model::WatchEvent> events) {
                                  sim_cpu.IngestStarted();
                                  Status st = ctrl->Ingest(std::move(events));
                                  sim_cpu.IngestFinished();
                                  return st;
                                });
  const uint64_t rss_base = ProcStatus("VmRSS");

  const auto t0 = std::chrono::steady_clock::now();
  auto since = [&t0] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const model::CronJob tmpl = Template();
  for (uint64_t i = 0; i < o.cronjobs; ++i) {
    model::CronJob cj = tmpl;
    char name[32];
    std::snprintf(name, sizeof name, "cj-%07llu", static_cast<unsigned long long>(i));
    cj.metadata.name = name;
    cj.metadata.namespace_ = "bench-" + std::to_string(i % 64);
    const auto& c = Choose(o, i);
    cj.spec.schedule = c.schedule;
    if (c.time_zone) cj.spec.time_zone = c.time_zone;
    if (Status st = sim.ApplyCronJob(cj); !st.ok()) Die(st.ToString());
  }
  Print("apply_seconds", since());
  // What the simulated cluster itself holds (the CronJob objects): a real cluster's memory, not
  // the controller's.
  Print("apply_rss_per_cronjob_bytes",
        static_cast<double>(ProcStatus("VmRSS") - rss_base) / static_cast<double>(o.cronjobs));
  pump.Start();
  ctrl->Start();

  // Load: every CronJob ingested and through its first pass.
  double ingested_at = -1;
  const double max_load = std::chrono::duration<double>(o.max_load).count();
  while (cronjobs_passed.load() < o.cronjobs && since() < max_load) {
    if (ingested_at < 0 && pump.Stats().events >= o.cronjobs) ingested_at = since();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (ingested_at < 0 && pump.Stats().events >= o.cronjobs) ingested_at = since();
  Print("load_ingested_seconds", ingested_at);
  const bool loaded = cronjobs_passed.load() >= o.cronjobs;
  Print("load_first_passes_seconds", loaded ? since() : -1);
  Print("load_passes", static_cast<double>(ctrl->Stats().passes));
  Print("load_rss_per_cronjob_bytes",
        static_cast<double>(ProcStatus("VmRSS") - rss_base) / static_cast<double>(o.cronjobs));
  Print("load_sim_heap_per_cronjob_bytes",
        static_cast<double>(sim.ApproxHeapBytes()) / static_cast<double>(o.cronjobs));
  Print("load_loadavg", LoadAverage());
  if (!loaded) {
    std::printf("result load_incomplete\n");
    PrintReference();
    std::fflush(stdout);
    // Stopping drains the pump: every watch event already due is still ingested (SimEventPump::
    // Stop), which takes minutes for a large backlog.
    Print("rss_per_cronjob_bytes",
          static_cast<double>(ProcStatus("VmRSS") - rss_base) / static_cast<double>(o.cronjobs));
    ctrl->Stop();
    pump.Stop();
    return 0;
  }

  const Time from = NextMinute(clocks.Now());
  const Time until = from.Add(o.measure);
  const Time stop = until.Add(seconds(30));
  ledger.SetWindow(from, until);
  while (clocks.Now() < from) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const uint64_t decisions0 = ledger.decisions();
  const WriteCounts writes0 = ledger.counts();
  const store::CommitStats commits0 = ledger.Stats();
  const uint64_t wchar0 = ProcIo("wchar");
  const uint64_t passes0 = ctrl->Stats().passes;
  const double load0 = LoadAverage();
  const double cpu0 = ProcessCpuSeconds();
  const double sim_cpu0 = sim_cpu.Seconds();
  const auto w0 = std::chrono::steady_clock::now();
  while (clocks.Now() < stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const double window_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count();
  const uint64_t decisions = ledger.decisions() - decisions0;
  const WriteCounts writes1 = ledger.counts();
  const store::CommitStats commits1 = ledger.Stats();
  const uint64_t wchar = ProcIo("wchar") - wchar0;
  const double cpu = ProcessCpuSeconds() - cpu0;
  const double cpu_sim = sim_cpu.Seconds() - sim_cpu0;
  const double load1 = LoadAverage();
  const uint64_t rss = ProcStatus("VmRSS");
  const uint64_t hwm = ProcStatus("VmHWM");
  const auto stats = ctrl->Stats();
  ctrl->Stop();
  pump.Stop();

  const uint64_t expected = ExpectedSlots(o, **&tzdb, from, until);
  const uint64_t created = ledger.creates_in_window();
  const uint64_t missing = expected > created ? expected - created : 0;
  std::printf("result ok\n");
  Print("window_seconds", std::chrono::duration<double>(o.measure).count());
  Print("expected_creates", static_cast<double>(expected));
  Print("created", static_cast<double>(created));
  Print("missing", static_cast<double>(missing));
  for (const auto& [key, p] : {std::pair{"skew_p50", 50.0}, {"skew_p99", 99.0}}) {
    const auto v = ledger.skew().Percentile(p, missing);
    Print(key, v ? *v : -1);  // -1: beyond the run (the rank falls among missing creates)
  }
  Print("skew_max", ledger.skew().MaxSeconds());
  Print("decisions_per_second", static_cast<double>(decisions) / window_s);
  // What the ledger had to write in the window, per second and per Job created, and what that
  // means for 1,000,000 every-minute CronJobs (16,667 creates/s) at the same cost per create.
  // Per create: every createJob decision committed in the window (whatever its fire time) against
  // everything committed in the window.
  const uint64_t all_creates = writes1.creates - writes0.creates;
  const double creates_per_s = static_cast<double>(all_creates) / window_s;
  const double records = static_cast<double>(writes1.records() - writes0.records());
  const double watch = static_cast<double>(writes1.inputs[0] - writes0.inputs[0]);
  const double units = static_cast<double>(writes1.units - writes0.units);
  const double bytes =
      static_cast<double>(writes1.record_bytes_estimate - writes0.record_bytes_estimate);
  const double per_create = all_creates > 0 ? 1.0 / static_cast<double>(all_creates) : 0.0;
  Print("creates_per_second", creates_per_s);
  Print("records_per_second", records / window_s);
  Print("watch_events_per_second", watch / window_s);
  Print("commits_per_second", units / window_s);
  Print("commit_groups_per_second",
        static_cast<double>(commits1.groups - commits0.groups) / window_s);
  Print("fsyncs_per_second", static_cast<double>(commits1.syncs - commits0.syncs) / window_s);
  Print("record_bytes_per_second", bytes / window_s);
  Print("write_bytes_per_second", static_cast<double>(wchar) / window_s);
  Print("records_per_create", records * per_create);
  Print("watch_events_per_create", watch * per_create);
  Print("commits_per_create", units * per_create);
  Print("passes_per_create", static_cast<double>(stats.passes - passes0) * per_create);
  Print("record_bytes_per_create", bytes * per_create);
  Print("write_bytes_per_create", static_cast<double>(wchar) * per_create);
  Print("cpu_seconds_per_create", cpu * per_create);
  // The same split: the simulated cluster (the API server's stand-in, sim_cpu.h) and the rest.
  Print("sim_cpu_seconds_per_create", cpu_sim * per_create);
  Print("controller_cpu_seconds_per_create", (cpu - cpu_sim) * per_create);
  constexpr double kCreatesAt1M = 1'000'000.0 / 60.0;
  Print("at_1m_records_per_second", records * per_create * kCreatesAt1M);
  Print("at_1m_record_bytes_per_second", bytes * per_create * kCreatesAt1M);
  Print("at_1m_cpu_cores", cpu * per_create * kCreatesAt1M);
  Print("cpu_cores", cpu / window_s);
  Print("loadavg_start", load0);
  Print("loadavg_end", load1);
  Print("rss_per_cronjob_bytes",
        static_cast<double>(rss - rss_base) / static_cast<double>(o.cronjobs));
  // The simulated API server lives in this process: its estimated heap per CronJob, and the rest
  // of the RSS growth (the controller, the ledger's RocksDB memtables and block cache, allocator
  // slack) per CronJob.
  const double sim_bytes = static_cast<double>(sim.ApproxHeapBytes());
  Print("sim_heap_per_cronjob_bytes", sim_bytes / static_cast<double>(o.cronjobs));
  Print("rss_minus_sim_per_cronjob_bytes",
        (static_cast<double>(rss - rss_base) - sim_bytes) / static_cast<double>(o.cronjobs));
  Print("hwm_per_cronjob_bytes",
        static_cast<double>(hwm - rss_base) / static_cast<double>(o.cronjobs));
  Print("passes", static_cast<double>(stats.passes));
  Print("errors", static_cast<double>(stats.errors));
  Print("sim_jobs_live", static_cast<double>(sim.JobCount()));

  // How long each minute's burst took to commit (its slowest create), and the create rate that
  // makes: ours, next to the floor peers below.
  double burst_total = 0;
  for (const double b : ledger.burst_seconds()) burst_total += b;
  const double ours_rate = burst_total > 0 ? static_cast<double>(created) / burst_total : 0;
  Print("ours_burst_seconds_total", burst_total);
  Print("ours_burst_creates_per_second", ours_rate);
  Print("ours_1m_creates_seconds_extrapolated", ours_rate > 0 ? 1e6 / ours_rate : -1);
  if (o.floor) {
    const auto [decide_ns, decide_calls] =
        DecideFloor(o, ledger, **&tzdb, NextMinute(clocks.Now()));
    Print("floor_decide_ns_per_create_pass", decide_ns);
    Print("floor_decide_calls_per_create_pass", decide_calls);
    Print("floor_decide_1m_create_passes_core_seconds_extrapolated", decide_ns * 1e6 / 1e9);
    Print("ours_cpu_over_decide_floor", cpu * per_create * 1e9 / decide_ns);
    const std::vector<uint64_t> input_seqs = ledger.create_input_seqs();
    const std::vector<uint64_t> decision_seqs = ledger.create_decision_seqs();
    ctrl.reset();
    ledger_holder.reset();  // closes the ledger: the peer reads its files
    auto captured = ReadCreateRecords(o.data_dir, input_seqs, decision_seqs);
    if (!captured.ok()) Die("raw peer capture: " + captured.status().ToString());
    Print("raw_peer_captured_creates", static_cast<double>(captured->creates));
    Print("raw_peer_records_per_create",
          static_cast<double>(captured->records.size()) / static_cast<double>(captured->creates));
    Print("raw_peer_bytes_per_create",
          static_cast<double>(captured->bytes) / static_cast<double>(captured->creates));
    RawPeerOptions po;
    po.dir = o.data_dir + "-rawpeer";
    po.ledger = lo;
    po.creates_per_batch = o.peer_batch;
    std::filesystem::remove_all(po.dir);
    const double load_peer = LoadAverage();
    auto peer = RunRawPeer(po, *captured);
    std::filesystem::remove_all(po.dir);
    if (!peer.ok()) Die("raw peer: " + peer.status().ToString());
    const double peer_rate = static_cast<double>(peer->creates) / peer->seconds;
    Print("raw_peer_loadavg", load_peer);
    Print("raw_peer_creates", static_cast<double>(peer->creates));
    Print("raw_peer_batches", static_cast<double>(peer->batches));
    Print("raw_peer_seconds", peer->seconds);
    Print("raw_peer_creates_per_second", peer_rate);
    Print("raw_peer_cpu_seconds_per_create",
          peer->cpu_seconds / static_cast<double>(peer->creates));
    // Measured for raw_peer_creates creates; 1M is that rate carried over (extrapolated) unless
    // the peer wrote 1M itself.
    Print(peer->creates >= 1'000'000 ? "raw_peer_1m_creates_seconds"
                                     : "raw_peer_1m_creates_seconds_extrapolated",
          1e6 / peer_rate);
    Print("raw_peer_over_ours_creates_per_second", ours_rate > 0 ? peer_rate / ours_rate : -1);
  }
  PrintReference();
  return 0;
}

}  // namespace
}  // namespace cronledger::bench

int main(int argc, char** argv) {
  return cronledger::bench::Run(cronledger::bench::ParseArgs(argc, argv));
}
