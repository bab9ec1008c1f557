#pragma once

// The ledger (docs/design.md §1 rules 1, 3, 5): a durable input log, the materialized view folded
// from it, the decision log with its audit indexes, a quarantine and meta data, in one RocksDB. The
// layout is documented in docs/ledger.md. No RocksDB type appears here (pimpl).
//
// Thread safety: every method may be called from any thread. Commit() is group-committed:
// concurrent callers are written by one leader in one WriteBatch and share one fsync.
// Lifetime: a Ledger owns its database; all iterators and snapshots are internal to calls and
// released before they return, so destroying the Ledger is always safe once no call is running.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/decision.h"
#include "model/inputs.h"
#include "model/objects.h"
#include "model/result.h"
#include "model/time.h"
#include "store/view.h"

namespace cronledger::store {

// When a committed unit of work reaches the disk (fsync of the write-ahead log).
enum class SyncMode {
  kAlways,  // Commit() returns after the fsync that covers it (shared by a commit group)
  kBatch,   // Commit() returns after the write; an fsync follows within sync_window or
            // sync_max_records, whichever comes first. A process crash loses nothing; a machine
            // crash loses at most that window.
  kNone,    // no explicit fsync: the OS writes back when it likes (tests, throwaway ledgers)
};
Result<SyncMode> ParseSyncMode(std::string_view s);  // "always" | "batch" | "none"
std::string_view SyncModeName(SyncMode m);

// A wall-clock source, injected so tests control record times (retention is by age).
class WallClock {
 public:
  virtual ~WallClock() = default;
  virtual Time Now() const = 0;
};
// The system clock (the default when LedgerOptions::clock is null).
const WallClock& SystemWallClock();

struct LedgerOptions {
  // The RocksDB directory; created when missing. Required.
  std::string path;
  // Default: SyncMode::kBatch.
  SyncMode sync = SyncMode::kBatch;
  // kBatch: the longest time a committed unit stays without fsync. Default: 2 ms.
  Duration sync_window = std::chrono::milliseconds(2);
  // kBatch: fsync as soon as this many records (inputs + decisions) are unsynced. Default: 4096.
  uint64_t sync_max_records = 4096;
  // Commit groups stop growing at this many bytes of WriteBatch. Default: 8 MiB.
  size_t max_group_bytes = 8u << 20;
  // Stamps every appended record (its age for retention). Default: null = the system clock. Must
  // outlive the Ledger.
  const WallClock* clock = nullptr;
  // Create the database when it does not exist. Default: true. Ignored when read_only.
  bool create_if_missing = true;
  // Open without the write lock, as a RocksDB secondary instance that follows the writer (a running
  // `cronledger run` or `ingest` may hold the store open, in this process or another). The ledger
  // must exist (NotFound otherwise; nothing is created). Every write path (Commit, Rebuild with
  // repair, ApplyRetention, Backup) fails with FailedPrecondition("ledger opened read-only"). The
  // instance catches up with the writer on Open, on Refresh(), and before a read call when the
  // last catch-up is older than read_only_refresh. Default: false.
  bool read_only = false;
  // read_only: the longest a read call serves without catching up first. Zero (the default)
  // catches up before every read call (a directory listing and the new WAL/MANIFEST tail).
  // Duration::max(): only on Open and Refresh() — every read sees the ledger as of that
  // catch-up, which is what a replay or an export wants (its scans see the same units).
  // A catch-up waits for the reads in progress on other threads to end, so a thread must not
  // wait, inside a read, for another thread's read of the same read-only ledger (two scans
  // that feed each other) unless this is Duration::max().
  Duration read_only_refresh = Duration::zero();
  // read_only: the instance's private directory (its info log); created and removed by the
  // ledger. Default: empty = a fresh "cronledger-ro-XXXXXX" under $TMPDIR (or /tmp).
  std::string secondary_dir;
  // Memory. The block cache shared by every column family, in bytes. Default: 64 MiB.
  size_t block_cache_bytes = 64u << 20;
  // The memtables (write buffers) of all column families together: when nonzero, one RocksDB
  // WriteBufferManager with this budget is shared by every column family, flushing the largest
  // memtable when the total would exceed it, and each family's write buffer is at most a quarter
  // of it. Zero (the default) keeps RocksDB's per-family defaults: a 64 MiB write buffer, up to
  // two per family, for each of the ledger's ten column families (up to ~1.3 GiB). Neither
  // setting changes what is written; a smaller budget means smaller, more frequent flushes.
  size_t write_buffer_budget_bytes = 0;
  // Raw bytes over 64 KiB are stored as content-defined chunks, each kept once however many
  // versions of an object share it (raw format 3, docs/ledger.md "Raw bytes"). false stores every
  // object whole in format 2 (a benchmark's peer); reading handles both either way. Default: true.
  bool chunk_large_raw = true;
  // Test hook: called by a commit leader after it formed its group and before it writes it. Lets
  // a test hold the leader while followers queue up. Default: empty.
  std::function<void()> before_group_write;
  // Test hook: called by a commit group right before its RocksDB write (prepared, in group order,
  // outside the ledger's locks); a non-OK status fails the group as a failed write would. Lets a
  // test hold a write while the next group prepares, or fail it. Default: empty.
  std::function<Status()> group_write_hook;
  // Test hook: called by the audit indexer before each batch it indexes, outside the ledger's
  // locks; a non-OK status fails the batch as a failed index write would. Lets a test hold the
  // index behind the commits, or fail it. Default: empty.
  std::function<Status()> before_index_batch;
};

// Where a source has been read up to; committed in the same batch as the inputs it covers.
struct SourcePosition {
  std::string source;    // e.g. "file:/abs/path", "stdin", "kafka:topic/partition"
  std::string position;  // opaque to the ledger, e.g. "offset=123 line=4 hash=..."
  friend bool operator==(const SourcePosition&, const SourcePosition&) = default;
};

// A rejected input (rule 5): kept with the reason, where it came from, and its raw bytes.
struct QuarantineEntry {
  uint64_t id = 0;  // assigned at commit, increasing
  Time recorded_at;
  std::string reason;
  std::string source;  // e.g. "events.jsonl:17" or "topic/3/1200"
  std::string raw;
  friend bool operator==(const QuarantineEntry&, const QuarantineEntry&) = default;
};

// Everything one unit of work appends, committed atomically in one WriteBatch.
struct UnitOfWork {
  // Appended to the input log in order; watch events are folded into the view. An ActionIntent or
  // PassEnd whose tick_seq is 0 gets the seq of the last Tick before it in `inputs` (0 when none),
  // so a pass can commit its Tick together with its first intent or its end.
  std::vector<model::Input> inputs;
  // Appended to the decision log in order (seq assigned). A decision whose cause.tick_seq is 0 gets
  // the seq of the last Tick in `inputs`, and then a zero cause.input_seq gets tick_seq - 1.
  std::vector<model::Decision> decisions;
  std::vector<QuarantineEntry> quarantine;
  // Per-CronJob controller state blobs ("ns/name" -> bytes); an empty optional deletes.
  std::vector<std::pair<std::string, std::optional<std::string>>> controller_state;
  std::vector<SourcePosition> positions;
  // When not empty, one per input: the recorded time of each instead of the ledger's clock (a
  // copy of another ledger, `cronledger audit-store`, keeps the times its source recorded); any
  // other size is InvalidArgument. Default: empty.
  std::vector<Time> recorded_at;
  // The raw bytes of `inputs`' watch events as the ledger stores them (compressed, versioned;
  // docs/ledger.md "Raw bytes"), one per input: empty for other inputs and for events without raw
  // bytes. Filled by PrepareUnit(); Commit() prepares a unit whose stored_raw does not have one
  // entry per input. Callers only call PrepareUnit() and leave it alone otherwise.
  std::vector<std::string> stored_raw;
  // Called by Commit() on the caller's thread once the unit has its place in the commit queue
  // (before Commit waits for it): a unit that another thread commits after this call is ordered
  // after this one. Lets one appender keep two commits in flight (ingest). Default: empty.
  std::function<void()> on_queued;
};

// Compresses the raw bytes of `unit`'s watch events into unit->stored_raw (the inputs stay as
// they are), so that this work runs on the calling thread (an ingest decoder, an appender before
// it queues) and not in the commit group's serial part. Commit() does it on the committing
// caller's thread, before queueing, for a unit that is not prepared. Call it after the inputs are
// final; it recomputes stored_raw from scratch.
void PrepareUnit(UnitOfWork* unit);

struct CommitResult {
  uint64_t first_input_seq = 0;  // 0 when the unit had no inputs
  uint64_t last_input_seq = 0;
  uint64_t first_decision_seq = 0;
  uint64_t last_decision_seq = 0;
};

// One record of the input log.
struct LogRecord {
  uint64_t seq = 0;
  Time recorded_at;
  model::Input input;       // WatchEvent::raw is filled only when scanning with_raw
  bool raw_pruned = false;  // retention removed the raw bytes of this watch event
};

// One input record as the ledger stores it, for the audit trail (replay/trail.h): the bytes are
// valid only during the scan's callback.
struct StoredInput {
  uint64_t seq = 0;
  Time recorded_at;
  bool raw_pruned = false;  // retention removed the raw bytes of this watch event
  // The model encoding exactly as stored (model::EncodeInput; watch events without raw bytes).
  std::string_view record;
  bool has_raw = false;  // a watch event whose raw object bytes are stored
  std::string_view raw;  // those bytes, decompressed (empty when !has_raw)
};

struct LedgerMeta {
  int schema_version = 0;
  uint64_t last_input_seq = 0;  // also the last seq folded into the view
  uint64_t last_decision_seq = 0;
  uint64_t quarantine_count = 0;
};

struct CommitStats {
  uint64_t units = 0;     // Commit() calls that succeeded
  uint64_t groups = 0;    // WriteBatches written (one per leader turn)
  uint64_t prepared = 0;  // groups whose batch was built (written, failed or about to be written)
  uint64_t syncs = 0;     // fsyncs issued (synced writes + SyncWAL)
  size_t queued = 0;      // units waiting or being written right now
  // Where commit groups spent their time (steady clock, summed over groups): preparing the batch
  // (seqs, records, the fold into the view) and writing it (RocksDB write, with kAlways its
  // fsync). Benchmarks print them.
  uint64_t prepare_nanos = 0;
  uint64_t write_nanos = 0;
};

// One CronJob with its Jobs, read from one consistent snapshot (what decide() takes).
struct CronJobView {
  ObjectEntry cron_job_entry;
  model::CronJob cron_job;
  std::vector<model::Job> jobs;  // Jobs whose controller owner is this CronJob's name, by name
  uint64_t last_input_seq = 0;   // the view reflects the log up to here
};

// How many decisions the audit index scans took from the index entries alone and how many they
// read from the decision log (one point read each), since the ledger was opened. Lets a test show
// that a query is covered by its index.
struct DecisionReadStats {
  uint64_t index_entries = 0;  // audit index entries visited by DecisionsBy* and Decision*ByCronJob
  uint64_t from_index = 0;     // decisions decoded from a CronJob index value (no point read)
  uint64_t log_reads = 0;      // decisions read from the decision log by seq (point reads)
  uint64_t template_reads = 0;  // Job templates read for whole records (one per distinct
                                // template of a DecisionsByCronJob call)
  uint64_t tail_reads = 0;      // decisions read from the decision log past the index's watermark
                                // (committed, not indexed yet)
};

struct RetentionOptions {
  // Watch events older than this lose their raw bytes (the normalized record stays). Zero keeps
  // them forever. Default: 0 (an audit store keeps everything).
  Duration raw_max_age{0};
  // Input records older than this are deleted. Zero keeps them forever. Default: 0.
  Duration log_max_age{0};
  // Report what would be deleted and delete nothing (allowed on a read-only ledger).
  bool dry_run = false;
};

struct RetentionReport {
  uint64_t raw_deleted = 0;
  uint64_t inputs_deleted = 0;
  uint64_t pinned = 0;  // old records kept because the view still points at them
  // Old records kept because the store has an audit trail that has not chained them yet
  // (store/trail_store.h): `cronledger retention` brings the trail up to date first.
  uint64_t unchained = 0;
  bool dry_run = false;  // the counts are what a real run would delete; nothing was deleted
};

// One difference between the stored view or audit index and a rebuild from the logs.
struct ViewDifference {
  std::string key;      // readable key, e.g. "cronjob prod/backup"
  std::string stored;   // readable stored value, "" when missing
  std::string rebuilt;  // readable rebuilt value, "" when missing
};

struct RebuildReport {
  uint64_t records_folded = 0;
  uint64_t view_entries = 0;
  // The audit index, recomputed from the decision log and compared with the stored one: the
  // decisions checked (those the index covers), their entries, and the entries stored in an
  // older layout that read back as the same decision (rewritten in today's by a repair; not a
  // difference). A read-only ledger checks the decisions its writer had indexed.
  uint64_t decisions_indexed = 0;
  uint64_t index_entries = 0;
  uint64_t index_older_layout = 0;
  std::vector<ViewDifference> differences;  // empty: the view and the index equal the rebuild
  bool repaired = false;
};

class Ledger {
 public:
  virtual ~Ledger() = default;

