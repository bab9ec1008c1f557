// Reads over an audit store's sources (audit/sources.h).
#include "audit/sources.h"

#include <algorithm>
#include <chrono>
#include <tuple>
#include <utility>

#include "replay/source.h"

namespace cronledger::audit {

Result<std::vector<SourcedDivergence>> ListMergedDivergences(
    const std::vector<SourceLedger>& sources, const DivergenceQuery& q) {
  std::vector<SourcedDivergence> all;
  for (const SourceLedger& src : sources) {
    CL_ASSIGN_OR_RETURN(std::vector<Divergence> found, ListDivergences(*src.ledger, q));
    for (Divergence& d : found) all.push_back({std::move(d), src.source});
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const SourcedDivergence& a, const SourcedDivergence& b) {
                     return std::tie(a.divergence.time, a.source, a.divergence.seq) <
                            std::tie(b.divergence.time, b.source, b.divergence.seq);
                   });
  if (q.limit != 0 && all.size() > q.limit) all.resize(q.limit);
  return all;
}

Result<std::optional<Time>> LastDecisionAtOrBefore(store::Ledger& ledger, const std::string& ns,
                                                   const std::string& name, Time at) {
  DecisionQuery q;
  q.cron_job_namespace = ns;
  q.cron_job_name = name;
  q.summary = true;
  q.until = at.Add(std::chrono::nanoseconds(1));
  for (const Duration back :
       {Duration(std::chrono::hours(1)), Duration(std::chrono::hours(24 * 31)),
        Duration(std::chrono::hours(24 * 366 * 10))}) {
    q.since = at.Add(-back);
    CL_ASSIGN_OR_RETURN(DecisionPage page, QueryDecisions(ledger, q));
    if (!page.items.empty()) return std::optional<Time>(page.items.back().time);
  }
  return std::optional<Time>();
}

Result<std::optional<CronJobOwner>> OwnerAt(const std::vector<SourceLedger>& sources,
                                            const std::string& ns, const std::string& name,
                                            Time at) {
  std::optional<CronJobOwner> owner;
  for (size_t i = 0; i < sources.size(); ++i) {
    CL_ASSIGN_OR_RETURN(std::optional<Time> decided,
                        LastDecisionAtOrBefore(*sources[i].ledger, ns, name, at));
    if (decided && (!owner || owner->decided < *decided)) owner = CronJobOwner{i, *decided};
  }
  return owner;
}

namespace {

// How much an answer says about the fire time: a record of what happened first.
int Rank(const replay::Why& w) {
  static const char* const kOrder[] = {"created",   "skipped",         "pending",
                                       "no record", "not a fire time", "unknown CronJob"};
  for (int i = 0; i < 6; ++i) {
    if (w.verdict == kOrder[i]) return i;
  }
  return 6;
}

}  // namespace

Result<replay::Why> ExplainAcrossSources(const std::vector<SourceLedger>& sources,
                                         const replay::WhyQuery& query) {
  if (sources.empty()) return Status::NotFound("the audit store holds no source yet");
  std::vector<std::pair<std::string, replay::Why>> answers;
  for (const SourceLedger& src : sources) {
    replay::LedgerSource history(*src.ledger);
    auto why = replay::Explain(history, query);
    if (!why.ok()) return why.status().WithContext("source " + src.source);
    answers.emplace_back(src.source, std::move(*why));
  }
  std::stable_sort(answers.begin(), answers.end(), [](const auto& a, const auto& b) {
    const replay::Why& x = a.second;
    const replay::Why& y = b.second;
    if (x.scheduled != y.scheduled) return x.scheduled > y.scheduled;
    if (Rank(x) != Rank(y)) return Rank(x) < Rank(y);
    return x.decided_at && y.decided_at && *x.decided_at < *y.decided_at;
  });
  replay::Why chosen = std::move(answers.front().second);
  const std::string& source = answers.front().first;
  chosen.facts["source"] = source;
  chosen.sentences.insert(chosen.sentences.begin(), "From the ledger of source " + source + ".");
  model::Json others = model::Json::array();
  for (size_t i = 1; i < answers.size(); ++i) {
    const replay::Why& w = answers[i].second;
    model::Json o = {{"source", answers[i].first}, {"verdict", w.verdict}};
    if (w.scheduled) o["scheduledTime"] = FormatRfc3339(*w.scheduled);
    if (!w.reason.empty()) o["reason"] = w.reason;
    others.push_back(std::move(o));
    if (w.scheduled == chosen.scheduled && Rank(w) <= 1) {
      chosen.sentences.push_back("The ledger of source " + answers[i].first + " also records it: " +
                                 w.verdict + (w.reason.empty() ? "" : " (" + w.reason + ")") + ".");
    }
  }
  chosen.facts["otherSources"] = std::move(others);
  chosen.facts["sentences"] = chosen.sentences;
  return chosen;
}

}  // namespace cronledger::audit
