#pragma once

// RocksDbLedger: the Ledger on RocksDB. Internal to store/ (RocksDB types stay out of ledger.h).

#include <rocksdb/db.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "store/cronjob_index.h"
#include "store/ledger.h"
#include "store/raw_chunks.h"

namespace cronledger::store {

// Column families, in the order they are opened (docs/ledger.md).
enum Cf : size_t {
  kDefaultCf = 0,
  kInputsCf,
  kRawCf,
  kViewCf,
  kStateCf,
  kDecisionsCf,
  kAuditCf,
  kQuarantineCf,
  kMetaCf,
  // Added after the others: a read-only open of a store written before it opens without it.
  kChunksCf,
  kCfCount,
};
const char* CfName(Cf cf);

// Converts a RocksDB status into ours (once, at the adapter boundary).
Status FromRocks(const rocksdb::Status& s, std::string_view context);

class RocksDbLedger final : public Ledger {
 public:
  static Result<std::unique_ptr<Ledger>> OpenImpl(const LedgerOptions& options);
  ~RocksDbLedger() override;

  Result<CommitResult> Commit(UnitOfWork unit) override;

  Result<model::CronJob> GetCronJob(std::string_view ns, std::string_view name) override;
  Result<ViewObject> GetObject(model::ObjectKind kind, std::string_view ns,
                               std::string_view name) override;
  Result<std::vector<model::Job>> ListJobsByOwner(std::string_view ns,
                                                  std::string_view owner) override;
  Result<std::vector<ObjectEntry>> ListCronJobEntries() override;
  Result<std::vector<model::CronJob>> ListCronJobs() override;
  Result<CronJobView> ReadCronJobView(std::string_view ns, std::string_view name) override;
  Result<uint64_t> ScanViewObjects(const std::function<Status(ViewObject object)>& fn) override;
  Result<std::string> GetInputRaw(uint64_t seq) override;
  Result<std::string> GetResourceVersion(std::string_view resource) override;
  Result<std::string> GetControllerState(std::string_view key) override;

  Status ScanInputs(uint64_t from_seq, bool with_raw,
                    const std::function<bool(const LogRecord&)>& fn) override;
  Status ScanWatchEvents(
      uint64_t from_seq,
      const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn) override;
  uint64_t EstimatedViewKeys() override;
  Status ScanWatchEventsReadAhead(
      uint64_t from_seq,
      const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn) override;
  Status ScanDecisions(uint64_t from_seq,
                       const std::function<bool(const model::Decision&)>& fn) override;
  Status ScanStoredInputs(uint64_t from_seq,
                          const std::function<bool(const StoredInput&)>& fn) override;
  Status ScanTrail(std::string_view prefix, std::string_view from_key,
                   const std::function<bool(std::string_view, std::string_view)>& fn) override;
  Result<std::string> GetTrail(std::string_view key) override;
  Status WriteTrail(const std::vector<std::pair<std::string, std::string>>& puts) override;
  Status ScanDecisionBytes(uint64_t from_seq,
                           const std::function<bool(uint64_t, std::string_view)>& fn) override;
  Result<std::vector<model::Decision>> DecisionsByCronJob(std::string_view ns,
                                                          std::string_view name, Time from, Time to,
                                                          size_t limit) override;
  Result<std::vector<model::Decision>> DecisionSummariesByCronJob(std::string_view ns,
                                                                  std::string_view name, Time from,
                                                                  Time to, size_t limit) override;
  Result<std::vector<model::Decision>> DecisionsByActionReason(
      std::optional<model::DecisionAction> action, std::string_view reason, Time from, Time to,
      size_t limit) override;
  Result<std::vector<std::string>> DecisionCronJobNames(std::string_view ns) override;
  Result<std::vector<QuarantineEntry>> ListQuarantine(uint64_t from_id, size_t limit) override;

  Result<LedgerMeta> Meta() override;
  Result<std::string> GetSourcePosition(std::string_view source) override;
  CommitStats Stats() const override;
  Status WriteHealth() const override;
  DecisionReadStats DecisionReads() const override;
  Status Refresh() override;
  Status SyncAuditIndex() override;

  Result<RebuildReport> Rebuild(bool repair) override;
  Status Backup(const std::string& dir) override;
  Result<RetentionReport> ApplyRetention(const RetentionOptions& options, Time now) override;

 private:
  struct Writer;
  struct Group;
  class GroupView;
  struct Counters {
    uint64_t last_input_seq = 0;
    uint64_t last_decision_seq = 0;
    uint64_t last_quarantine_id = 0;
  };

