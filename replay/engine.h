#pragma once

// Replay (docs/design.md rule 4): folds the recorded inputs through reconciler::Decide again
// and derives the decision stream; with no what-if it must equal the recorded stream byte for
// byte. One scan of the input log, one of the decision log.
//
// A pass is replayed when its Tick's `now` is in [since, until) and its CronJob is selected. It
// reads what the recorded pass read: the family view (replay/view_history.h) at its PassEnd's
// view_seq, the Tick's now and trigger, the configuration then in effect (ConfigChange inputs),
// the accounting state derived by the previous replayed pass of the same CronJob (or, for the
// first pass of a window, the state recorded by the last pass before the window) and the
// recorded outcomes of its API calls. Interrupted passes (a Tick without a PassEnd) committed no
// decision and are counted, not replayed (docs/controller.md).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/decision.h"
#include "model/inputs.h"
#include "model/result.h"
#include "reconciler/decide.h"
#include "replay/label_selector.h"
#include "replay/source.h"
#include "replay/view_history.h"
#include "replay/what_if.h"

namespace cronledger::replay {

// Which passes are replayed.
struct ReplayScope {
  std::optional<Time> since;            // Tick now >= since. Default: from the start.
  std::optional<Time> until;            // Tick now < until. Default: to the end.
  std::optional<std::string> cron_job;  // "ns/name". Default: every CronJob.
  // Only CronJobs whose labels match, as recorded in the view when the pass's Tick was read
  // (`-l/--selector`). Default: none (every CronJob).
  std::optional<LabelSelector> selector;

  bool Selects(std::string_view ns, std::string_view name) const {
    return !cron_job || *cron_job == FamilyKey(ns, name);
  }
  bool SelectsLabels(const model::CronJob* cj) const {
    return !selector || (cj != nullptr && selector->Matches(cj->metadata.labels));
  }
  bool InWindow(Time now) const { return (!since || now >= *since) && (!until || now < *until); }
};

struct ReplayProgress {
  uint64_t records = 0;  // input + decision records read so far
  uint64_t total = 0;    // the source's estimate; 0 when unknown
  bool done = false;
};

struct ReplayOptions {
  ReplayScope scope;
  WhatIf what_if;
  // The tz database directory; Go's Local is the recorded "localTimeZone" ConfigChange when it
  // names a zone. Default: /usr/share/zoneinfo.
  std::string zoneinfo_dir = "/usr/share/zoneinfo";
  // Go's Local when the ledger records it only as "Local" (what the controller writes today) or
  // not at all. Default: UTC (the controller's default).
  std::string local_zone = "UTC";
  // Called every `progress_every` records and once at the end. Default: none.
  std::function<void(const ReplayProgress&)> progress;
  uint64_t progress_every = 1u << 16;
  // A replay without what-if and observer may decide its passes on a second thread, in log
  // order, while the inputs are scanned: the same result either way. Default: false — with
  // glibc malloc the objects freed across threads cost more CPU than the overlap saves on a busy
  // 2-core machine (docs/replay.md "Throughput").
  bool decide_on_second_thread = false;
  // Only verify (`replay --verify`): the result holds the counts, both digests and the first
  // divergence; `passes`, `derived`, `derived_pass` and `recorded` are left empty. A replay
  // without what-if and observer then compares each derived decision with the recorded one by
  // their stored bytes as its pass is decided, hashes it once for both chains and keeps nothing
  // per pass; when anything differs (or a recorded record is not what this build writes), the
  // replay runs again the full way, so every field is what the full replay computes (docs/replay.md
  // "Throughput"). Default: false.
  bool verify_only = false;
};

// A pass synthesized by controller.noDowntime is considered missed when no recorded pass of the
// CronJob ran within this long after the fire time (the controller's own timer fires ~100 ms
// after it, docs/semantics.md §7.3).
inline constexpr Duration kSynthesisGrace = std::chrono::seconds(10);
// At most this many passes are synthesized per gap between two recorded passes.
inline constexpr size_t kMaxSynthesizedPerGap = 10000;

// What one replayed pass read (the inputs a divergence or an explanation points at).
struct PassSummary {
  uint64_t tick_seq = 0;  // 0 for a synthesized pass
  model::Tick tick;
  uint64_t view_seq = 0;
  bool synthesized = false;
  uint64_t cron_job_seq = 0;                 // the input that wrote the CronJob the pass read
  std::map<std::string, uint64_t> job_seqs;  // Job name -> the input that wrote it
  std::vector<uint64_t> outcome_seqs;        // recorded outcomes fed to Decide, in call order
  std::string problem;                       // why the pass did not replay exactly ("" = it did)
};

// Everything a pass read and derived, for observers (why, state).
struct PassContext {
  const PassSummary& summary;
  const FamilyView& view;  // as recorded (what-if overrides are applied on a copy)
  const model::AccountingState& accounting_before;
  const reconciler::SyncResult& result;    // decisions with seq 0 and cause filled
  const std::string& recorded_accounting;  // the PassEnd's ("" for a synthesized pass)
};

class ReplayObserver {
 public:
  virtual ~ReplayObserver() = default;
  virtual void OnInput(const store::LogRecord&) {}  // every input record, in order
  virtual void OnPass(const PassContext&) {}        // every replayed or synthesized pass
};

struct Divergence {
  uint64_t index = 0;  // position in the compared streams, from 0
  std::optional<model::Decision> recorded;
  std::optional<model::Decision> derived;
  std::string what;
  std::optional<PassSummary> pass;  // the pass that made the record (derived side, else recorded)
};

struct StreamDigest {
  uint64_t decisions = 0;
  std::string sha256;  // replay/digest.h
};

struct ReplayResult {
  uint64_t inputs_scanned = 0;
  uint64_t decisions_scanned = 0;
  uint64_t passes_replayed = 0;
  uint64_t passes_synthesized = 0;
  uint64_t interrupted_passes = 0;        // in scope, Tick without PassEnd
  std::vector<PassSummary> passes;        // replayed and synthesized, in stream order
  std::vector<model::Decision> derived;   // seq 0
  std::vector<uint32_t> derived_pass;     // index into `passes` per derived decision
  std::vector<model::Decision> recorded;  // the recorded decisions of the replayed passes
  StreamDigest derived_digest;
  StreamDigest recorded_digest;
  uint64_t divergences = 0;  // differing stream positions + passes that did not replay exactly
  std::optional<Divergence> first_divergence;
};

// Errors: what the source returns, Corruption for records that contradict each other (an
// outcome without its intent, a PassEnd without... see docs/replay.md), NotFound/IoError when
// the tz database cannot be opened. A pass that cannot be replayed (undecodable object, a call
// with no recorded outcome) is a divergence, not an error.
Result<ReplayResult> Replay(RecordSource& source, const ReplayOptions& options,
                            ReplayObserver* observer = nullptr);

}  // namespace cronledger::replay
