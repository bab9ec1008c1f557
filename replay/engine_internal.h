#pragma once

// The replay engine's internals (replay/engine.h), shared by engine*.cc only.

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "model/api_call.h"
#include "model/timezone.h"
#include "reconciler/schedule_memo.h"
#include "replay/digest.h"
#include "replay/engine.h"

namespace cronledger::replay::internal {

// A set of seqs inserted mostly in increasing order (the ticks of the log): a vector, sorted on
// the first lookup after an insert out of order. Lookups come after the input scan.
class SeqSet {
 public:
  void Insert(uint64_t seq) {
    if (!seqs_.empty() && seq <= seqs_.back()) sorted_ = false;
    seqs_.push_back(seq);
  }
  bool Contains(uint64_t seq) const {
    if (!sorted_) {
      std::sort(seqs_.begin(), seqs_.end());
      seqs_.erase(std::unique(seqs_.begin(), seqs_.end()), seqs_.end());
      sorted_ = true;
    }
    return std::binary_search(seqs_.begin(), seqs_.end(), seq);
  }

 private:
  mutable std::vector<uint64_t> seqs_;
  mutable bool sorted_ = true;
};

struct RecordedCall {  // what an ActionIntent says about its call
  std::string verb;
  model::ObjectKind kind = model::ObjectKind::kJob;
  std::string namespace_;
  std::string name;
};

struct OpenPass {
  model::Tick tick;
  bool in_scope = false;
  bool history_cleanup = true;  // the configuration in effect at the Tick
  const model::TimeZoneDb* tzdb = nullptr;
  std::vector<uint64_t> intent_seqs;
  std::vector<RecordedCall> calls;
  std::vector<model::ApiOutcome> outcomes;
  std::vector<uint64_t> outcome_seqs;
};

struct ChainEntry {  // the accounting state the next pass of a CronJob starts from
  std::string uid;
  model::AccountingState accounting;
  bool derived = false;  // produced by a replayed pass (else seeded from a recorded PassEnd)
  Time last_now;         // the now of that pass
  uint64_t last_view_seq = 0;
};

// The SyncInput a CronJob's what-if passes read, kept between passes: only the objects whose
// version changed since the previous pass of the family are copied in again (an emulated pass
// consumes its input; most passes read the same objects as the previous one). Recorded passes
// read the view in place (reconciler::SyncInputRef).
struct CachedInput {
  reconciler::SyncInput in;
  std::shared_ptr<const model::CronJob> cron_job;       // what in.cron_job was copied from
  std::vector<std::shared_ptr<const model::Job>> jobs;  // what in.jobs[i] was copied from
};

// A recorded pass (or a seed of the accounting chain) handed from the input scan to the thread
// that decides (PassQueue).
struct PassTask {
  std::string key;  // "ns/name"
  bool seed = false;
  // A pass that is not replayed (with changes): the family's changes up to end.view_seq can be
  // applied (what ViewHistory::Trim forgets otherwise).
  bool trim = false;
  ChainEntry chain;  // seed: the chain entry to set
  uint64_t tick_seq = 0;
  OpenPass pass;
  model::PassEnd end;                      // only what DecidePass reads: view_seq and accounting
  std::shared_ptr<const FamilyView> view;  // null: the family had no version yet (or changes)
  // View versions the scan trimmed: freed by the deciding thread after the pass, so that the
  // scanning thread does not spend its time freeing objects.
  std::vector<std::shared_ptr<const FamilyView>> released;
  // With changes (Engine::changes_): the family changes folded since the previous task, in seq
  // order; the deciding thread applies each family's to its own FamilyView (FamilyState).
  std::vector<FamilyChange> changes;
};

// A family as the deciding thread of a replay with changes holds it: its FamilyView, brought up
// to a pass's view_seq by applying the changes queued for it, in seq order.
struct FamilyState {
  FamilyView view;
  bool any = false;      // a change was applied (else the family had no version yet)
  uint64_t applied = 0;  // the seq of the last change applied
  std::deque<FamilyChange> pending;
  // Applies the pending changes up to `seq`, decoding their objects with `history` (the changes
  // come with the decode deferred). False when a change after `seq` was already applied (a pass
  // reading an older view than a previous one: the versions are gone).
  bool AdvanceTo(uint64_t seq, const ViewHistory& history) {
    if (applied > seq) return false;
    while (!pending.empty() && pending.front().seq <= seq) {
      applied = pending.front().seq;
      history.DecodeDeferred(&pending.front());
      ApplyFamilyChange(std::move(pending.front()), &view);
      pending.pop_front();
      any = true;
    }
    return true;
  }
};

// The passes of a verify-only replay (no observer, no what-if) are decided on a second thread
// while the scan goes on. One thread takes them in the order the scan pushed them (log order),
// so every result is what the sequential replay computes, whatever the timing.
class PassQueue {
 public:
  void Push(PassTask&& t) {
    pending_.push_back(std::move(t));
    if (pending_.size() >= kBatch) Flush();
  }
  void Close() {
    Flush();
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
    ready_.notify_one();
  }
  // The next batch in order; false once closed and drained.
  bool Take(std::vector<PassTask>* out) {
    std::unique_lock<std::mutex> l(mu_);
    ready_.wait(l, [&] { return !batches_.empty() || closed_; });
    if (batches_.empty()) return false;
    *out = std::move(batches_.front());
    batches_.pop_front();
    space_.notify_one();
    return true;
  }

