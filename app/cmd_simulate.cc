// `cronledger simulate PATH... --duration DUR`: runs the full controller over a real ledger
// against the simulated cluster (docs/simulate.md) and prints what happened to every fire time.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "app/command.h"
#include "app/flags.h"
#include "app/manifests.h"
#include "app/support_ledger.h"
#include "app/support_simulate.h"
#include "app/system_clock.h"

namespace cronledger::app {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: cronledger simulate PATH... --duration DUR [flags]\n"
    "  Runs the controller against a simulated cluster over the CronJobs in manifest files or\n"
    "  directories (YAML or JSON) and prints, per CronJob, the fire times expected in the window,\n"
    "  the Jobs created, the skips by reason, the Job outcomes and the creation skew.\n"
    "flags:\n"
    "  --duration DUR        window length: Go duration (90m, 1h30m) or days (7d, 1d12h); "
    "required\n"
    "  --data-dir DIR        ledger directory (default ./data); must be empty or absent\n"
    "  --force               replace an existing ledger in --data-dir\n"
    "  --start RFC3339       virtual start (default: the newest manifest creationTimestamp, or\n"
    "                        now when no manifest has one)\n"
    "  --realtime            run on the system clock instead of virtual time\n"
    "  --workers N           controller workers in --realtime mode (default 2)\n"
    "  --seed N              seeds Job uids and lifecycles (default 1)\n"
    "  --failure-rate F      fraction of Jobs that fail, in [0,1] (default 0.02)\n"
    "  --start-delay MIN..MAX  Job start delay, uniform (default 1s..3s)\n"
    "  --run-median DUR      median Job run time, log-normal (default 20s)\n"
    "  --run-sigma S         log-normal sigma of the run time (default 0.5)\n"
    "  --run-max DUR         longest Job run time (default 1h)\n"
    "  --sync MODE           ledger fsync: always|batch|none (default batch)\n"
    "  --ledger-write-buffer-mib N  memtables of the ledger together (default 0: RocksDB's\n"
    "                        per-column-family defaults, up to ~1.1 GiB)\n"
    "  --ledger-block-cache-mib N   the ledger's block cache (default 64)\n"
    "  -o, --output FMT      table|json (default table)\n";

int Usage(const CommandIo& io, const std::string& error) {
  std::fprintf(io.err, "cronledger simulate: %s\n%s", error.c_str(), kUsage);
  return kExitUsage;
}

Result<double> ParseDouble(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v)) {
    return Status::InvalidArgument("--" + flag + " must be a number");
  }
  return v;
}

Result<Duration> DurationFlag(const std::string& flag, const std::string& text) {
  auto d = ParseGoDuration(text);
  if (!d.ok()) return Status::InvalidArgument("--" + flag + ": " + d.status().message());
  return *d;
}

Status ParseLifecycle(const Flags& flags, controller::SimClusterOptions* o) {
  CL_ASSIGN_OR_RETURN(o->seed,
                      flags.Uint("seed", 0, std::numeric_limits<uint64_t>::max(), o->seed));
  auto& l = o->lifecycle;
  if (auto v = flags.Get("failure-rate")) {
    CL_ASSIGN_OR_RETURN(l.failure_rate, ParseDouble("failure-rate", *v));
  }
  if (auto v = flags.Get("start-delay")) {
    const size_t dots = v->find("..");
    if (dots == std::string::npos) return Status::InvalidArgument("--start-delay must be MIN..MAX");
    CL_ASSIGN_OR_RETURN(l.start_delay_min, DurationFlag("start-delay", v->substr(0, dots)));
    CL_ASSIGN_OR_RETURN(l.start_delay_max, DurationFlag("start-delay", v->substr(dots + 2)));
  }
  if (auto v = flags.Get("run-median")) {
    CL_ASSIGN_OR_RETURN(l.run_median, DurationFlag("run-median", *v));
  }
  if (auto v = flags.Get("run-sigma")) {
    CL_ASSIGN_OR_RETURN(l.run_sigma, ParseDouble("run-sigma", *v));
  }
  if (auto v = flags.Get("run-max")) {
    CL_ASSIGN_OR_RETURN(l.run_max, DurationFlag("run-max", *v));
    l.run_min = std::min(l.run_min, l.run_max);
  }
  return controller::ValidateLifecycleOptions(l);
}

// A non-empty --data-dir is only reused with --force, and only when it holds a RocksDB database
// (so a mistyped path never deletes someone's files).
Status PrepareDataDir(const std::string& dir, bool force) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return Status::Ok();
  if (!fs::is_directory(dir, ec)) {
    return Status::InvalidArgument("--data-dir " + dir + " exists and is not a directory");
  }
  if (fs::is_empty(dir, ec)) return Status::Ok();
  if (!force) {
    return Status::InvalidArgument("--data-dir " + dir +
                                   " is not empty (a previous simulation?); pass --force to "
                                   "replace that ledger, or choose another --data-dir");
  }
  if (!fs::exists(fs::path(dir) / "CURRENT", ec) || !fs::exists(fs::path(dir) / "IDENTITY", ec)) {
    return Status::InvalidArgument("--data-dir " + dir +
                                   " does not look like a cronledger ledger; not deleting it");
  }
  fs::remove_all(dir, ec);
  if (ec) return Status::IoError("removing " + dir + ": " + ec.message());
  return Status::Ok();
}

