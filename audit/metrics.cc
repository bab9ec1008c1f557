// Prometheus metrics derived from the ledger (audit/metrics.h).
#include "audit/metrics.h"

#include <cinttypes>
#include <cstdio>
#include <filesystem>

#include "audit/adherence.h"

namespace cronledger::audit {
namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string Num(uint64_t v) { return std::to_string(v); }

// Bytes of the regular files under dir; a file that vanishes meanwhile (compaction) is skipped.
uint64_t DiskBytes(const std::string& dir) {
  uint64_t total = 0;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    std::error_code size_ec;
    if (it->is_regular_file(size_ec)) {
      uint64_t n = it->file_size(size_ec);
      if (!size_ec) total += n;
    }
  }
  return total;
}

}  // namespace

std::string EscapeLabel(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

void LedgerMetrics::Fold(const model::Decision& d) {
  ++decisions_[{std::string(model::DecisionActionName(d.action)), d.reason}];
  if (d.action != model::DecisionAction::kCreateJob || !d.scheduled_time) return;
  // Upstream observes time.Since(scheduledTime) when it creates the Job; the ledger's equivalent
  // is the creating pass's `now` minus the fire time.
  const double skew = static_cast<double>(d.time.Sub(*d.scheduled_time).count()) / 1e9;
  size_t i = 0;
  while (i < kSkewBuckets.size() && skew > kSkewBuckets[i]) ++i;
  ++skew_buckets_[i];
  skew_sum_ += skew;
  ++skew_count_;
}

std::array<uint64_t, kSkewBuckets.size() + 1> LedgerMetrics::SkewBuckets() const {
  std::lock_guard lock(mu_);
  std::array<uint64_t, kSkewBuckets.size() + 1> out{};
  uint64_t acc = 0;
  for (size_t i = 0; i < out.size(); ++i) out[i] = acc += skew_buckets_[i];
  return out;
}

Result<std::string> LedgerMetrics::Scrape(const std::vector<SourceLedger>& sources,
                                          bool by_source) {
  std::vector<store::LedgerMeta> metas;
  uint64_t quarantined = 0;
  CL_ASSIGN_OR_RETURN(std::optional<Time> horizon, LatestHorizon(sources));
  for (const SourceLedger& src : sources) {
    CL_ASSIGN_OR_RETURN(store::LedgerMeta meta, src.ledger->Meta());
    quarantined += meta.quarantine_count;
    metas.push_back(meta);
  }
  std::lock_guard lock(mu_);
  for (const SourceLedger& src : sources) {
    uint64_t& next = next_seq_.try_emplace(src.source, 1).first->second;
    Status s = src.ledger->ScanDecisions(next, [&](const model::Decision& d) {
      Fold(d);
      next = d.seq + 1;
      return true;
    });
    if (!s.ok()) return s;
  }
  // One line per source: `name{source="s"} v`, or `name v` for one unlabelled ledger.
  auto per_source = [&](const std::string& name, uint64_t store::LedgerMeta::*field) {
    std::string lines;
    for (size_t i = 0; i < sources.size(); ++i) {
      // Appended piece by piece: GCC 12 at -O3 reports a false -Wrestrict (GCC bug 105651) on a
      // `"..." + s + "..."` chain here.
      lines += name;
      if (by_source) {
        lines += "{source=\"";
        lines += EscapeLabel(sources[i].source);
        lines += "\"}";
      }
      lines += ' ';
      lines += Num(metas[i].*field);
      lines += '\n';
    }
    return lines;
  };
  std::string o;
  o += "# HELP cronjob_controller_job_creation_skew_duration_seconds Time between when a cronjob "
       "is scheduled to be run, and when the corresponding job is created (from the ledger's "
       "createJob decisions).\n";
  o += "# TYPE cronjob_controller_job_creation_skew_duration_seconds histogram\n";
  uint64_t acc = 0;
  for (size_t i = 0; i <= kSkewBuckets.size(); ++i) {
    acc += skew_buckets_[i];
    std::string le = i < kSkewBuckets.size() ? Num(kSkewBuckets[i]) : "+Inf";
    o += "cronjob_controller_job_creation_skew_duration_seconds_bucket{le=\"" + le + "\"} " +
         Num(acc) + "\n";
  }
  o += "cronjob_controller_job_creation_skew_duration_seconds_sum " + Num(skew_sum_) + "\n";
  o += "cronjob_controller_job_creation_skew_duration_seconds_count " + Num(skew_count_) + "\n";
  o += "# HELP cronledger_decisions_total Decision records in the ledger by action and reason.\n";
  o += "# TYPE cronledger_decisions_total counter\n";
  for (const auto& [key, n] : decisions_) {
    o += "cronledger_decisions_total{action=\"" + EscapeLabel(key.first) + "\",reason=\"" +
         EscapeLabel(key.second) + "\"} " + Num(n) + "\n";
  }
  o += "# HELP cronledger_quarantined_inputs_total Inputs kept in the quarantine (dead letter).\n";
  o += "# TYPE cronledger_quarantined_inputs_total counter\n";
  o += "cronledger_quarantined_inputs_total " + Num(quarantined) + "\n";
  o += "# HELP cronledger_ledger_last_input_seq Sequence number of the last input record.\n";
  o += "# TYPE cronledger_ledger_last_input_seq gauge\n";
  o += per_source("cronledger_ledger_last_input_seq", &store::LedgerMeta::last_input_seq);
  o += "# HELP cronledger_ledger_last_decision_seq Sequence number of the last decision record.\n";
  o += "# TYPE cronledger_ledger_last_decision_seq gauge\n";
  o += per_source("cronledger_ledger_last_decision_seq", &store::LedgerMeta::last_decision_seq);
  if (horizon) {
    o += "# HELP cronledger_ledger_horizon_timestamp_seconds Time of the last decision.\n";
    o += "# TYPE cronledger_ledger_horizon_timestamp_seconds gauge\n";
    o += "cronledger_ledger_horizon_timestamp_seconds " +
         Num(static_cast<double>(horizon->unix_seconds())) + "\n";
  }
  if (!data_dir_.empty()) {
    o += "# HELP cronledger_ledger_disk_bytes Bytes of the files in the data directory.\n";
    o += "# TYPE cronledger_ledger_disk_bytes gauge\n";
    o += "cronledger_ledger_disk_bytes " + Num(DiskBytes(data_dir_)) + "\n";
  }
  return o;
}

}  // namespace cronledger::audit
