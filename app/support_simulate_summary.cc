// The summary of `cronledger simulate`, built from what the ledger recorded: per CronJob the fire
// times expected in the window (from the schedule engine), and for each the terminal decision
// record the controller committed (createJob, or skipped with a reason), plus creation skew and
// the outcomes of the Jobs in the simulated cluster.
#include <algorithm>
#include <cmath>

#include "app/support_simulate.h"
#include "reconciler/schedule.h"

namespace cronledger::app {
namespace {

using model::DecisionAction;
using model::Json;

// Expected fire times are listed one by one; a window with more than this many per CronJob is
// refused (the summary is meant for human-sized simulations; the benchmark counts differently).
constexpr size_t kMaxSlots = 5'000'000;

struct Tally {
  std::vector<Time> slots;        // expected fire times in (start, end], ascending
  std::vector<uint32_t> records;  // terminal records per slot
  uint64_t created = 0;
  std::map<std::string, uint64_t> skipped;
  uint64_t unscheduled = 0;  // terminal records for an instant in the window that is no fire time
  uint64_t duplicates = 0;   // second and later terminal records of one fire time
  std::vector<double> skews;
  std::map<std::string, uint64_t> events;
  std::string error;
};

// The fire times in (start, end], evaluated as the controller does (docs/semantics.md §6.3, §6.5).
Status ExpectedSlots(const model::CronJob& cj, const model::TimeZoneDb& tzdb, Time start, Time end,
                     std::vector<Time>* out) {
  if (cj.spec.time_zone) CL_RETURN_IF_ERROR(tzdb.Load(*cj.spec.time_zone).status());
  const auto formatted = reconciler::FormatSchedule(cj.spec.schedule, cj.spec.time_zone);
  CL_ASSIGN_OR_RETURN(auto schedule, reconciler::ParseStandard(formatted.text, tzdb));
  for (auto t = schedule->Next(start); t && *t <= end; t = schedule->Next(*t)) {
    if (out->size() == kMaxSlots) {
      return Status::OutOfRange("more than " + std::to_string(kMaxSlots) +
                                " fire times in the window");
    }
    out->push_back(*t);
  }
  return Status::Ok();
}

// Marks the expected fire times in [from, to] as ended; returns how many there were.
uint64_t Mark(Tally& tally, Time from, Time to) {
  auto lo = std::lower_bound(tally.slots.begin(), tally.slots.end(), from);
  auto hi = std::upper_bound(tally.slots.begin(), tally.slots.end(), to);
  for (auto it = lo; it != hi; ++it) {
    if (++tally.records[static_cast<size_t>(it - tally.slots.begin())] == 2) ++tally.duplicates;
  }
  return static_cast<uint64_t>(hi - lo);
}

void Count(Tally& tally, const model::Decision& d, Time start, Time end) {
  if (d.action == DecisionAction::kEvent) {
    ++tally.events[d.reason];
    return;
  }
  if (!d.scheduled_time) return;
  const Time first = *d.scheduled_time;
  const Time last = d.range_end.value_or(first);
  if (last <= start || first > end) return;  // outside the window
  if (d.action == DecisionAction::kCreateJob) {
    if (Mark(tally, first, first) == 0) {
      ++tally.unscheduled;
      return;
    }
    ++tally.created;
    tally.skews.push_back(std::chrono::duration<double>(d.time.Sub(first)).count());
  } else if (d.action == DecisionAction::kSkipped) {
    const uint64_t n = Mark(tally, first, last);
    if (n == 0) ++tally.unscheduled;
    if (n > 0) tally.skipped[d.reason] += n;
  }
}

double Millis(double seconds) { return std::round(seconds * 1000.0) / 1000.0; }

// Nearest-rank percentiles in seconds (millisecond precision); null without samples.
Json Percentiles(std::vector<double> v) {
  if (v.empty()) return nullptr;
  std::sort(v.begin(), v.end());
  auto rank = [&v](double p) {
    const auto i = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
    return Millis(v[std::clamp<size_t>(i, 1, v.size()) - 1]);
  };
  return {{"p50", rank(50)}, {"p90", rank(90)}, {"p99", rank(99)}, {"max", Millis(v.back())}};
}

Json CountsJson(const std::map<std::string, uint64_t>& m) {
  Json j = Json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

Json JobsJson(const controller::SimJobCounts& c) {
  return {{"succeeded", c.succeeded},
          {"failed", c.failed},
          {"running", c.running},
          {"replaced", c.deleted_running}};
}

Json ItemJson(const model::CronJob& cj, const Tally& t, const controller::SimJobCounts& jobs) {
  uint64_t pending = 0;
  for (const uint32_t r : t.records) pending += r == 0;
  Json item = {
      {"cronJob", cj.metadata.Key()},
      {"schedule", cj.spec.schedule},
      {"timeZone", cj.spec.time_zone ? Json(*cj.spec.time_zone) : Json(nullptr)},
      {"concurrencyPolicy",
       cj.spec.concurrency_policy.empty() ? std::string("Allow") : cj.spec.concurrency_policy},
      {"suspend", cj.spec.suspend.value_or(false)},
      {"expected", t.slots.size()},
      {"created", t.created},
      {"skipped", CountsJson(t.skipped)},
      {"pending", pending},
      {"jobs", JobsJson(jobs)},
      {"skewSeconds", Percentiles(t.skews)},
      {"events", CountsJson(t.events)}};
  if (!t.error.empty()) item["error"] = t.error;
  if (t.unscheduled != 0 || t.duplicates != 0) {
    item["anomalies"] = {{"unscheduled", t.unscheduled}, {"duplicates", t.duplicates}};
  }
  return item;
}

void AddCounts(Json& into, const Json& from) {
  for (const auto& [k, v] : from.items()) {
    into[k] = into.value(k, uint64_t{0}) + v.get<uint64_t>();
  }
}

}  // namespace

Result<Json> BuildSimulationSummary(const SimulateOutcome& outcome, store::Ledger& ledger,
                                    const model::TimeZoneDb& tzdb, uint64_t seed) {
  std::vector<const model::CronJob*> order;
  for (const auto& cj : outcome.cron_jobs) order.push_back(&cj);
  std::sort(order.begin(), order.end(), [](const model::CronJob* a, const model::CronJob* b) {
    return a->metadata.Key() < b->metadata.Key();
  });
  Json items = Json::array();
  Json totals = {{"cronJobs", order.size()},
                 {"expected", 0},
                 {"created", 0},
                 {"skipped", Json::object()},
                 {"pending", 0},
                 {"jobs", Json::object()},
                 {"skewSeconds", nullptr},
                 {"events", Json::object()}};
  std::vector<double> all_skews;
  for (const model::CronJob* cj : order) {
    Tally t;
    if (Status st = ExpectedSlots(*cj, tzdb, outcome.start, outcome.end, &t.slots); !st.ok()) {
      t.error = st.message();
    }
    t.records.assign(t.slots.size(), 0);
    CL_ASSIGN_OR_RETURN(
        const auto decisions,
        ledger.DecisionsByCronJob(cj->metadata.namespace_, cj->metadata.name, outcome.start,
                                  outcome.stopped.Add(Duration(1)), 0));
    for (const auto& d : decisions) Count(t, d, outcome.start, outcome.end);
    const auto counts = outcome.job_counts.find(cj->metadata.Key());
    Json item = ItemJson(
        *cj, t, counts == outcome.job_counts.end() ? controller::SimJobCounts{} : counts->second);
    all_skews.insert(all_skews.end(), t.skews.begin(), t.skews.end());
    for (const char* k : {"expected", "created", "pending"}) {
      totals[k] = totals[k].get<uint64_t>() + item[k].get<uint64_t>();
    }
    AddCounts(totals["skipped"], item["skipped"]);
    AddCounts(totals["jobs"], item["jobs"]);
    AddCounts(totals["events"], item["events"]);
    items.push_back(std::move(item));
  }
  totals["skewSeconds"] = Percentiles(std::move(all_skews));
  CL_ASSIGN_OR_RETURN(const store::LedgerMeta meta, ledger.Meta());
  totals["ledger"] = {{"inputs", meta.last_input_seq},
                      {"decisions", meta.last_decision_seq},
                      {"quarantined", meta.quarantine_count}};
  totals["controller"] = {{"passes", outcome.stats.passes},
                          {"unrecordedPasses", outcome.stats.unrecorded_passes},
                          {"echoesSkipped", outcome.stats.echoes_skipped},
                          {"errors", outcome.stats.errors},
                          {"apiCalls", outcome.stats.api_calls},
                          {"watchEvents", outcome.watch_events}};
  Json run = {{"mode", outcome.realtime ? "realtime" : "virtual"},
              {"start", FormatRfc3339Nano(outcome.start)},
              {"end", FormatRfc3339Nano(outcome.end)},
              {"duration", FormatGoDuration(outcome.end.Sub(outcome.start))},
              {"seed", seed}};
  if (outcome.interrupted) run["interrupted"] = true;
  return Json{{"run", std::move(run)}, {"items", std::move(items)}, {"totals", std::move(totals)}};
}

}  // namespace cronledger::app
