// The table form of the `cronledger simulate` summary.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "app/support_simulate.h"

namespace cronledger::app {
namespace {

using model::Json;

std::string Num(const Json& j) {
  if (j.is_number_unsigned() || j.is_number_integer()) return std::to_string(j.get<int64_t>());
  return model::DumpJson(j);
}

std::string Seconds(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", s);
  return buf;
}

std::string Skew(const Json& skew) {
  if (!skew.is_object()) return "-";
  return Seconds(skew["p50"].get<double>()) + "/" + Seconds(skew["p99"].get<double>()) + "/" +
         Seconds(skew["max"].get<double>()) + " s";
}

std::string Reasons(const Json& counts) {
  std::string out;
  for (const auto& [reason, n] : counts.items()) {
    if (!out.empty()) out += " ";
    out += reason + ":" + Num(n);
  }
  return out.empty() ? "-" : out;
}

struct Column {
  const char* title;
  bool numeric;
};

constexpr Column kColumns[] = {{"CRONJOB", false}, {"SCHEDULE", false},        {"ZONE", false},
                               {"EXPECTED", true}, {"CREATED", true},          {"SKIPPED", false},
                               {"PENDING", true},  {"SUCCEEDED", true},        {"FAILED", true},
                               {"RUNNING", true},  {"SKEW p50/p99/max", false}};

std::vector<std::string> Row(const Json& item, const std::string& name) {
  const Json& jobs = item["jobs"];
  std::string zone = "-";
  if (item.contains("timeZone") && item["timeZone"].is_string()) zone = item["timeZone"];
  std::string schedule = item.value("schedule", "");
  if (item.value("suspend", false)) schedule += " (suspended)";
  return {name,
          schedule,
          zone,
          Num(item["expected"]),
          Num(item["created"]),
          Reasons(item["skipped"]),
          Num(item["pending"]),
          Num(jobs.value("succeeded", Json(0))),
          Num(jobs.value("failed", Json(0))),
          Num(jobs.value("running", Json(0))),
          Skew(item["skewSeconds"])};
}

void PrintRows(std::FILE* out, const std::vector<std::vector<std::string>>& rows) {
  constexpr size_t kCols = std::size(kColumns);
  size_t width[kCols] = {};
  for (const auto& r : rows) {
    for (size_t c = 0; c < kCols; ++c) width[c] = std::max(width[c], r[c].size());
  }
  for (const auto& r : rows) {
    std::string line;
    for (size_t c = 0; c < kCols; ++c) {
      const std::string pad(width[c] - r[c].size(), ' ');
      line += kColumns[c].numeric ? pad + r[c] : r[c] + (c + 1 < kCols ? pad : "");
      if (c + 1 < kCols) line += "  ";
    }
    std::fprintf(out, "%s\n", line.c_str());
  }
}

}  // namespace

void PrintSimulationTable(std::FILE* out, const Json& summary) {
  const Json& run = summary["run"];
  const Json& totals = summary["totals"];
  std::fprintf(out, "Simulated %s (%s time, seed %s): fire times in (%s, %s]%s\n\n",
               run["duration"].get<std::string>().c_str(), run["mode"].get<std::string>().c_str(),
               Num(run["seed"]).c_str(), run["start"].get<std::string>().c_str(),
               run["end"].get<std::string>().c_str(),
               run.value("interrupted", false) ? "  (interrupted)" : "");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header;
  for (const Column& c : kColumns) header.push_back(c.title);
  rows.push_back(header);
  for (const Json& item : summary["items"]) rows.push_back(Row(item, item["cronJob"]));
  Json total_row = totals;
  total_row["schedule"] = "";
  rows.push_back(Row(total_row, "TOTAL (" + Num(totals["cronJobs"]) + " CronJobs)"));
  rows.back()[2] = "";
  PrintRows(out, rows);
  for (const Json& item : summary["items"]) {
    if (item.contains("error")) {
      std::fprintf(out, "\n%s: %s", item["cronJob"].get<std::string>().c_str(),
                   item["error"].get<std::string>().c_str());
    }
    if (item.contains("anomalies")) {
      std::fprintf(out, "\n%s: ANOMALY %s", item["cronJob"].get<std::string>().c_str(),
                   model::DumpJson(item["anomalies"]).c_str());
    }
  }
  const Json& ledger = totals["ledger"];
  const Json& ctrl = totals["controller"];
  std::fprintf(out,
               "\nLedger: %s inputs, %s decisions, %s quarantined.  Controller: %s passes, %s "
               "errors, %s API calls, %s watch events.\n",
               Num(ledger["inputs"]).c_str(), Num(ledger["decisions"]).c_str(),
               Num(ledger["quarantined"]).c_str(), Num(ctrl["passes"]).c_str(),
               Num(ctrl["errors"]).c_str(), Num(ctrl["apiCalls"]).c_str(),
               Num(ctrl["watchEvents"]).c_str());
  std::fprintf(out, "Kubernetes Events: %s\n", Reasons(totals["events"]).c_str());
  std::fprintf(out,
               "PENDING = fire times without a terminal record yet (they may still start); skew = "
               "scheduled time -> createJob decision.\n");
}

}  // namespace cronledger::app
