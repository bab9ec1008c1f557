// /v1/cronjobs, /v1/cronjobs/{ns}/{name}, .../timeline and /v1/reports/adherence
// (docs/audit.md "API reference").
#include <algorithm>
#include <tuple>

#include "audit/adherence.h"
#include "audit/api_internal.h"
#include "audit/encode.h"
#include "audit/query.h"
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

}  // namespace

Result<model::Json> CronJobList(store::Ledger& ledger, const Params& p, size_t max_page) {
  CL_ASSIGN_OR_RETURN(size_t limit, p.GetLimit(100, max_page));
  CL_ASSIGN_OR_RETURN(std::vector<ViewCronJob> all, ListViewCronJobs(ledger));
  const std::string ns = p.Get("namespace").value_or("");
  std::erase_if(all, [&](const ViewCronJob& v) { return !ns.empty() && v.namespace_ != ns; });
  auto key = [](const ViewCronJob& v) { return SortKey(v.namespace_, v.name); };
  std::string after;
  if (auto token = p.Get("continue")) {
    CL_ASSIGN_OR_RETURN(auto parsed, ParseCronJobKey(*token));
    after = SortKey(parsed.first, parsed.second);
  }
  auto [items, next] = PageBy(std::move(all), after, limit, key);
  model::Json j = {{"items", model::Json::array()}, {"metadata", model::Json::object()}};
  for (const ViewCronJob& v : items) j["items"].push_back(CronJobRow(v));
  if (!next.empty()) {
    j["metadata"]["continue"] = items.back().namespace_ + "/" + items.back().name;
  }
  return j;
}

Result<model::Json> CronJobDetail(store::Ledger& ledger, const std::string& ns,
                                  const std::string& name) {
  CL_ASSIGN_OR_RETURN(store::CronJobView view, ledger.ReadCronJobView(ns, name));
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
  CL_ASSIGN_OR_RETURN(std::vector<DecisionCount> counts, CountDecisions(ledger, q));
  j["decisionCounts"] = model::Json::array();
  for (const DecisionCount& c : counts) {
    j["decisionCounts"].push_back({{"action", c.action}, {"reason", c.reason}, {"count", c.count}});
  }
  return j;
}

Result<model::Json> CronJobTimeline(store::Ledger& ledger, const model::TimeZoneDb& tzdb,
                                    const std::string& ns, const std::string& name,
                                    const Params& p) {
  CL_ASSIGN_OR_RETURN(auto window, Window(ledger, p));
  AdherenceOptions o;
  o.since = window.first;
  o.until = window.second;
  o.namespace_ = ns;
  o.name = name;
  o.with_slots = true;
  CL_ASSIGN_OR_RETURN(AdherenceReport r, ComputeAdherence(ledger, tzdb, o));
  model::Json j = EncodeReport(r);
  model::Json item = j["items"].at(0);
  item["since"] = j["since"];
  item["until"] = j["until"];
  item["horizon"] = j["horizon"];
  if (!item.contains("slots")) item["slots"] = model::Json::array();
  if (!item.contains("divergences")) item["divergences"] = model::Json::array();
  return item;
}

Result<model::Json> AdherenceReportJson(store::Ledger& ledger, const model::TimeZoneDb& tzdb,
                                        const Params& p, size_t max_page) {
  CL_ASSIGN_OR_RETURN(auto window, Window(ledger, p));
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
  CL_ASSIGN_OR_RETURN(AdherenceReport r, ComputeAdherence(ledger, tzdb, o));
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
