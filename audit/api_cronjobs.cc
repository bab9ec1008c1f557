// /v1/cronjobs, /v1/cronjobs/{ns}/{name}, .../timeline and /v1/reports/adherence
// (docs/audit.md "API reference").
#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <tuple>

#include "audit/adherence.h"
#include "audit/api_internal.h"
#include "audit/encode.h"
#include "audit/query.h"
#include "audit/sources.h"
#include "audit/view_cronjobs.h"

namespace cronledger::audit {
namespace {

// Page continuation over CronJobs sorted by (namespace, name): the token is "ns/name" of the last
// item returned, so pages stay stable while CronJobs come and go.
template <typename T, typename KeyFn>
std::pair<std::vector<T>, std::string> PageBy(std::vector<T> all, const std::string& after,
                                              size_t limit, KeyFn key) {
  std::vector<T> out;
  std::string next;
  for (T& item : all) {
    if (!after.empty() && key(item) <= after) continue;
    if (out.size() == limit) {
      next = key(out.back());
      break;
    }
    out.push_back(std::move(item));
  }
  return {std::move(out), next};
}

// Keys compare as (namespace, name): '\x01' sorts below every character names may contain.
std::string SortKey(const std::string& ns, const std::string& name) { return ns + '\x01' + name; }

}  // namespace

model::Json CronJobSummary(const model::CronJob& cj) {
  model::Json j = model::Json::object();
  j["namespace"] = cj.metadata.namespace_;
  j["name"] = cj.metadata.name;
  j["uid"] = cj.metadata.uid;
  j["schedule"] = cj.spec.schedule;
  j["timeZone"] = cj.spec.time_zone ? model::Json(*cj.spec.time_zone) : model::Json(nullptr);
  j["suspend"] = cj.spec.suspend.value_or(false);
  j["concurrencyPolicy"] = cj.spec.concurrency_policy;
  j["lastScheduleTime"] = cj.status.last_schedule_time
                              ? model::Json(FormatRfc3339(*cj.status.last_schedule_time))
                              : model::Json(nullptr);
  j["active"] = cj.status.active.size();
  return j;
}

namespace {

// A CronJob whose stored bytes do not decode is a row with its identity and `error`.
model::Json CronJobRow(const ViewCronJob& v) {
  if (v.cron_job) return CronJobSummary(*v.cron_job);
  return {{"namespace", v.namespace_}, {"name", v.name}, {"uid", v.uid}, {"error", v.error}};
}

// Of the sources whose views hold a CronJob, the one that decided it last at or before `horizon`
// (the sources' latest decision: its owner now), else the first: its view is current, the others'
// are as they were when the CronJob left them.
Result<size_t> Owner(const ReadSet& rs, const std::vector<size_t>& holders,
                     const std::optional<Time>& horizon, const std::string& ns,
                     const std::string& name) {
  if (holders.size() == 1 || !horizon) return holders.front();
  std::vector<SourceLedger> held;
  for (size_t i : holders) held.push_back(rs.sources[i]);
  CL_ASSIGN_OR_RETURN(std::optional<CronJobOwner> owner, OwnerAt(held, ns, name, *horizon));
  return owner ? holders[owner->index] : holders.front();
}

}  // namespace

Result<model::Json> CronJobList(const ReadSet& rs, const Params& p, size_t max_page) {
  CL_ASSIGN_OR_RETURN(size_t limit, p.GetLimit(100, max_page));
  const std::string ns = p.Get("namespace").value_or("");
  // Each CronJob by SortKey, with every source whose view holds it: (source index, its entry).
  using Holders = std::vector<std::pair<size_t, ViewCronJob>>;
  std::map<std::string, Holders> all;
  for (size_t i = 0; i < rs.sources.size(); ++i) {
    CL_ASSIGN_OR_RETURN(std::vector<ViewCronJob> some, ListViewCronJobs(*rs.sources[i].ledger));
    for (ViewCronJob& v : some) {
      if (!ns.empty() && v.namespace_ != ns) continue;
      all[SortKey(v.namespace_, v.name)].emplace_back(i, std::move(v));
    }
  }
  std::vector<std::pair<std::string, Holders>> sorted(std::make_move_iterator(all.begin()),
                                                      std::make_move_iterator(all.end()));
  auto key = [](const std::pair<std::string, Holders>& e) { return e.first; };
  std::string after;
  if (auto token = p.Get("continue")) {
    CL_ASSIGN_OR_RETURN(auto parsed, ParseCronJobKey(*token));
    after = SortKey(parsed.first, parsed.second);
  }
  auto [items, next] = PageBy(std::move(sorted), after, limit, key);
  std::optional<Time> horizon;
  if (rs.merged) {
    CL_ASSIGN_OR_RETURN(horizon, LatestHorizon(rs.sources));
  }
  model::Json j = {{"items", model::Json::array()}, {"metadata", model::Json::object()}};
  for (const auto& [k, held] : items) {
    std::vector<size_t> holders;
    for (const auto& [i, v] : held) holders.push_back(i);
    const ViewCronJob& first = held.front().second;
    CL_ASSIGN_OR_RETURN(size_t owner, Owner(rs, holders, horizon, first.namespace_, first.name));
    for (const auto& [i, v] : held) {
      if (i != owner) continue;
      j["items"].push_back(CronJobRow(v));
      if (rs.merged) j["items"].back()["source"] = rs.sources[i].source;
    }
  }
  if (!next.empty()) {
    const ViewCronJob& last = items.back().second.front().second;
    j["metadata"]["continue"] = last.namespace_ + "/" + last.name;
  }
  return j;
}

Result<model::Json> CronJobDetail(const ReadSet& rs, const std::string& ns,
                                  const std::string& name) {
  // The view of the source that owns the CronJob (one ledger: that ledger's).
  std::vector<size_t> holders;
  std::vector<std::optional<store::CronJobView>> views(rs.sources.size());
  for (size_t i = 0; i < rs.sources.size(); ++i) {
    Result<store::CronJobView> v = rs.sources[i].ledger->ReadCronJobView(ns, name);
    if (v.ok()) {
      holders.push_back(i);
      views[i] = std::move(*v);
    } else if (!v.status().IsNotFound()) {
      return v.status();
    }
  }
  if (holders.empty()) return Status::NotFound("no CronJob " + ns + "/" + name);
  std::optional<Time> horizon;
  if (holders.size() > 1) {
    CL_ASSIGN_OR_RETURN(horizon, LatestHorizon(rs.sources));
  }
  CL_ASSIGN_OR_RETURN(size_t owner, Owner(rs, holders, horizon, ns, name));
  store::Ledger& ledger = *rs.sources[owner].ledger;
  const store::CronJobView& view = *views[owner];
  model::Json j = CronJobSummary(view.cron_job);
  j["object"] = model::EncodeCronJob(view.cron_job);
  j["jobs"] = model::Json::array();
  for (const model::Job& job : view.jobs) {
    model::Json row = {{"name", job.metadata.name}, {"uid", job.metadata.uid}};
    std::optional<std::string> done = model::FinishedCondition(job);
    row["state"] = done ? (*done == "Complete" ? "succeeded" : "failed") : "running";
    j["jobs"].push_back(std::move(row));
  }
  DecisionQuery q;
  q.cron_job_namespace = ns;
  q.cron_job_name = name;
  CL_ASSIGN_OR_RETURN(std::vector<DecisionCount> counts,
                      rs.merged ? CountMergedDecisions(rs.sources, q) : CountDecisions(ledger, q));
  j["decisionCounts"] = model::Json::array();
  for (const DecisionCount& c : counts) {
    j["decisionCounts"].push_back({{"action", c.action}, {"reason", c.reason}, {"count", c.count}});
  }
  if (rs.merged) {
    j["source"] = rs.sources[owner].source;
    j["otherSources"] = model::Json::array();
    for (size_t i = 0; i < rs.sources.size(); ++i) {
      if (i == owner) continue;
      j["otherSources"].push_back(
          {{"source", rs.sources[i].source}, {"exists", views[i].has_value()}});
    }
  }
  return j;
}

Result<model::Json> CronJobTimeline(const ReadSet& rs, const model::TimeZoneDb& tzdb,
                                    const std::string& ns, const std::string& name,
                                    const Params& p) {
  CL_ASSIGN_OR_RETURN(auto window, Window(rs, p));
  AdherenceOptions o;
  o.since = window.first;
  o.until = window.second;
  o.namespace_ = ns;
  o.name = name;
  o.with_slots = true;
  CL_ASSIGN_OR_RETURN(AdherenceReport r, rs.merged ? ComputeMergedAdherence(rs.sources, tzdb, o)
                                                   : ComputeAdherence(rs.ledger(), tzdb, o));
  model::Json j = EncodeReport(r);
  model::Json item = j["items"].at(0);
  item["since"] = j["since"];
  item["until"] = j["until"];
  item["horizon"] = j["horizon"];
  if (!item.contains("slots")) item["slots"] = model::Json::array();
  if (!item.contains("divergences")) item["divergences"] = model::Json::array();
  return item;
}

Result<model::Json> AdherenceReportJson(const ReadSet& rs, const model::TimeZoneDb& tzdb,
                                        const Params& p, size_t max_page) {
  CL_ASSIGN_OR_RETURN(auto window, Window(rs, p));
  CL_ASSIGN_OR_RETURN(size_t limit, p.GetLimit(max_page, max_page));
  AdherenceOptions o;
  o.since = window.first;
  o.until = window.second;
  o.namespace_ = p.Get("namespace").value_or("");
  if (auto cj = p.Get("cronjob")) {
    CL_ASSIGN_OR_RETURN(auto key, ParseCronJobKey(*cj));
    o.namespace_ = key.first;
    o.name = key.second;
  }
  CL_ASSIGN_OR_RETURN(AdherenceReport r, rs.merged ? ComputeMergedAdherence(rs.sources, tzdb, o)
                                                   : ComputeAdherence(rs.ledger(), tzdb, o));
  model::Json j = EncodeReport(r);
  std::string after;
  if (auto token = p.Get("continue")) {
    CL_ASSIGN_OR_RETURN(auto parsed, ParseCronJobKey(*token));
    after = SortKey(parsed.first, parsed.second);
  }
  auto key = [](const model::Json& row) {
    return SortKey(row["namespace"].get<std::string>(), row["name"].get<std::string>());
  };
  std::vector<model::Json> rows(j["items"].begin(), j["items"].end());
  auto [items, next] = PageBy(std::move(rows), after, limit, key);
  j["items"] = items;
  j["metadata"] = model::Json::object();
  if (!next.empty()) {
    j["metadata"]["continue"] = items.back()["namespace"].get<std::string>() + "/" +
                                items.back()["name"].get<std::string>();
  }
  return j;
}

}  // namespace cronledger::audit