  // Opens (or creates) a RocksDB ledger. InvalidArgument for a bad path, FailedPrecondition for a
  // schema version this build cannot read, IoError when RocksDB fails (e.g. the lock is held).
  static Result<std::unique_ptr<Ledger>> Open(const LedgerOptions& options);

  // Appends a unit of work atomically and folds its watch events into the view. Returns when the
  // unit is written (and, with SyncMode::kAlways, fsynced). Either all of it is visible or none.
  virtual Result<CommitResult> Commit(UnitOfWork unit) = 0;

  // --- the view ---
  // NotFound when absent.
  virtual Result<model::CronJob> GetCronJob(std::string_view ns, std::string_view name) = 0;
  virtual Result<ViewObject> GetObject(model::ObjectKind kind, std::string_view ns,
                                       std::string_view name) = 0;
  // Jobs whose controller owner reference names `owner` in `ns`, ordered by name.
  virtual Result<std::vector<model::Job>> ListJobsByOwner(std::string_view ns,
                                                          std::string_view owner) = 0;
  virtual Result<std::vector<ObjectEntry>> ListCronJobEntries() = 0;
  virtual Result<std::vector<model::CronJob>> ListCronJobs() = 0;
  // A CronJob and its Jobs from one snapshot. NotFound when the CronJob is absent.
  virtual Result<CronJobView> ReadCronJobView(std::string_view ns, std::string_view name) = 0;
  // Every object the view holds, each entry with its raw bytes (CronJobs, then Jobs, by key), from
  // one snapshot; stops at `fn`'s first error and returns it. Returns the last input seq of that
  // snapshot. A reader that keeps its own copy of the view loads it with this.
  virtual Result<uint64_t> ScanViewObjects(const std::function<Status(ViewObject object)>& fn) = 0;
  // The object bytes of watch event input `seq`, as received: NotFound when that input has none
  // (another input, a bookmark, or bytes retention removed).
  virtual Result<std::string> GetInputRaw(uint64_t seq) = 0;
  // The last resourceVersion seen for a resource ("batch/v1/CronJob"); NotFound when none.
  virtual Result<std::string> GetResourceVersion(std::string_view resource) = 0;
  // The controller state blob of a CronJob ("ns/name"); NotFound when none.
  virtual Result<std::string> GetControllerState(std::string_view key) = 0;

