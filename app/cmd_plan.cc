// `cronledger plan PATH...`: the next fire times of the CronJobs in manifest files or directories,
// evaluated exactly as the controller would (Kubernetes timeZone rules, robfig/cron semantics).
//
// -n/--namespace keeps the CronJobs of one namespace, as everywhere in cronledger; `-n N` with a
// number is the older spelling of --count and keeps working (a namespace made only of digits
// needs --namespace).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/command.h"
#include "app/flags.h"
#include "app/manifests.h"
#include "app/output.h"
#include "app/system_clock.h"
#include "model/json.h"
#include "model/timezone.h"
#include "reconciler/schedule.h"

namespace cronledger::app {
namespace {

constexpr int kMaxN = 1000;
constexpr int kDefaultCount = 3;

constexpr const char* kUsage =
    "usage: cronledger plan PATH... [--from RFC3339] [--count N] [-n|--namespace NS]\n"
    "                      [-o table|json|yaml|csv]\n"
    "Prints the next N (default 3) fire times of every CronJob in the manifests, from --from\n"
    "(default: the newest creationTimestamp among them, or now when none has one).\n"
    "-n N with a number is the same as --count N (kept for scripts).\n";

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// An optionally signed integer: what `-n` takes as a count.
bool LooksLikeNumber(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return AllDigits(s);
}

struct PlanFlags {
  int count = kDefaultCount;
  std::optional<std::string> namespace_;
};

Result<PlanFlags> ParsePlanFlags(const Flags& flags) {
  PlanFlags out;
  std::optional<std::string> count = flags.Get("count");
  out.namespace_ = flags.Get("namespace");
  if (auto n = flags.Get("n")) {
    if (!LooksLikeNumber(*n)) {
      if (out.namespace_) return Status::InvalidArgument("-n and --namespace are the same flag");
      out.namespace_ = n;
    } else if (count) {
      return Status::InvalidArgument("--count and -n N are the same flag; give one");
    } else {
      count = n;
    }
  }
  if (count) {
    char* end = nullptr;
    const long v = std::strtol(count->c_str(), &end, 10);
    if (!AllDigits(*count) || *end != '\0' || v > kMaxN) {
      return Status::InvalidArgument("--count must be an integer in [0, " + std::to_string(kMaxN) +
                                     "], not \"" + *count + "\"");
    }
    out.count = static_cast<int>(v);
  }
  return out;
}

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
  if (Status tz = reconciler::CheckTimeZone(cj.spec.time_zone, tzdb); !tz.ok()) {
    row.error = tz.message();
    return row;
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

int Usage(const CommandIo& io, const std::string& why) {
  std::fprintf(io.err, "cronledger plan: %s\n%s", why.c_str(), kUsage);
  return kExitUsage;
}

int RunPlan(const std::vector<std::string>& args, const CommandIo& io) {
  Flags flags;
  flags.Value("from").Value("count").Value("n", "n").Value("namespace").Value("output", "o");
  if (Status st = flags.Parse(args); !st.ok()) return Usage(io, st.message());
  if (flags.positionals().empty()) return Usage(io, "no manifest PATH given");
  auto plan_flags = ParsePlanFlags(flags);
  if (!plan_flags.ok()) return Usage(io, plan_flags.status().message());
  std::optional<Time> from;
  if (auto f = flags.Get("from")) {
    auto t = ParseRfc3339(*f);
    if (!t.ok()) return Usage(io, "--from: " + t.status().message());
    from = *t;
  }
  auto format = ParseOutputFormat(flags.GetOr("output", "table"));
  if (!format.ok()) return Usage(io, format.status().message());
  auto loaded = LoadManifests(flags.positionals());
  if (!loaded.ok()) return Usage(io, loaded.status().message());
  auto tzdb = model::OpenSystemTimeZoneDb({});
  if (!tzdb.ok()) {
    std::fprintf(io.err, "cronledger plan: %s\n", tzdb.status().message().c_str());
    return kExitFailure;
  }
  if (!from) from = DefaultStart(*loaded, RealClock().Now());
  std::vector<PlanRow> rows;
  for (const auto& m : loaded->cron_jobs) {
    if (plan_flags->namespace_ && m.cron_job.metadata.namespace_ != *plan_flags->namespace_) {
      continue;
    }
    rows.push_back(PlanOne(m.cron_job, **tzdb, *from, plan_flags->count));
  }
  for (const auto& s : loaded->skipped) std::fprintf(io.err, "skipped %s\n", s.c_str());
  if (*format == OutputFormat::kTable) {
    std::fprintf(io.out, "Next fire times from %s (UTC, then the CronJob's zone):\n\n",
                 FormatRfc3339(*from).c_str());
    PrintTable(rows, io.out);
    return kExitOk;
  }
  std::vector<model::Json> items;
  for (const auto& r : rows) {
    model::Json next = model::Json::array();
    for (const Time t : r.next) next.push_back(FormatRfc3339(t));
    model::Json item = {
        {"cronJob", r.key}, {"schedule", r.schedule}, {"suspend", r.suspended}, {"next", next}};
    if (!r.error.empty()) item["error"] = r.error;
    items.push_back(std::move(item));
  }
  PrintItems(io.out, *format, {"cronJob", "schedule", "suspend", "next", "error"}, items);
  return kExitOk;
}

}  // namespace

CL_REGISTER_COMMAND("plan", "next fire times of the CronJobs in manifest files", RunPlan, kUsage);

}  // namespace cronledger::app
