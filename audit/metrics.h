#pragma once

// Prometheus metrics derived from a ledger (docs/audit.md "Metrics"). In `cronledger serve` the
// process is not the controller, so everything here is computed from what the store records:
// the creation-skew histogram and the decision counters are folded from the decision log
// (incrementally: each scrape reads only the decisions appended since the previous one), the
// quarantine count and record sequence numbers come from the ledger's meta data, and the size is
// the bytes of the files in the data directory.
//
// Thread safety: all methods may be called concurrently.

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "audit/query.h"
#include "model/result.h"
#include "store/ledger.h"

namespace cronledger::audit {

// Upstream's buckets: metrics.ExponentialBuckets(1, 2, 10) = 1, 2, 4, ..., 512 seconds.
inline constexpr std::array<double, 10> kSkewBuckets = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512};

class LedgerMetrics {
 public:
  // `data_dir` is measured for cronledger_ledger_disk_bytes; empty leaves the metric out.
  explicit LedgerMetrics(std::string data_dir) : data_dir_(std::move(data_dir)) {}

  // Folds the decisions appended to each source since the last call, then renders the exposition
  // text (text/plain; version=0.0.4): counters and the histogram over every source, the last seqs
  // per source (labelled `source` when `by_source`, e.g. an audit store's copies), the horizon
  // the latest of them. Errors are the ledgers'.
  Result<std::string> Scrape(const std::vector<SourceLedger>& sources, bool by_source);

  // The skew histogram's cumulative bucket counts (kSkewBuckets, then +Inf), for tests.
  std::array<uint64_t, kSkewBuckets.size() + 1> SkewBuckets() const;

 private:
  void Fold(const model::Decision& d);

  const std::string data_dir_;
  mutable std::mutex mu_;
  std::map<std::string, uint64_t> next_seq_;                      // by source
  std::array<uint64_t, kSkewBuckets.size() + 1> skew_buckets_{};  // non-cumulative
  double skew_sum_ = 0;
  uint64_t skew_count_ = 0;
  std::map<std::pair<std::string, std::string>, uint64_t> decisions_;  // (action, reason)
};

// Escapes a Prometheus label value (backslash, double quote, newline).
std::string EscapeLabel(std::string_view v);

}  // namespace cronledger::audit