// Progress on a terminal: one line on stderr, redrawn at most ten times a second.
ProgressFn TerminalProgress(std::FILE* err) {
  if (!isatty(fileno(err))) return nullptr;
  auto last = std::make_shared<std::chrono::steady_clock::time_point>();
  return [err, last](const SimulateProgress& p) {
    const auto now = std::chrono::steady_clock::now();
    if (now - *last < std::chrono::milliseconds(100)) return;
    *last = now;
    const double total = std::chrono::duration<double>(p.end.Sub(p.start)).count();
    const double done = std::chrono::duration<double>(p.now.Sub(p.start)).count();
    const double pct = total > 0 ? std::clamp(100.0 * done / total, 0.0, 100.0) : 100.0;
    std::fprintf(err, "\r\033[K[simulate] %s  %5.1f%%  passes %llu  decisions %llu  events %llu",
                 FormatRfc3339(p.now).c_str(), pct, static_cast<unsigned long long>(p.stats.passes),
                 static_cast<unsigned long long>(p.stats.decisions),
                 static_cast<unsigned long long>(p.watch_events));
    std::fflush(err);
  };
}

int RunSimulate(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("duration").Value("data-dir").Switch("force").Value("start").Switch("realtime");
  flags.Value("workers").Value("seed").Value("failure-rate").Value("start-delay");
  flags.Value("run-median").Value("run-sigma").Value("run-max").Value("sync");
  flags.Value("output", "o");
  DeclareLedgerMemoryFlags(flags);
  if (Status st = flags.Parse(args); !st.ok()) return Usage(io, st.message());
  if (flags.positionals().empty()) return Usage(io, "no manifest PATH given");
  if (!flags.Get("duration")) return Usage(io, "--duration is required");
  SimulateConfig config;
  auto duration = ParseSimDuration(*flags.Get("duration"));
  if (!duration.ok()) return Usage(io, "--duration: " + duration.status().message());
  config.duration = *duration;
  config.realtime = flags.Has("realtime");
  if (config.realtime && flags.Get("start")) {
    return Usage(io, "--start applies to virtual time only (--realtime starts now)");
  }
  auto workers = flags.Uint("workers", 1, 256, static_cast<uint64_t>(config.workers));
  if (!workers.ok()) return Usage(io, workers.status().message());
  config.workers = static_cast<int>(*workers);
  if (Status st = ParseLifecycle(flags, &config.cluster); !st.ok()) return Usage(io, st.message());
  auto sync = store::ParseSyncMode(flags.GetOr("sync", "batch"));
  if (!sync.ok()) return Usage(io, "--sync: " + sync.status().message());
  store::LedgerOptions ledger_options;
  if (Status st = ApplyLedgerMemoryFlags(flags, ledger_options); !st.ok()) {
    return Usage(io, st.message());
  }
  const std::string output = flags.GetOr("output", "table");
  if (output != "table" && output != "json") {
    return Usage(io, "-o must be table or json, not \"" + output + "\"");
  }

  auto loaded = LoadManifests(flags.positionals());
  if (!loaded.ok()) return Usage(io, loaded.status().message());
  for (const auto& s : loaded->skipped) std::fprintf(io.err, "skipped %s\n", s.c_str());
  if (loaded->cron_jobs.empty()) return Usage(io, "no CronJobs in the given manifests");
  for (const auto& m : loaded->cron_jobs) config.cron_jobs.push_back(m.cron_job);
  if (auto s = flags.Get("start")) {
    auto t = ParseRfc3339(*s);
    if (!t.ok()) return Usage(io, "--start: " + t.status().message());
    config.start = *t;
  } else {
    config.start = DefaultStart(*loaded, RealClock().Now());
  }

  const std::string data_dir = flags.GetOr("data-dir", "./data");
  if (Status st = PrepareDataDir(data_dir, flags.Has("force")); !st.ok()) {
    return Usage(io, st.message());
  }
  auto tzdb = model::OpenSystemTimeZoneDb({});
  if (!tzdb.ok()) {
    std::fprintf(io.err, "cronledger simulate: %s\n", tzdb.status().message().c_str());
    return kExitFailure;
  }
  ledger_options.path = data_dir;
  ledger_options.sync = *sync;
  auto ledger = store::Ledger::Open(ledger_options);
  if (!ledger.ok()) {
    std::fprintf(io.err, "cronledger simulate: %s\n", ledger.status().ToString().c_str());
    return kExitFailure;
  }
  const ProgressFn progress = TerminalProgress(io.err);
  auto outcome = RunSimulation(config, **ledger, **tzdb, progress);
  if (progress) std::fprintf(io.err, "\r\033[K");
  if (!outcome.ok()) {
    std::fprintf(io.err, "cronledger simulate: %s\n", outcome.status().ToString().c_str());
    return kExitFailure;
  }
  auto summary = BuildSimulationSummary(*outcome, **ledger, **tzdb, config.cluster.seed);
  if (!summary.ok()) {
    std::fprintf(io.err, "cronledger simulate: summary: %s\n", summary.status().ToString().c_str());
    return kExitFailure;
  }
  if (output == "json") {
    std::fprintf(io.out, "%s\n", model::DumpJson(*summary).c_str());
  } else {
    PrintSimulationTable(io.out, *summary);
    std::fprintf(io.out, "Ran in %.2f s of wall time; the ledger is in %s.\n",
                 outcome->wall_seconds, data_dir.c_str());
  }
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("simulate", "run the controller against a simulated cluster", RunSimulate,
                    kUsage);

}  // namespace cronledger::app