  // Every read call holds one for its duration. On a writable ledger it is a RocksDB snapshot. A
  // read-only (secondary) instance cannot take snapshots, but it changes only when it catches up
  // with the writer: the scope first catches up when due, then holds catch-ups off until it ends,
  // so the call reads one consistent state. Nested scopes on one thread (a callback reading the
  // ledger) share the outer one.
  class ReadScope {
   public:
    explicit ReadScope(RocksDbLedger* ledger);
    ~ReadScope();
    ReadScope(const ReadScope&) = delete;
    ReadScope& operator=(const ReadScope&) = delete;
    // Not OK when the due catch-up failed; the call must return it.
    const Status& status() const { return status_; }
    const rocksdb::Snapshot* snapshot() const { return snapshot_; }

   private:
    RocksDbLedger* ledger_;
    const rocksdb::Snapshot* snapshot_ = nullptr;
    bool holds_ = false;  // a shared hold on catchup_mu_ (read-only, outermost scope)
    Status status_;
  };

  explicit RocksDbLedger(const LedgerOptions& options);
  Status LoadMeta();
  Status LoadCounters();
  // Read-only: refuses a write path.
  Status CheckWritable(std::string_view what) const;
  // Read-only: TryCatchUpWithPrimary and reload the counters. Caller holds catchup_mu_ exclusively.
  Status CatchUpLocked();
  Status ScanInputsAt(const rocksdb::Snapshot* snapshot, uint64_t from_seq, bool with_raw,
                      const std::function<bool(const LogRecord&)>& fn);
  Status ScanWatchEventsAt(const rocksdb::Snapshot* snapshot, uint64_t from_seq,
                           const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn);
  // store/read_ahead_scan.cc
  Status ScanWatchEventsReadAheadAt(
      const rocksdb::Snapshot* snapshot, uint64_t from_seq,
      const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn);
  // Appends `unit` to `batch`, advancing `next` and filling `result`. Reads the view through
  // `overlay`, which holds the group's earlier writes.
  Status AddUnit(Writer& writer, ViewStore* overlay, rocksdb::WriteBatch* batch, Counters* next,
                 CommitResult* result, Time now);
  // Raw format 3 (store/raw_chunks.h). On the committing caller's thread: the chunks of `unit`
  // that the store holds already though they are not known yet (looked up, into *lookup). In the
  // commit leader: puts a prepared raw value into `batch`, with those of its chunks that are
  // neither known nor found by that lookup. A sweep invalidates lookups made before it ended.
  struct ChunkLookup {
    std::vector<ChunkId> stored;  // found in the store
    uint64_t epoch = 0;           // chunk_epoch_ when looked up
  };
  Status FindStoredChunks(const UnitOfWork& unit, ChunkLookup* lookup);
  Status PutRaw(const ChunkLookup& lookup, const std::string& seq_key, std::string_view prepared,
                rocksdb::WriteBatch* batch);
  // Retention (under ExcludeCommits): deletes the chunks no `raw` value refers to.
  Status SweepChunks();
  Status SweepUnreferencedChunks();
  // Decodes a `raw` value of input `seq`, reading its chunks at `snapshot` (null = latest).
  Status DecodeRaw(uint64_t seq, std::string_view stored, const rocksdb::Snapshot* snapshot,
                   std::string* out);
  // Commit's stages (see Commit in rocksdb_ledger.cc): builds group `g`'s batch (holds
  // maintenance_mu_); marks the groups in flight after `failed_group` and fails the queued units;
  // completes a group's units; wakes the next leader. *Locked: caller holds mu_.
  Status PrepareGroup(Group* g, size_t bytes);
  void FailLaterLocked(uint64_t failed_group, const Status& status);
  void FinishGroupLocked(const Group& g, const Status& status);
  void NotifyNextLocked();
  // Maintenance (rebuild with repair, retention): no commit group prepares or writes while the
  // returned lock is held.
  std::unique_lock<std::mutex> ExcludeCommits();
  Status WriteGroup(rocksdb::WriteBatch* batch, uint64_t records);
  void SyncLoop();