 private:
  static constexpr size_t kBatch = 64;
  static constexpr size_t kMaxBatches = 64;  // bounds the memory the scan can run ahead by
  void Flush() {
    if (pending_.empty()) return;
    std::unique_lock<std::mutex> l(mu_);
    space_.wait(l, [&] { return batches_.size() < kMaxBatches; });
    batches_.push_back(std::move(pending_));
    pending_.clear();
    ready_.notify_one();
  }
  std::vector<PassTask> pending_;  // the scan thread's
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<std::vector<PassTask>> batches_;
  bool closed_ = false;
};

// The recorded decision records of a verify-only replay as stored (not decoded), read on their own
// thread and taken in log order by the thread that decides. Bounded: the reader waits while
// kMaxBatches are unread.
class RecordedStream {
 public:
  // The reader thread: every record of the source, then the end.
  Status Read(RecordSource& source);
  enum Next { kRecord, kNotYet, kEnd };
  // The next record in log order. kEnd at the end (or once Stop() was called); kNotYet when it
  // is not read yet and `wait` is false. Never waits while `wait` is false: a source may serialize
  // the two scans (a read-only ledger catching up), so the input scan must not wait for this one.
  Next Take(bool wait, uint64_t* seq, std::string_view* bytes) {
    if (pos_ == cur_.seqs.size()) {
      const Next n = NextBatch(wait);
      if (n != kRecord) return n;
    }
    *seq = cur_.seqs[pos_];
    const uint32_t begin = pos_ == 0 ? 0 : cur_.ends[pos_ - 1];
    *bytes = std::string_view(cur_.bytes).substr(begin, cur_.ends[pos_] - begin);
    ++pos_;
    return kRecord;
  }
  // The consumer gives up: the reader stops at its next record.
  void Stop();