  // --- logs ---
  // Calls fn for input records with seq >= from_seq in order until fn returns false.
  virtual Status ScanInputs(uint64_t from_seq, bool with_raw,
                            const std::function<bool(const LogRecord&)>& fn) = 0;
  // Calls fn(seq, event) for the watch events of the input log with seq >= from_seq, in order,
  // until fn returns false; other records are skipped. The event's fields view the stored record
  // and are valid only during the call: nothing is copied (what Rebuild folds). The default
  // implementation scans with ScanInputs: a class that wraps a Ledger should forward it.
  virtual Status ScanWatchEvents(
      uint64_t from_seq, const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn);
  // ScanWatchEvents with the same calls and result, the log read ahead: the RocksDB ledger
  // iterates it on a second thread while fn runs on the caller's, so on two cores reading and
  // folding overlap (what Rebuild does). For long scans: it starts a thread. The default calls
  // ScanWatchEvents.
  virtual Status ScanWatchEventsReadAhead(
      uint64_t from_seq, const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn);
  virtual Status ScanDecisions(uint64_t from_seq,
                               const std::function<bool(const model::Decision&)>& fn) = 0;
  // Calls fn for input records with seq >= from_seq in order until fn returns false, each as
  // stored (StoredInput), from one consistent read. The default implementation re-encodes what
  // ScanInputs decodes: a class that wraps a Ledger should forward it.
  virtual Status ScanStoredInputs(uint64_t from_seq,
                                  const std::function<bool(const StoredInput&)>& fn);
  // Calls fn(seq, bytes) for the decision records with seq >= from_seq in order until fn returns
  // false: `bytes` is the record as stored (model::EncodeDecisionRecord's format), not decoded,
  // valid only during the call (what replay --verify compares). The default implementation
  // encodes what ScanDecisions decodes: a class that wraps a Ledger should forward it.
  virtual Status ScanDecisionBytes(uint64_t from_seq,
                                   const std::function<bool(uint64_t, std::string_view)>& fn);
  // Index scans over decision time in [from, to), oldest first, at most `limit` (0 = no limit).
  // DecisionsByCronJob: the RocksDB ledger serves whole records from the CronJob index entries
  // (v2 values hold the Json members, a Job object as a reference to its CronJob's Job template
  // plus what differs) with one sequential range read and one read per distinct template; entries
  // of older layouts read what they lack from the decision log (store/cronjob_index.h).
  virtual Result<std::vector<model::Decision>> DecisionsByCronJob(std::string_view ns,
                                                                  std::string_view name, Time from,
                                                                  Time to, size_t limit) = 0;
  // DecisionsByCronJob without the Json members: job_object and status are null in every result.
  // The RocksDB ledger serves it from the CronJob index entries alone, one sequential range read
  // with no read of the decision log (entries written before index values existed are read from
  // the log). The default calls DecisionsByCronJob and drops them: a wrapper should forward it.
  virtual Result<std::vector<model::Decision>> DecisionSummariesByCronJob(std::string_view ns,
                                                                          std::string_view name,
                                                                          Time from, Time to,
                                                                          size_t limit);
  // `action` and/or `reason` (empty = any); both empty scans the time index.
  virtual Result<std::vector<model::Decision>> DecisionsByActionReason(
      std::optional<model::DecisionAction> action, std::string_view reason, Time from, Time to,
      size_t limit) = 0;
  // The names of the CronJobs of `ns` that have decisions, in name (byte) order: every name in the
  // CronJob index (`c` ns name ...), also CronJobs the view no longer holds (deleted). The
  // RocksDB ledger skip-scans that index, one seek per name, in one consistent read. The default
  // scans the whole decision log (correct, slow): a class that wraps a Ledger should forward it.
  virtual Result<std::vector<std::string>> DecisionCronJobNames(std::string_view ns);
  // Quarantined entries with id >= from_id, at most `limit` (0 = no limit).
  virtual Result<std::vector<QuarantineEntry>> ListQuarantine(uint64_t from_id, size_t limit) = 0;