  // The audit indexer (store/audit_indexer.cc): the audit column family is maintained from the
  // decision log behind the commit, by one thread, in batches that carry the seq they index
  // through (keys::kIndexedThrough). Queries read the index up to that seq and the decision log
  // after it, at one snapshot, so they see every committed decision whatever the indexer's lag.
  // StartIndexer: at open (writable), marks a store indexed inline by an older build as indexed
  // through its last decision, then starts the thread, which first indexes what a crash left.
  Status StartIndexer();
  void StopIndexer();
  void IndexLoop();
  // Under mu_, after group `g` is written: its decision records go to the indexer (moved).
  void HandOffToIndexerLocked(Group* g);
  static constexpr size_t kMaxIndexQueueBytes = size_t{64} << 20;
  // Decisions per index batch, and the most the commit hands over before the indexer reads the
  // log instead (a burst the indexer has not caught up with).
  static constexpr size_t kIndexBatch = 1024;
  // Writes the index entries of `records` (seq, the decision record as stored; consecutive seqs)
  // and the watermark in one batch.
  Status IndexBatch(const std::vector<std::pair<uint64_t, std::string>>& records);
  // The seq the audit index covers at `snapshot`; nullopt for a store whose index was written in
  // its commits (no watermark: it covers every decision).
  Result<std::optional<uint64_t>> IndexedThroughAt(const rocksdb::Snapshot* snapshot);
  // The decisions after the index's watermark at `snapshot` that `match`, decoded (Json members
  // dropped with `summary`), in seq order.
  Status TailDecisions(const rocksdb::Snapshot* snapshot,
                       const std::function<bool(const model::Decision&)>& match, bool summary,
                       std::vector<model::Decision>* out);
  Status ScanDecisionBytesAt(const rocksdb::Snapshot* snapshot, uint64_t from_seq,
                             const std::function<bool(uint64_t, std::string_view)>& fn);
  // Rebuild: recomputes the index entries of every indexed decision and compares them with the
  // stored ones (fixes into `fix`).
  Status VerifyIndex(const rocksdb::Snapshot* snapshot, RebuildReport* report,
                     rocksdb::WriteBatch* fix);

  // Reads `key` of `cf` at `snapshot` (null = latest); NotFound when absent.
  Result<std::string> GetRaw(Cf cf, std::string_view key,
                             const rocksdb::Snapshot* snapshot = nullptr);
  // The view entry of an object and its raw bytes.
  Result<ViewObject> GetObjectAt(model::ObjectKind kind, std::string_view ns, std::string_view name,
                                 const rocksdb::Snapshot* snapshot);
  // The raw bytes of input `seq` (NotFound when it has none).
  Status InputRawAt(uint64_t seq, const rocksdb::Snapshot* snapshot, std::string* out);
  // The raw bytes a view entry points at (input `source_seq`'s); their absence is corruption.
  Status ViewedRaw(uint64_t source_seq, const rocksdb::Snapshot* snapshot, std::string* out);
  // Every object entry of the view whose key starts with `prefix` (view_key::kCronJobPrefix or
  // kJobPrefix), in key order; stops at `fn`'s first error.
  Status ForEachViewEntryAt(char prefix, const rocksdb::Snapshot* snapshot,
                            const std::function<Status(ObjectEntry entry)>& fn);
  // The meta record's last input seq (0 when none).
  Result<uint64_t> LastInputSeqAt(const rocksdb::Snapshot* snapshot);
  // The names of the Jobs the view's owner index lists under `owner`, in key order.
  Result<std::vector<std::string>> OwnedJobNamesAt(std::string_view ns, std::string_view owner,
                                                   const rocksdb::Snapshot* snapshot);
  Result<std::vector<model::Job>> JobsByOwnerAt(std::string_view ns, std::string_view owner,
                                                const rocksdb::Snapshot* snapshot);
  // What an index scan takes from the entries' values: nothing (the seq in the key, then the
  // decision log), or a CronJob index value (keys.h) with the whole decision or its summary.
  enum class Cover { kNone, kFull, kSummary };
  // `match` selects the decisions past the index's watermark that the scan's key range would
  // hold (the query, in the decision's terms).
  Result<std::vector<model::Decision>> IndexScan(
      const std::string& prefix, Time from, Time to, size_t limit,
      std::optional<model::DecisionAction> action, Cover cover,
      const std::function<bool(const model::Decision&)>& match);
  // Reads the decisions `wanted` (seq, slot in *out) from the decision log into their slots, with
  // batched point reads; `summary` drops their Json members.
  Status ReadLoggedDecisions(const rocksdb::Snapshot* snapshot,
                             const std::vector<std::pair<uint64_t, size_t>>& wanted, bool summary,
                             std::vector<model::Decision>* out);

  // Restores the Job objects of `templated` (slot in *out, reference) from their templates, read
  // at `snapshot`; a decision whose template is missing goes to *from_log instead.
  Status RestoreTemplatedJobObjects(
      const rocksdb::Snapshot* snapshot,
      const std::vector<std::pair<size_t, cronjob_index::JobObjectRef>>& templated,
      std::vector<model::Decision>* out, std::vector<std::pair<uint64_t, size_t>>* from_log);