 private:
  struct Batch {
    std::string bytes;           // the records, back to back
    std::vector<uint32_t> ends;  // where each ends in `bytes`
    std::vector<uint64_t> seqs;
  };
  static constexpr size_t kBatch = 1024;
  static constexpr size_t kMaxBatches = 64;
  Next NextBatch(bool wait);
  void Publish(Batch&& b);

  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<Batch> batches_;
  bool done_ = false;
  bool stopped_ = false;
  Batch cur_;  // the consumer's
  size_t pos_ = 0;
};

// The comparison of a verify-only replay (ReplayOptions::verify_only), on its own thread: the scan
// hands over the derived decisions in stream order, in batches; this thread hashes each once
// (one chain: the streams are equal while the fast verify holds) and compares it with the next
// recorded record by their stored bytes; a recorded record whose bytes differ and that belongs to
// another pass is passed over (decoded, checked against the final selection by the engine).
// The matching thread never waits for the decision reader while the scan runs (a source may
// serialize the two scans); the scan waits only while kMaxBatches batches are unmatched.
class StreamVerifier {
 public:
  explicit StreamVerifier(RecordSource& source);
  ~StreamVerifier();
  // The scan thread: the next derived decision (cause filled, seq 0).
  void Add(model::Decision&& d) {
    batch_.push_back(std::move(d));
    if (batch_.size() == kBatch) Flush();
  }
  // A difference was found: the fast verify does not hold (the scan may stop).
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  // After the input scan: matches the rest. True when every derived decision matched a recorded
  // record; then passed_over() holds the recorded decisions that did not, which the full replay
  // must not compare either.
  bool Finish();
  const std::vector<model::Decision>& passed_over() const { return passed_over_; }
  const DecisionDigest& digest() const { return digest_; }
  uint64_t recorded_records() const { return records_; }

 private:
  static constexpr size_t kBatch = 256;
  static constexpr size_t kMaxBatches = 64;
  void Flush();
  void Close();
  void Match();                  // the matching thread
  void MatchPending(bool wait);  // pending_ against the recorded records read so far
  void Fail() { failed_.store(true, std::memory_order_relaxed); }

  RecordedStream stream_;
  Status read_status_;
  std::thread reader_, matcher_;
  std::atomic<bool> failed_{false};
  std::vector<model::Decision> batch_;  // the scan thread's
  std::mutex mu_;
  std::condition_variable ready_, space_;
  std::deque<std::vector<model::Decision>> batches_;
  bool closed_ = false;
  // The matching thread's (read by the others after it is joined).
  // Hashed, not matched yet: whole batches as handed over (no move per decision), the first
  // pending_pos_ decisions of the front one matched already.
  std::deque<std::vector<model::Decision>> pending_;
  size_t pending_pos_ = 0;
  std::vector<model::Decision> passed_over_;
  DecisionDigest digest_;
  uint64_t records_ = 0;
  std::string canonical_, encoded_;  // scratch
};

class Engine {
 public:
  Engine(RecordSource& source, const ReplayOptions& options, ReplayObserver* observer)
      : source_(source),
        options_(options),
        observer_(observer),
        // Recorded passes without observers never encode a Job of the view.
        history_(MakeFilter(options), observer == nullptr && options.what_if.empty()),
        fast_(options.verify_only && observer == nullptr && options.what_if.empty()) {}
  Result<ReplayResult> Run();
  // A verify-only run (ReplayOptions::verify_only, no what-if, no observer) that found a
  // difference: its result is not to be used, the full replay decides.
  bool fast_failed() const { return fast_failed_; }

 private:
  static std::function<bool(std::string_view, std::string_view)> MakeFilter(const ReplayOptions& o);
  // engine.cc: the input scan.
  Status OnInput(const store::LogRecord& rec);
  Status OnConfig(const model::ConfigChange& c);
  Status OnIntent(uint64_t seq, const model::ActionIntent& i);
  Status OnOutcome(uint64_t seq, const model::ActionOutcome& o);
  Status OnPassEnd(uint64_t seq, const model::PassEnd& e);
  Status Seed(const model::PassEnd& e);
  void Progress(bool done);

