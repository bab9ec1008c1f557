#include "replay/explain.h"

#include "model/timezone.h"
#include "replay/explain_facts.h"
#include "replay/explain_text.h"

namespace cronledger::replay {
namespace {

using internal::FactCollector;
using internal::PassFacts;

bool Covers(const model::Decision& d, Time t) {
  if (!d.scheduled_time) return false;
  if (d.range_end) return *d.scheduled_time <= t && t <= *d.range_end;
  return *d.scheduled_time == t;
}

bool IsTerminal(const model::Decision& d) {
  return d.action == model::DecisionAction::kCreateJob ||
         d.action == model::DecisionAction::kSkipped;
}

struct Found {
  const PassFacts* terminal_pass = nullptr;
  const model::Decision* terminal = nullptr;
  const PassFacts* first_pass = nullptr;  // the first pass that ran at or after it
  std::vector<const model::Decision*> records;
};

Found FindRecords(const FactCollector& facts, Time t) {
  Found f;
  for (const PassFacts& p : facts.passes) {
    if (f.first_pass == nullptr && p.summary.tick.now >= t) f.first_pass = &p;
    for (const model::Decision& d : p.decisions) {
      if (!Covers(d, t)) continue;
      f.records.push_back(&d);
      if (IsTerminal(d) && f.terminal == nullptr) {
        f.terminal = &d;
        f.terminal_pass = &p;
      }
    }
  }
  return f;
}

}  // namespace

Result<Why> Explain(RecordSource& source, const WhyQuery& query) {
  const size_t slash = query.cron_job.find('/');
  if (slash == std::string::npos || !query.scheduled == !query.at) {
    return Status::InvalidArgument("why: want NS/NAME and exactly one of --scheduled, --at");
  }
  FactCollector facts(query.cron_job.substr(0, slash), query.cron_job.substr(slash + 1));
  ReplayOptions options;
  options.scope.cron_job = query.cron_job;
  options.zoneinfo_dir = query.zoneinfo_dir;
  CL_ASSIGN_OR_RETURN(ReplayResult replayed, Replay(source, options, &facts));
  model::SystemTimeZoneDbOptions tz;
  tz.zoneinfo_dir = query.zoneinfo_dir;
  CL_ASSIGN_OR_RETURN(auto tzdb, model::OpenSystemTimeZoneDb(tz));
  internal::WhyWriter w(facts, *tzdb, query.cron_job);
  if (facts.cron_job.empty()) return w.UnknownCronJob();
  std::optional<Time> t = query.scheduled;
  if (!t) {
    t = w.LatestFireAtOrBefore(*query.at);
    if (!t) return w.NoFireTimeBefore(*query.at);
  }
  const Found found = FindRecords(facts, *t);
  if (found.terminal != nullptr) {
    w.Terminal(*t, *found.terminal_pass, *found.terminal, found.first_pass);
  } else if (!found.records.empty()) {
    w.Pending(*t, found.first_pass ? *found.first_pass : facts.passes.back(),
              *found.records.back());
  } else {
    w.NoRecord(*t);
  }
  std::vector<model::Decision> records;
  for (const model::Decision* d : found.records) records.push_back(*d);
  return w.Finish(records, replayed.divergences);
}

}  // namespace cronledger::replay
