// bench/schedule: next-fire-time and parse throughput of the cronledger schedule engine on the
// workload in workload.txt. The robfig/cron v3.0.1 peer (peer/main.go) runs the same workload with
// the same loop structure, sampling and output format; run.sh compares checksums and rates.
//
//   schedule_bench --workload FILE [--min-time SECONDS] [--samples N] [--dump]

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "bench/schedule/workload.h"
#include "model/timezone.h"
#include "reconciler/schedule.h"

namespace cronledger::bench {
namespace {

using reconciler::Schedule;

struct Options {
  std::string workload = "workload.txt";
  double min_time_seconds = 0.5;
  int samples = 5;
  bool dump = false;
  bool per_schedule = false;  // also measure each schedule's chains on their own
};

// What one round produces: Next calls, non-empty results and the sum of their unix seconds (the
// checksum both sides must agree on).
struct Tally {
  int64_t calls = 0;
  int64_t results = 0;
  int64_t sum = 0;
  friend bool operator==(const Tally&, const Tally&) = default;
};

using Schedules = std::span<const std::unique_ptr<Schedule>>;

Tally NextRound(const Workload& w, Schedules schedules, bool dump) {
  Tally r;
  for (size_t i = 0; i < schedules.size(); ++i) {
    for (size_t j = 0; j < w.starts.size(); ++j) {
      Time t = w.starts[j];
      for (int k = 0; k < w.chain; ++k) {
        ++r.calls;
        std::optional<Time> next = schedules[i]->Next(t);
        if (!next) break;
        ++r.results;
        r.sum += next->unix_seconds();
        if (dump) {
          std::printf("dump %zu %zu %d %lld\n", i, j, k,
                      static_cast<long long>(next->unix_seconds()));
        }
        t = *next;
      }
    }
  }
  return r;
}

int64_t ParseRound(const std::vector<std::string>& specs, const model::TimeZoneDb& tzdb) {
  int64_t ok = 0;
  for (const std::string& spec : specs) {
    if (reconciler::ParseStandard(spec, tzdb).ok()) ++ok;
  }
  return ok;
}

struct Rates {
  double median = 0;
  double best = 0;
};

// Runs `round` (which does `ops` operations) repeatedly for at least min_time per sample; rates
// are operations per second over the samples.
Rates Measure(const Options& opt, int64_t ops, const std::function<void()>& round) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> rates;
  for (int s = 0; s < opt.samples; ++s) {
    int64_t rounds = 0;
    const Clock::time_point begin = Clock::now();
    double elapsed = 0;
    while (elapsed < opt.min_time_seconds) {
      round();
      ++rounds;
      elapsed = std::chrono::duration<double>(Clock::now() - begin).count();
    }
    rates.push_back(static_cast<double>(rounds * ops) / elapsed);
  }
  std::sort(rates.begin(), rates.end());
  return {rates[rates.size() / 2], rates.back()};
}

// One line per schedule: "sched_rate <index> <median Next calls/s>" over that schedule's chains.
void MeasurePerSchedule(const Options& opt, const Workload& w, Schedules schedules, int64_t* sink) {
  for (size_t i = 0; i < schedules.size(); ++i) {
    const Schedules one = schedules.subspan(i, 1);
    const Tally check = NextRound(w, one, false);
    Rates r = Measure(opt, check.calls, [&] { *sink += NextRound(w, one, false).sum; });
    std::printf("sched_rate %zu %.0f\n", i, r.median);
  }
}

void PrintRates(const char* name, const Rates& r) {
  std::printf("%s %.0f\n%s_best %.0f\n", name, r.median, name, r.best);
}

bool HasZone(std::string_view spec) {
  return spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=");
}

Options ParseFlags(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    bool has_value = i + 1 < argc;
    if (arg == "--workload" && has_value) {
      opt.workload = argv[++i];
    } else if (arg == "--min-time" && has_value) {
      opt.min_time_seconds = std::atof(argv[++i]);
    } else if (arg == "--samples" && has_value) {
      opt.samples = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--dump") {
      opt.dump = true;
    } else if (arg == "--per-schedule") {
      opt.per_schedule = true;
    } else {
      std::fprintf(stderr,
                   "usage: schedule_bench --workload FILE [--min-time S] [--samples N] [--dump] "
                   "[--per-schedule]\n");
      std::exit(2);
    }
  }
  return opt;
}

int Run(const Options& opt) {
  Result<Workload> w = LoadWorkload(opt.workload);
  if (!w.ok()) {
    std::fprintf(stderr, "schedule_bench: %s\n", w.status().ToString().c_str());
    return 1;
  }
  Result<std::unique_ptr<model::TimeZoneDb>> tzdb = model::OpenSystemTimeZoneDb({});
  if (!tzdb.ok()) {
    std::fprintf(stderr, "schedule_bench: %s\n", tzdb.status().ToString().c_str());
    return 1;
  }
  std::vector<std::unique_ptr<Schedule>> schedules;
  std::vector<std::string> plain, zoned;
  for (const std::string& spec : w->schedules) {
    Result<std::unique_ptr<Schedule>> s = reconciler::ParseStandard(spec, **tzdb);
    if (!s.ok()) {
      std::fprintf(stderr, "schedule_bench: \"%s\": %s\n", spec.c_str(),
                   s.status().ToString().c_str());
      return 1;
    }
    schedules.push_back(std::move(*s));
    (HasZone(spec) ? zoned : plain).push_back(spec);
  }
  const Tally check = NextRound(*w, schedules, opt.dump);
  if (opt.dump) return 0;
  std::printf("impl cronledger\nnext_calls %lld\nnext_results %lld\nnext_checksum %lld\n",
              static_cast<long long>(check.calls), static_cast<long long>(check.results),
              static_cast<long long>(check.sum));
  std::printf("parse_ok %lld\n",
              static_cast<long long>(ParseRound(plain, **tzdb) + ParseRound(zoned, **tzdb)));

  // Results feed `sink`, which is printed, so no round can be optimized away.
  int64_t sink = 0;
  PrintRates("next_rate", Measure(opt, check.calls, [&] {
               Tally r = NextRound(*w, schedules, false);
               if (!(r == check)) {
                 std::fprintf(stderr, "schedule_bench: nondeterministic Next\n");
                 std::abort();
               }
               sink += r.sum;
             }));
  PrintRates("parse_plain_rate", Measure(opt, static_cast<int64_t>(plain.size()),
                                         [&] { sink += ParseRound(plain, **tzdb); }));
  PrintRates("parse_tz_rate", Measure(opt, static_cast<int64_t>(zoned.size()),
                                      [&] { sink += ParseRound(zoned, **tzdb); }));
  if (opt.per_schedule) MeasurePerSchedule(opt, *w, schedules, &sink);
  std::fprintf(stderr, "schedule_bench: sink %lld\n", static_cast<long long>(sink));
  return 0;
}

}  // namespace
}  // namespace cronledger::bench

int main(int argc, char** argv) {
  return cronledger::bench::Run(cronledger::bench::ParseFlags(argc, argv));
}