  // engine_pass.cc: deciding.
  void ReplayPass(uint64_t tick_seq, OpenPass& p, const model::PassEnd& e);
  // `key`: the pass's family, "ns/name" (FamilyKey of its Tick).
  void DecidePass(const std::string& key, uint64_t tick_seq, OpenPass& p, const model::PassEnd& e,
                  const FamilyView* view);
  // The deciding thread of a pipelined replay.
  void DecideQueued();
  void Synthesize(const std::string& key, Time until, const OpenPass& p);
  void RunPass(const std::string& key, PassSummary summary, const FamilyView& view, OpenPass& p,
               const std::string& recorded_accounting);
  // The family's cached SyncInput brought up to `view` (what-if overrides applied).
  reconciler::SyncInput& InputFor(const std::string& key, const FamilyView& view);
  // The pass with its recorded outcomes (in.outcomes).
  reconciler::SyncResult DecideRecorded(const reconciler::SyncInputRef& in, PassSummary* summary);
  reconciler::SyncResult DecideWhatIf(reconciler::SyncInput in, const OpenPass& p,
                                      const FamilyView& view);

  // engine_compare.cc: the recorded stream and the comparison.
  // Reads the whole decision log (on its own thread, during the input scan).
  Status ReadRecorded(std::vector<model::Decision>* out);
  // Keeps the recorded decisions the replay compares (after the input scan).
  void SelectRecorded(std::vector<model::Decision>&& all);
  void Compare();
  // Whether a recorded decision is compared with the derived stream (after the input scan).
  bool Selected(const model::Decision& d) const;
  // Verify-only, after the input scan: whether every recorded decision the full replay would
  // compare matched (fast_failed_ otherwise).
  void FinishFast();

  RecordSource& source_;
  const ReplayOptions& options_;
  ReplayObserver* observer_;
  ViewHistory history_;
  ReplayResult result_;

  std::map<std::string, std::unique_ptr<model::TimeZoneDb>> tzdbs_;  // by Local zone name
  const model::TimeZoneDb* tzdb_ = nullptr;
  // Parsed schedules of the passes (by text and tzdbs_ entry: declared after tzdbs_, so it goes
  // first). Thread-safe (Synthesize and the deciding thread may both use it).
  reconciler::ScheduleMemo schedule_memo_;
  // With passes decided on the second thread: versions trimmed since the last queued pass,
  // handed to the next one (PassTask::released).
  std::vector<std::shared_ptr<const FamilyView>> released_;
  // Passes decided on the second thread without a label selector: the view is not versioned on
  // the scanning thread; Fold's changes go into changes_ (objects not decoded yet) and with the
  // next task to the deciding thread, which decodes them and keeps each family in families_ (its
  // own, until it is joined).
  bool changes_mode_ = false;
  std::vector<FamilyChange> changes_;
  std::unordered_map<std::string, FamilyState> families_;
  bool history_cleanup_ = true;
  std::map<uint64_t, OpenPass> open_;                    // by tick seq
  std::unordered_map<uint64_t, uint64_t> intent_tick_;   // unanswered intent seq -> tick seq
  SeqSet all_ticks_;                                     // every Tick seq seen
  SeqSet replayed_ticks_;                                // ticks of replayed passes
  std::unordered_set<std::string> label_selected_;       // families a selector chose at a Tick
  std::unordered_map<std::string, ChainEntry> chain_;    // by "ns/name"
  std::unordered_map<std::string, CachedInput> inputs_;  // by "ns/name" (what-if passes)
  std::vector<const model::Job*> jobs_;                  // the Jobs of the pass being decided
  // Set when passes are decided on the second thread (verify-only replays): chain_, result_'s
  // passes and derived decisions, jobs_ then belong to that thread until it is joined.
  std::unique_ptr<PassQueue> queue_;
  uint64_t records_ = 0;
  uint64_t total_ = 0;
  // Verify-only (fast_): the comparison on its own thread.
  bool fast_ = false;
  std::atomic<bool> fast_failed_{false};  // also set by the deciding thread
  std::unique_ptr<StreamVerifier> verifier_;
};

}  // namespace cronledger::replay::internal
