// `cronledger plan PATH...`: the next fire times of the CronJobs in manifest files or directories,
// evaluated exactly as the controller would (Kubernetes timeZone rules, robfig/cron semantics).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/command.h"
#include "app/flags.h"
#include "app/manifests.h"
#include "model/json.h"
#include "model/timezone.h"
#include "reconciler/schedule.h"

namespace cronledger::app {
namespace {

constexpr int kMaxN = 1000;

struct PlanRow {
  std::string key;
  std::string schedule;
  std::string zone;
  bool suspended = false;
  std::string error;
  std::vector<Time> next;
  std::vector<std::string> next_local;  // the same instants in the schedule's zone
};

PlanRow PlanOne(const model::CronJob& cj, const model::TimeZoneDb& tzdb, Time from, int n) {
  PlanRow row;
  row.key = cj.metadata.Key();
  row.schedule = cj.spec.schedule;
  row.zone = cj.spec.time_zone.value_or("UTC (controller zone)");
  row.suspended = cj.spec.suspend.value_or(false);
  // docs/semantics.md §6.3: an unloadable timeZone stops the CronJob before its schedule is looked
  // at.
  if (cj.spec.time_zone) {
    if (auto tz = tzdb.Load(*cj.spec.time_zone); !tz.ok()) {
      row.error = tz.status().message();
      return row;
    }
  }
  const auto formatted = reconciler::FormatSchedule(cj.spec.schedule, cj.spec.time_zone);
  auto sched = reconciler::ParseStandard(formatted.text, tzdb);
  if (!sched.ok()) {
    row.error = sched.status().message();
    return row;
  }
  const model::TimeZone& zone = (*sched)->zone();
  Time t = from;
  for (int i = 0; i < n; ++i) {
    auto next = (*sched)->Next(t);
    if (!next) break;
    row.next.push_back(*next);
    row.next_local.push_back(FormatRfc3339(*next, zone.OffsetAt(next->unix_seconds())));
    t = *next;
  }
  return row;
}

void PrintTable(const std::vector<PlanRow>& rows, std::FILE* out) {
  for (const auto& r : rows) {
    std::fprintf(out, "%s  schedule=\"%s\"  zone=%s%s\n", r.key.c_str(), r.schedule.c_str(),
                 r.zone.c_str(), r.suspended ? "  SUSPENDED (no Jobs will be created)" : "");
    if (!r.error.empty()) {
      std::fprintf(out, "  error: %s\n", r.error.c_str());
      continue;
    }
    if (r.next.empty()) std::fprintf(out, "  never fires within five years\n");
    for (size_t i = 0; i < r.next.size(); ++i) {
      std::fprintf(out, "  %s   %s\n", FormatRfc3339(r.next[i]).c_str(), r.next_local[i].c_str());
    }
  }
}

int RunPlan(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("from").Value("n", "n").Value("output", "o").Switch("help", "h");
  Status st = flags.Parse(args);
  if (!st.ok() || flags.Has("help") || flags.positionals().empty()) {
    if (!st.ok()) std::fprintf(io.err, "cronledger plan: %s\n", st.message().c_str());
    std::fprintf(io.err,
                 "usage: cronledger plan PATH... [--from RFC3339] [-n N] [-o table|json]\n"
                 "  Prints the next N (default 3) fire times of every CronJob in the manifests.\n");
    return st.ok() && flags.Has("help") ? kExitOk : kExitUsage;
  }
  Time from = Time::FromUnix(0);
  if (auto f = flags.Get("from")) {
    auto t = ParseRfc3339(*f);
    if (!t.ok()) {
      std::fprintf(io.err, "cronledger plan: --from: %s\n", t.status().message().c_str());
      return kExitUsage;
    }
    from = *t;
  }
  const std::string n_text = flags.GetOr("n", "3");
  char* end = nullptr;
  const long n = std::strtol(n_text.c_str(), &end, 10);
  if (end == n_text.c_str() || *end != '\0' || n < 0 || n > kMaxN) {
    std::fprintf(io.err, "cronledger plan: -n must be an integer in [0, %d]\n", kMaxN);
    return kExitUsage;
  }
  const std::string output = flags.GetOr("output", "table");
  if (output != "table" && output != "json") {
    std::fprintf(io.err, "cronledger plan: -o must be table or json\n");
    return kExitUsage;
  }
  auto loaded = LoadManifests(flags.positionals());
  if (!loaded.ok()) {
    std::fprintf(io.err, "cronledger plan: %s\n", loaded.status().message().c_str());
    return kExitUsage;
  }
  auto tzdb = model::OpenSystemTimeZoneDb({});
  if (!tzdb.ok()) {
    std::fprintf(io.err, "cronledger plan: %s\n", tzdb.status().message().c_str());
    return kExitFailure;
  }
  if (!flags.Get("from")) {
    // Default: the newest creationTimestamp among the manifests, so the output is reproducible.
    for (const auto& m : loaded->cron_jobs) {
      from = std::max(from, m.cron_job.metadata.creation_timestamp.value_or(from));
    }
  }
  std::vector<PlanRow> rows;
  for (const auto& m : loaded->cron_jobs) {
    rows.push_back(PlanOne(m.cron_job, **tzdb, from, static_cast<int>(n)));
  }
  for (const auto& s : loaded->skipped) std::fprintf(io.err, "skipped %s\n", s.c_str());
  if (output == "json") {
    model::Json items = model::Json::array();
    for (const auto& r : rows) {
      model::Json next = model::Json::array();
      for (const Time t : r.next) next.push_back(FormatRfc3339(t));
      model::Json item = {
          {"cronJob", r.key}, {"schedule", r.schedule}, {"suspend", r.suspended}, {"next", next}};
      if (!r.error.empty()) item["error"] = r.error;
      items.push_back(std::move(item));
    }
    std::fprintf(io.out, "%s\n", model::DumpJson({{"items", items}}).c_str());
  } else {
    std::fprintf(io.out, "Next fire times from %s (UTC, then the CronJob's zone):\n\n",
                 FormatRfc3339(from).c_str());
    PrintTable(rows, io.out);
  }
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("plan", "next fire times of the CronJobs in manifest files", RunPlan);

}  // namespace cronledger::app