  // --- meta ---
  virtual Result<LedgerMeta> Meta() = 0;
  // NotFound when the source never committed a position.
  virtual Result<std::string> GetSourcePosition(std::string_view source) = 0;
  virtual CommitStats Stats() const = 0;
  // OK while commits can be written. Once a write or an fsync has failed (a full disk, an I/O
  // error), that failure: nothing more is written — every later Commit() returns it without
  // touching the disk — until the ledger is reopened. Thread-safe.
  virtual Status WriteHealth() const { return Status::Ok(); }
  // Counters of the audit index reads (all zero for a ledger that does not keep them).
  virtual DecisionReadStats DecisionReads() const { return {}; }
  // An estimate of how many keys the view holds (0 when unknown), for sizing a scratch view
  // before a fold of the whole log (Rebuild, benchmarks). Not exact: RocksDB's estimate.
  virtual uint64_t EstimatedViewKeys() { return 0; }
  // A read-only ledger catches up with its writer now: afterwards every unit of work the writer
  // had committed is visible (each all or nothing). A writable ledger is always current (no-op).
  // Not callable from inside a ScanInputs/ScanDecisions callback (FailedPrecondition).
  virtual Status Refresh() { return Status::Ok(); }
  // The audit index is maintained from the decision log behind the commit (docs/ledger.md "The
  // audit index"); every query sees every committed decision either way. Returns once the index
  // holds every decision committed before the call, or the indexer's failure: for tests and
  // benchmarks that count what a query read from the index. A read-only ledger and the default:
  // OK at once.
  virtual Status SyncAuditIndex() { return Status::Ok(); }