  LedgerOptions options_;
  const WallClock* clock_;
  const bool read_only_;
  // Read-only: the secondary instance's own directory (removed on close), catch-ups exclusive
  // with read scopes, and when the last catch-up happened (steady clock nanoseconds).
  std::string secondary_dir_;
  bool remove_secondary_dir_ = false;
  std::shared_mutex catchup_mu_;
  std::atomic<int64_t> last_catchup_ns_{0};
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> cfs_;
  // DecisionReads(): audit index entries visited, decisions taken from index values, point reads
  // of the decision log, Job templates read.
  std::atomic<uint64_t> index_entries_{0};
  std::atomic<uint64_t> from_index_{0};
  std::atomic<uint64_t> log_reads_{0};
  std::atomic<uint64_t> template_reads_{0};
  std::atomic<uint64_t> tail_reads_{0};

  // Pipelined group commit (leader/follower, as leveldb's DBImpl::Write, in two stages): units
  // queue up; the front one leads the next group: prepares it while the previous group writes,
  // then writes it in order and wakes its units. All guarded by mu_.
  mutable std::mutex mu_;
  std::deque<Writer*> queue_;                    // units not yet in a group
  bool preparing_ = false;                       // a leader is preparing a group
  std::shared_ptr<Group> preparing_group_;       // that group
  std::deque<std::shared_ptr<Group>> inflight_;  // prepared, not yet written (at most two)
  uint64_t last_group_id_ = 0;
  size_t pending_units_ = 0;                 // queued, preparing or in flight
  std::condition_variable commits_idle_cv_;  // inflight_ became empty
  Status poisoned_;  // a write or fsync failed: every later Commit fails with this
  // poisoned_ is set: the background fsync stops too. RocksDB must see no further write or sync
  // after a failed one (its WAL writer asserts on a write after an error).
  std::atomic<bool> write_failed_{false};
  Counters committed_;  // guarded by mu_; advanced only after a successful write
  CommitStats stats_;   // guarded by mu_
  // Held while a group prepares; Rebuild(repair) and retention take it through ExcludeCommits().
  std::mutex maintenance_mu_;
  // The audit indexer. The queue holds committed decision records handed over by the commit (at
  // most kMaxIndexQueueBytes; beyond that the indexer reads them back from the decision log).
  // Guarded by index_mu_ (taken after mu_, never before it).
  std::mutex index_mu_;
  std::condition_variable index_cv_;    // work arrived, or stop
  std::condition_variable indexed_cv_;  // indexed_through_ advanced, or the indexer failed
  std::deque<std::pair<uint64_t, std::string>> index_queue_;  // (seq, the record as stored)
  size_t index_queue_bytes_ = 0;
  uint64_t index_target_ = 0;     // the last committed decision seq
  uint64_t indexed_through_ = 0;  // the watermark written last
  bool index_stopping_ = false;
  bool index_sync_wanted_ = false;  // SyncAuditIndex waits: index without lingering
  Status index_status_;             // a failed index write: the ledger writes nothing more
  std::thread index_thread_;
  // The CronJob index values' Job templates (store/cronjob_index.h) and the batches written so
  // far: used by the indexer thread only.
  cronjob_index::JobTemplateWriter job_templates_;
  uint64_t index_batches_ = 0;
  // Chunk ids known to be in the `chunks` column family or in a group prepared before (written
  // before any later group, or the ledger fails every later commit): a chunk is written once.
  // Bounded: when full it starts over, which only costs a lookup per chunk. A sweep clears it and
  // advances chunk_epoch_, which voids the lookups made before the sweep ended. Guarded by
  // chunk_mu_.
  std::mutex chunk_mu_;
  std::unordered_set<ChunkId, ChunkIdHash> known_chunks_;
  uint64_t chunk_epoch_ = 0;

  // SyncMode::kBatch: unsynced records and the background fsync.
  std::mutex sync_mu_;
  // Held around every WAL write and every SyncWAL: RocksDB aborts (an assertion in its WAL
  // writer) when SyncWAL follows a write that failed, so a failed write marks write_failed_
  // before any sync can start, and no sync starts while a write is in progress.
  std::mutex wal_mu_;
  std::condition_variable sync_cv_;
  uint64_t unsynced_records_ = 0;
  std::chrono::steady_clock::time_point first_unsynced_;
  bool stopping_ = false;
  std::atomic<uint64_t> background_syncs_{0};
  std::thread sync_thread_;
};

}  // namespace cronledger::store