  // --- the audit trail's state (store/trail_store.h: keys under `trail/` in `meta`) ---
  // Calls fn(key, value) for the trail keys that start with `prefix`, in key order, from the
  // first key >= from_key, until fn returns false. InvalidArgument unless prefix starts with
  // "trail/". The default: FailedPrecondition (a ledger without trail state).
  virtual Status ScanTrail(std::string_view prefix, std::string_view from_key,
                           const std::function<bool(std::string_view, std::string_view)>& fn);
  // The value of one trail key; NotFound when absent. The default: NotFound.
  virtual Result<std::string> GetTrail(std::string_view key);
  // Writes `puts` in one synced batch (all or nothing), excluding retention while it runs.
  // InvalidArgument for a key outside "trail/"; FailedPrecondition on a read-only ledger (and
  // by default).
  virtual Status WriteTrail(const std::vector<std::pair<std::string, std::string>>& puts);

  // --- maintenance ---
  // Folds the whole input log into a scratch view with the live fold and compares it with the
  // stored view; recomputes the audit index entries of every decision from the decision log and
  // compares them with the stored ones. With `repair` replaces what differs by the rebuild (and
  // rewrites index entries of an older layout). Commits are blocked while it runs.
  virtual Result<RebuildReport> Rebuild(bool repair) = 0;
  // A consistent RocksDB checkpoint of the live database in `dir` (must not exist; hard links
  // where possible). Safe while commits run.
  virtual Status Backup(const std::string& dir) = 0;
  // Deletes what the retention options allow at `now`, never what the view points at. When the
  // store has an audit trail of its inputs (store/trail_store.h), a record is deleted or pruned
  // only once the trail holds its entry, and a deleted record's entry is marked removed by
  // retention in the same batch.
  virtual Result<RetentionReport> ApplyRetention(const RetentionOptions& options, Time now) = 0;
};

}  // namespace cronledger::store
