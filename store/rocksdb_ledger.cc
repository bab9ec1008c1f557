#include "store/rocksdb_ledger.h"

#include <pthread.h>
#include <rocksdb/cache.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <rocksdb/write_buffer_manager.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "store/info_log.h"
#include "store/keys.h"
#include "store/raw_codec.h"

namespace cronledger::store {

struct RocksDbLedger::Writer {
  UnitOfWork* unit = nullptr;
  Result<CommitResult> result = Status::Internal("not written");
  bool in_group = false;  // taken from the queue into a commit group
  bool done = false;
  std::condition_variable cv;
  ChunkLookup chunks;  // of the unit's raw values (FindStoredChunks)
  // The unit's decision records as written (AddUnit), for the audit indexer.
  std::vector<std::string> decision_records;
};

namespace {

constexpr std::string_view kSchemaVersion = "1";

class SystemClock final : public WallClock {
 public:
  Time Now() const override {
    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::system_clock::now().time_since_epoch())
                        .count();
    return Time::FromUnix(ns / 1000000000, static_cast<int32_t>(ns % 1000000000));
  }
};

}  // namespace

// The view as the fold sees it during one commit group: the group's own writes, over those of the
// group prepared just before it when that one is not written yet (pipelined commit), over the DB.
// Writes are collected and flushed to the batch once per key at the end of the group.
class RocksDbLedger::GroupView final : public ViewStore {
 public:
  GroupView(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, const GroupView* below)
      : db_(db), cf_(cf), below_(below) {}

  Result<std::optional<std::string>> Get(std::string_view key) override {
    std::string value;
    CL_ASSIGN_OR_RETURN(const bool found, GetInto(key, &value));
    if (!found) return std::optional<std::string>();
    return std::optional<std::string>(std::move(value));
  }
  Result<bool> GetInto(std::string_view key, std::string* value) override {
    auto it = pending_.find(key);
    if (it != pending_.end()) {
      if (!it->second.value) return false;
      value->assign(*it->second.value);
      return true;
    }
    if (below_ != nullptr) {
      // Immutable once that group was prepared; it holds its final value of every key it wrote.
      auto b = below_->pending_.find(key);
      if (b != below_->pending_.end() && b->second.written) {
        if (!b->second.value) return false;
        value->assign(*b->second.value);
        return true;
      }
    }
    rocksdb::Status s =
        db_->Get(rocksdb::ReadOptions(), cf_, rocksdb::Slice(key.data(), key.size()), value);
    if (s.IsNotFound()) {
      // Remember that the key is absent before this group: deleting it again needs no write.
      pending_.emplace(std::string(key), Pending{std::nullopt, false, true});
      return false;
    }
    if (!s.ok()) return FromRocks(s, "view read");
    return true;
  }
  void Put(std::string_view key, std::string_view value) override {
    auto it = pending_.find(key);
    if (it == pending_.end()) {
      pending_.emplace(std::string(key), Pending{std::string(value), true, false});
    } else {
      it->second.value = std::string(value);
      it->second.written = true;
    }
  }
  void Delete(std::string_view key) override {
    auto it = pending_.find(key);
    if (it == pending_.end()) {
      pending_.emplace(std::string(key), Pending{std::nullopt, true, false});
    } else {
      it->second.value = std::nullopt;
      it->second.written = true;
    }
  }

  // One write per key, the last value (distinct keys: their order in the batch is irrelevant). A
  // key this group found absent and leaves deleted (an object added and deleted within the group)
  // is not written at all.
  Status Flush(rocksdb::WriteBatch* batch) {
    for (const auto& [key, p] : pending_) {
      if (!p.written || (!p.value && p.absent_before)) continue;
      rocksdb::Status s = p.value ? batch->Put(cf_, key, *p.value) : batch->Delete(cf_, key);
      if (!s.ok()) return FromRocks(s, "view batch");
    }
    return Status::Ok();
  }
  // Prepared: the next group may read it; it no longer reads the group below.
  void Seal() { below_ = nullptr; }

 private:
  struct Pending {
    std::optional<std::string> value;  // nullopt: deleted (written) or absent (read)
    bool written = false;              // Put or Delete by this group
    bool absent_before = false;        // read as absent before this group's writes
  };
  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* cf_;
  const GroupView* below_;
  std::unordered_map<std::string, Pending, FlatViewStore::Hash, std::equal_to<>> pending_;
};

// A commit group on its way through the pipeline: prepared (batch built) by its leader, then
// written in group order. At most two are in flight: one writing, the next prepared or preparing.
struct RocksDbLedger::Group {
  uint64_t id = 0;
  std::vector<Writer*> writers;
  Writer* leader = nullptr;
  std::unique_ptr<rocksdb::WriteBatch> batch;
  std::unique_ptr<GroupView> view;
  std::shared_ptr<Group> below;  // prepared on top of this group (while preparing only)
  Counters start;                // the counters before this group, as the meta keys hold them
  Counters next;
  std::vector<CommitResult> results;
  uint64_t records = 0;
  // Set when an earlier group failed while this one was in flight: it is not written.
  Status doomed;
};

namespace {

bool ValidName(std::string_view s) {
  return s.find('\0') == std::string_view::npos && s.find('/') == std::string_view::npos;
}

Status ValidateUnit(const UnitOfWork& unit) {
  if (!unit.recorded_at.empty() && unit.recorded_at.size() != unit.inputs.size()) {
    return Status::InvalidArgument("unit of work: " + std::to_string(unit.recorded_at.size()) +
                                   " recorded times for " + std::to_string(unit.inputs.size()) +
                                   " inputs");
  }
  for (const auto& in : unit.inputs) {
    const auto* ev = std::get_if<model::WatchEvent>(&in);
    if (ev == nullptr || ev->type == model::WatchEventType::kBookmark) continue;
    if (ev->name.empty() || !ValidName(ev->name) || !ValidName(ev->namespace_)) {
      return Status::InvalidArgument("watch event: invalid namespace/name \"" + ev->namespace_ +
                                     "/" + ev->name + "\"");
    }
  }
  return Status::Ok();
}

rocksdb::ColumnFamilyOptions CfOptions(Cf cf, const std::shared_ptr<rocksdb::Cache>& cache,
                                       size_t write_buffer_budget) {
  rocksdb::ColumnFamilyOptions o;
  if (write_buffer_budget != 0) {
    // One family may take up to a quarter of the shared budget (RocksDB's default is 64 MiB).
    o.write_buffer_size =
        std::min(o.write_buffer_size, std::max<size_t>(write_buffer_budget / 4, size_t{1} << 20));
  }
  rocksdb::BlockBasedTableOptions t;
  t.block_cache = cache;
  o.table_factory.reset(rocksdb::NewBlockBasedTableFactory(t));
  o.compression = rocksdb::kLZ4Compression;
  if (cf == kRawCf || cf == kChunksCf) {
    // Raw values and chunks are compressed one by one before they are written (format 2, so the
    // WAL carries them compressed too): flushes store them as they are instead of spending CPU on
    // LZ4 blocks of LZ4 output. The settled bottommost level still uses ZSTD, for legacy
    // (uncompressed) values of older stores and the redundancy across neighbouring objects.
    o.compression = rocksdb::kNoCompression;
    o.bottommost_compression = rocksdb::kZSTD;
  }
  return o;
}

}  // namespace

const WallClock& SystemWallClock() {
  static const SystemClock clock;
  return clock;
}

const char* CfName(Cf cf) {
  static constexpr const char* kNames[kCfCount] = {"default", "inputs",    "raw",   "view",
                                                   "state",   "decisions", "audit", "quarantine",
                                                   "meta",    "chunks"};
  return kNames[cf];
}

Status FromRocks(const rocksdb::Status& s, std::string_view context) {
  if (s.ok()) return Status::Ok();
  std::string msg = std::string(context) + ": " + s.ToString();
  if (s.IsNoSpace()) msg = std::string(context) + ": the disk is full (" + s.ToString() + ")";
  if (s.IsNotFound()) return Status::NotFound(msg);
  if (s.IsCorruption()) return Status::Corruption(msg);
  if (s.IsInvalidArgument()) return Status::InvalidArgument(msg);
  if (s.IsBusy() || s.IsTryAgain()) return Status::Unavailable(msg);
  return Status::IoError(msg);
}

Result<SyncMode> ParseSyncMode(std::string_view s) {
  if (s == "always") return SyncMode::kAlways;
  if (s == "batch") return SyncMode::kBatch;
  if (s == "none") return SyncMode::kNone;
  return Status::InvalidArgument("--sync must be always, batch or none, not \"" + std::string(s) +
                                 "\"");
}

std::string_view SyncModeName(SyncMode m) {
  switch (m) {
    case SyncMode::kAlways:
      return "always";
    case SyncMode::kBatch:
      return "batch";
    case SyncMode::kNone:
      return "none";
  }
  return "unknown";
}

Result<std::unique_ptr<Ledger>> Ledger::Open(const LedgerOptions& options) {
  return RocksDbLedger::OpenImpl(options);
}

void PrepareUnit(UnitOfWork* unit) {
  unit->stored_raw.resize(unit->inputs.size());
  for (size_t i = 0; i < unit->inputs.size(); ++i) {
    const auto* ev = std::get_if<model::WatchEvent>(&unit->inputs[i]);
    if (ev == nullptr || ev->raw.empty()) {
      unit->stored_raw[i].clear();
    } else {
      PrepareRawValue(ev->raw, &unit->stored_raw[i]);
    }
  }
}

RocksDbLedger::RocksDbLedger(const LedgerOptions& options)
    : options_(options),
      clock_(options.clock ? options.clock : &SystemWallClock()),
      read_only_(options.read_only) {}

namespace {

int64_t SteadyNanos() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Read-only: the ledger must already be there; say clearly what is missing.
Status CheckExistingLedger(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Status::NotFound("ledger: " + path +
                            " does not exist (a read-only open creates nothing)");
  }
  if (!std::filesystem::exists(std::filesystem::path(path) / "CURRENT", ec)) {
    return Status::NotFound("ledger: " + path +
                            " holds no ledger (no RocksDB CURRENT file; a read-only open creates "
                            "nothing)");
  }
  return Status::Ok();
}

Result<std::string> MakeSecondaryDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/cronledger-ro-XXXXXX";
  if (mkdtemp(tmpl.data()) == nullptr) {
    return Status::IoError("ledger: cannot create a read-only instance directory " + tmpl);
  }
  return tmpl;
}

}  // namespace

Result<std::unique_ptr<Ledger>> RocksDbLedger::OpenImpl(const LedgerOptions& options) {
  if (options.path.empty()) return Status::InvalidArgument("ledger: empty path");
  if (options.read_only) CL_RETURN_IF_ERROR(CheckExistingLedger(options.path));
  std::unique_ptr<RocksDbLedger> ledger(new RocksDbLedger(options));
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = options.create_if_missing && !options.read_only;
  db_options.create_missing_column_families = true;
  db_options.max_background_jobs = 2;
  db_options.wal_recovery_mode = rocksdb::WALRecoveryMode::kPointInTimeRecovery;
  auto cache = rocksdb::NewLRUCache(options.block_cache_bytes);
  if (options.write_buffer_budget_bytes != 0) {
    db_options.write_buffer_manager =
        std::make_shared<rocksdb::WriteBufferManager>(options.write_buffer_budget_bytes);
  }

  // Open every column family the database has (a newer build may have added some) plus ours.
  std::vector<std::string> existing;
  rocksdb::Status ls = rocksdb::DB::ListColumnFamilies(db_options, options.path, &existing);
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (size_t i = 0; i < kCfCount; ++i) {
    descriptors.emplace_back(
        CfName(static_cast<Cf>(i)),
        CfOptions(static_cast<Cf>(i), cache, options.write_buffer_budget_bytes));
  }
  if (ls.ok()) {
    for (const auto& name : existing) {
      bool ours = false;
      for (const auto& d : descriptors) ours = ours || d.name == name;
      if (!ours) descriptors.emplace_back(name, rocksdb::ColumnFamilyOptions());
    }
  }
  rocksdb::DB* raw_db = nullptr;
  rocksdb::Status s;
  if (options.read_only) {
    if (!ls.ok()) return FromRocks(ls, "ledger: open read-only " + options.path);
    // A store written before the chunks column family has no chunked values: open it without.
    const bool has_chunks =
        std::find(existing.begin(), existing.end(), CfName(kChunksCf)) != existing.end();
    if (!has_chunks) descriptors.erase(descriptors.begin() + kChunksCf);
    for (size_t i = 0; i < kCfCount; ++i) {
      if (i == kChunksCf) continue;
      if (std::find(existing.begin(), existing.end(), CfName(static_cast<Cf>(i))) ==
          existing.end()) {
        return Status::FailedPrecondition(
            "ledger: " + options.path + " has no column family \"" + CfName(static_cast<Cf>(i)) +
            "\" (written by an older build); open it once read-write to upgrade it");
      }
    }
    if (options.secondary_dir.empty()) {
      CL_ASSIGN_OR_RETURN(ledger->secondary_dir_, MakeSecondaryDir());
      ledger->remove_secondary_dir_ = true;
    } else {
      ledger->secondary_dir_ = options.secondary_dir;
    }
    db_options.max_open_files = -1;  // a secondary keeps every table open (the writer may delete)
    // Every catch-up logs to the instance's own info log: bound it for long-lived readers (serve).
    db_options.info_log = NewInfoLog(ledger->secondary_dir_ + "/LOG", 1u << 20);
    s = rocksdb::DB::OpenAsSecondary(db_options, options.path, ledger->secondary_dir_, descriptors,
                                     &ledger->cfs_, &raw_db);
    if (!s.ok()) return FromRocks(s, "ledger: open read-only " + options.path);
    ledger->db_.reset(raw_db);
    if (!has_chunks) ledger->cfs_.insert(ledger->cfs_.begin() + kChunksCf, nullptr);
    std::unique_lock<std::shared_mutex> l(ledger->catchup_mu_);
    CL_RETURN_IF_ERROR(ledger->CatchUpLocked());
    CL_RETURN_IF_ERROR(ledger->LoadMeta());
    return std::unique_ptr<Ledger>(std::move(ledger));
  }
  if (db_options.create_if_missing) {
    std::error_code ec;
    std::filesystem::create_directories(options.path, ec);
    if (ec) return Status::Internal("ledger: create " + options.path + ": " + ec.message());
  }
  db_options.info_log = NewInfoLog(options.path + "/LOG", 16u << 20);
  s = rocksdb::DB::Open(db_options, options.path, descriptors, &ledger->cfs_, &raw_db);
  if (!s.ok()) return FromRocks(s, "ledger: open " + options.path);
  ledger->db_.reset(raw_db);
  CL_RETURN_IF_ERROR(ledger->LoadMeta());
  CL_RETURN_IF_ERROR(ledger->StartIndexer());
  if (options.sync == SyncMode::kBatch) {
    ledger->sync_thread_ = std::thread([l = ledger.get()] {
      pthread_setname_np(pthread_self(), "cl-ledger-sync");
      l->SyncLoop();
    });
  }
  return std::unique_ptr<Ledger>(std::move(ledger));
}

RocksDbLedger::~RocksDbLedger() {
  StopIndexer();  // indexes what was committed, before the last sync
  if (sync_thread_.joinable()) {
    {
      std::lock_guard<std::mutex> l(sync_mu_);
      stopping_ = true;
    }
    sync_cv_.notify_all();
    sync_thread_.join();
  }
  if (db_) {
    for (auto* cf : cfs_) {
      if (cf == nullptr) continue;  // a read-only open without the chunks column family
      // Ignoring the status is deliberate: a handle that fails to close leaks nothing we can free.
      (void)db_->DestroyColumnFamilyHandle(cf);
    }
    cfs_.clear();
    (void)db_->Close();  // deliberate: the destructor has nobody to report to; WAL is durable
    db_.reset();
  }
  if (remove_secondary_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(secondary_dir_, ec);  // best effort: a temp dir
  }
}

Status RocksDbLedger::CheckWritable(std::string_view what) const {
  if (!read_only_) return Status::Ok();
  return Status::FailedPrecondition(std::string(what) + ": ledger opened read-only");
}

Status RocksDbLedger::CatchUpLocked() {
  // A catch-up can race with the writer deleting a file it just replaced (flush, compaction);
  // the next attempt reads the newer MANIFEST.
  rocksdb::Status s;
  for (int attempt = 0; attempt < 3; ++attempt) {
    s = db_->TryCatchUpWithPrimary();
    if (s.ok()) break;
  }
  if (!s.ok()) return FromRocks(s, "ledger: catch up with the writer of " + options_.path);
  last_catchup_ns_.store(SteadyNanos());
  return LoadCounters();
}

namespace {
// The read-only ledgers whose read scope the current thread holds (nested calls share it).
thread_local std::vector<const RocksDbLedger*> t_held_scopes;
bool HeldByThisThread(const RocksDbLedger* l) {
  return std::find(t_held_scopes.begin(), t_held_scopes.end(), l) != t_held_scopes.end();
}
}  // namespace

RocksDbLedger::ReadScope::ReadScope(RocksDbLedger* ledger) : ledger_(ledger) {
  if (!ledger->read_only_) {
    snapshot_ = ledger->db_->GetSnapshot();
    return;
  }
  if (HeldByThisThread(ledger)) return;
  const Duration refresh = ledger->options_.read_only_refresh;
  const int64_t interval = std::chrono::nanoseconds(refresh).count();
  auto due = [&] {
    if (refresh == Duration::max()) return false;  // only on Open and Refresh()
    return interval <= 0 || SteadyNanos() >= ledger->last_catchup_ns_.load() + interval;
  };
  if (due()) {
    std::unique_lock<std::shared_mutex> l(ledger->catchup_mu_);
    if (due()) status_ = ledger->CatchUpLocked();  // unless another reader just did
  }
  ledger->catchup_mu_.lock_shared();
  holds_ = true;
  t_held_scopes.push_back(ledger);
}

RocksDbLedger::ReadScope::~ReadScope() {
  if (snapshot_ != nullptr) ledger_->db_->ReleaseSnapshot(snapshot_);
  if (holds_) {
    t_held_scopes.erase(std::find(t_held_scopes.begin(), t_held_scopes.end(), ledger_));
    ledger_->catchup_mu_.unlock_shared();
  }
}

Status RocksDbLedger::Refresh() {
  if (!read_only_) return Status::Ok();
  if (HeldByThisThread(this)) {
    return Status::FailedPrecondition("ledger: Refresh() inside a read of the same ledger");
  }
  std::unique_lock<std::shared_mutex> l(catchup_mu_);
  return CatchUpLocked();
}

Status RocksDbLedger::LoadMeta() {
  auto version = GetRaw(kMetaCf, keys::kSchemaVersion);
  if (version.ok()) {
    if (*version != kSchemaVersion) {
      return Status::FailedPrecondition("ledger: schema version " + *version +
                                        " is not supported by this build (supports " +
                                        std::string(kSchemaVersion) + ")");
    }
  } else if (version.status().IsNotFound() && read_only_) {
    return Status::FailedPrecondition("ledger: " + options_.path +
                                      " has no schema version (not a cronledger ledger, or its "
                                      "writer has not initialised it yet)");
  } else if (version.status().IsNotFound()) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    CL_RETURN_IF_ERROR(FromRocks(db_->Put(wo, cfs_[kMetaCf], keys::kSchemaVersion, kSchemaVersion),
                                 "ledger: write schema version"));
  } else {
    return version.status();
  }
  return LoadCounters();
}

Status RocksDbLedger::LoadCounters() {
  Counters loaded;
  const std::pair<std::string_view, uint64_t*> counters[] = {
      {keys::kLastInputSeq, &loaded.last_input_seq},
      {keys::kLastDecisionSeq, &loaded.last_decision_seq},
      {keys::kLastQuarantineId, &loaded.last_quarantine_id},
  };
  for (const auto& [key, out] : counters) {
    auto v = GetRaw(kMetaCf, key);
    if (v.ok()) {
      if (!keys::GetBe64(*v, out))
        return Status::Corruption("ledger: bad meta " + std::string(key));
    } else if (!v.status().IsNotFound()) {
      return v.status();
    }
  }
  std::lock_guard<std::mutex> l(mu_);
  committed_ = loaded;
  return Status::Ok();
}

// The pipelined group commit. Callers queue their units; the front one, when no group is being
// prepared and at most one is in flight, leads the next group through two stages:
//  - prepare (serial between groups, under maintenance_mu_): take the queue (bounded by bytes),
//    assign seqs, fold the watch events into the view and build the WriteBatch. It reads the view
//    through its own writes, then those of the group in flight (if that one is not written yet),
//    then the DB: the group in flight holds every write that is not in the DB yet, because a group
//    starts preparing only once the group before the one in flight has been written.
//  - write (serial, in group order): RocksDB write (and with kAlways its fsync).
// So group k+1 prepares while group k writes. A failed group (prepare or write) fails every unit
// queued behind it: the groups in flight after it (prepared on top of it, or at least after it)
// are not written, the waiting units fail, and so does every later Commit until the ledger is
// reopened (as RocksDB itself refuses writes after a failed WAL write). So no unit is ever written
// after a unit queued before it failed, whichever thread queued it. An earlier group is never
// failed by a later one.
Result<CommitResult> RocksDbLedger::Commit(UnitOfWork unit) {
  CL_RETURN_IF_ERROR(CheckWritable("commit"));
  CL_RETURN_IF_ERROR(ValidateUnit(unit));
  // Compression runs here, on the caller's thread, while another group may be writing.
  if (unit.stored_raw.size() != unit.inputs.size()) PrepareUnit(&unit);
  if (!options_.chunk_large_raw) {
    for (size_t i = 0; i < unit.inputs.size(); ++i) {
      if (IsChunkedRawValue(unit.stored_raw[i])) {
        EncodeRawValue(std::get<model::WatchEvent>(unit.inputs[i]).raw, &unit.stored_raw[i]);
      }
    }
  }
  std::function<void()> on_queued = std::move(unit.on_queued);
  unit.on_queued = nullptr;
  Writer w;
  w.unit = &unit;
  CL_RETURN_IF_ERROR(FindStoredChunks(unit, &w.chunks));
  std::unique_lock<std::mutex> l(mu_);
  if (!poisoned_.ok()) return poisoned_;
  queue_.push_back(&w);
  ++pending_units_;
  if (on_queued) {
    l.unlock();
    on_queued();
    l.lock();
  }
  while (!w.done &&
         !(!w.in_group && queue_.front() == &w && !preparing_ && inflight_.size() <= 1)) {
    w.cv.wait(l);
  }
  if (w.done) return std::move(w.result);

  // Leader: take the queue as it is now (bounded by bytes).
  auto g = std::make_shared<Group>();
  g->id = ++last_group_id_;
  g->leader = &w;
  size_t bytes = 0;
  while (!queue_.empty()) {
    Writer* x = queue_.front();
    size_t unit_bytes = 0;
    for (const auto& stored : x->unit->stored_raw) {
      unit_bytes += stored.size() + 256;  // + keys, the input record, view and index entries
    }
    if (!g->writers.empty() && bytes + unit_bytes > options_.max_group_bytes) break;
    bytes += unit_bytes;
    x->in_group = true;
    g->writers.push_back(x);
    queue_.pop_front();
  }
  // On top of the group in flight, unless that one will not be written (an earlier failure):
  // then everything before it is written and committed_ is final.
  if (!inflight_.empty() && inflight_.back()->doomed.ok()) {
    g->below = inflight_.back();
    g->next = g->below->next;
  } else {
    g->next = committed_;
  }
  g->start = g->next;
  preparing_ = true;
  preparing_group_ = g;
  l.unlock();

  Status status = PrepareGroup(g.get(), bytes);

  l.lock();
  preparing_ = false;
  preparing_group_.reset();
  g->below.reset();
  if (status.ok()) status = g->doomed;
  if (!status.ok()) {
    // Nothing of it was written; everything queued behind it fails too.
    if (g->doomed.ok()) FailLaterLocked(g->id, status);
    FinishGroupLocked(*g, status);
    NotifyNextLocked();
    return std::move(w.result);
  }
  inflight_.push_back(g);
  NotifyNextLocked();  // the next leader may prepare while this group writes
  while (inflight_.front() != g) w.cv.wait(l);
  status = g->doomed;
  l.unlock();

  if (status.ok() && options_.group_write_hook) status = options_.group_write_hook();
  const auto write_start = std::chrono::steady_clock::now();
  if (status.ok()) status = WriteGroup(g->batch.get(), g->records);
  const auto write_end = std::chrono::steady_clock::now();

  l.lock();
  stats_.write_nanos += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(write_end - write_start).count());
  if (status.ok()) {
    committed_ = g->next;
    stats_.units += g->writers.size();
    stats_.groups += 1;
    HandOffToIndexerLocked(g.get());
  } else if (g->doomed.ok()) {
    FailLaterLocked(g->id, status);
  }
  inflight_.pop_front();
  FinishGroupLocked(*g, status);
  if (!inflight_.empty()) inflight_.front()->leader->cv.notify_one();
  NotifyNextLocked();
  return std::move(w.result);
}

void RocksDbLedger::HandOffToIndexerLocked(Group* g) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> indexer(index_mu_);
    for (Writer* w : g->writers) {
      for (size_t i = 0; i < w->decision_records.size(); ++i) {
        // Beyond the bound the indexer reads them back from the log.
        if (index_queue_bytes_ >= kMaxIndexQueueBytes) break;
        index_queue_bytes_ += w->decision_records[i].size();
        index_queue_.emplace_back(w->unit->decisions[i].seq, std::move(w->decision_records[i]));
      }
    }
    const uint64_t before = index_target_;
    index_target_ = g->next.last_decision_seq;
    // IndexLoop waits for work when it has indexed everything, then lingers for a full batch:
    // only those two moments need a wake-up, not every commit group.
    wake = index_target_ != before &&
           (indexed_through_ >= before || index_target_ - indexed_through_ >= kIndexBatch);
  }
  if (wake) index_cv_.notify_one();
}

Status RocksDbLedger::PrepareGroup(Group* g, size_t bytes) {
  std::lock_guard<std::mutex> maintenance(maintenance_mu_);
  {
    // Maintenance may have run while this leader waited for maintenance_mu_: once the group below
    // is written (or failed, which dooms this one), read the DB instead of its view.
    std::lock_guard<std::mutex> l(mu_);
    if (g->below && std::find(inflight_.begin(), inflight_.end(), g->below) == inflight_.end()) {
      g->below.reset();
    }
  }
  if (options_.before_group_write) options_.before_group_write();
  const auto prepare_start = std::chrono::steady_clock::now();
  // Reserved up front: growing a multi-MiB batch by doubling copies it several times.
  g->batch = std::make_unique<rocksdb::WriteBatch>(bytes + 4096);
  g->view = std::make_unique<GroupView>(db_.get(), cfs_[kViewCf],
                                        g->below ? g->below->view.get() : nullptr);
  const Time now = clock_->Now();
  Status status;
  g->results.resize(g->writers.size());
  for (size_t i = 0; i < g->writers.size() && status.ok(); ++i) {
    status = AddUnit(*g->writers[i], g->view.get(), g->batch.get(), &g->next, &g->results[i], now);
    g->records += g->writers[i]->unit->inputs.size() + g->writers[i]->unit->decisions.size();
  }
  if (status.ok()) status = g->view->Flush(g->batch.get());
  if (status.ok()) {
    // Only the counters this group moved: the others' keys already hold their values.
    const std::tuple<std::string_view, uint64_t, uint64_t> meta[] = {
        {keys::kLastInputSeq, g->start.last_input_seq, g->next.last_input_seq},
        {keys::kLastDecisionSeq, g->start.last_decision_seq, g->next.last_decision_seq},
        {keys::kLastQuarantineId, g->start.last_quarantine_id, g->next.last_quarantine_id},
    };
    for (const auto& [key, before, value] : meta) {
      if (status.ok() && value != before) {
        status = FromRocks(g->batch->Put(cfs_[kMetaCf], key, keys::Be64(value)), "meta");
      }
    }
  }
  g->view->Seal();
  const auto prepare_end = std::chrono::steady_clock::now();
  std::lock_guard<std::mutex> l(mu_);
  stats_.prepared += 1;
  stats_.prepare_nanos += static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(prepare_end - prepare_start).count());
  return status;
}

void RocksDbLedger::FailLaterLocked(uint64_t failed_group, const Status& status) {
  const Status later = status.WithContext(
      "ledger: not written, an earlier commit group failed (reopen the ledger to write again)");
  if (poisoned_.ok()) poisoned_ = later;
  write_failed_.store(true);
  if (preparing_group_ && preparing_group_->id > failed_group && preparing_group_->doomed.ok()) {
    preparing_group_->doomed = later;
  }
  for (auto& g : inflight_) {
    if (g->id > failed_group && g->doomed.ok()) g->doomed = later;
  }
  for (Writer* x : queue_) {
    x->result = later;
    x->done = true;
    --pending_units_;
    x->cv.notify_one();
  }
  queue_.clear();
}

void RocksDbLedger::FinishGroupLocked(const Group& g, const Status& status) {
  for (size_t i = 0; i < g.writers.size(); ++i) {
    Writer* x = g.writers[i];
    if (status.ok()) {
      x->result = g.results[i];
    } else {
      x->result = status;
    }
    x->done = true;
    --pending_units_;
    if (x != g.leader) x->cv.notify_one();
  }
}

void RocksDbLedger::NotifyNextLocked() {
  if (!queue_.empty()) queue_.front()->cv.notify_one();
  if (inflight_.empty()) commits_idle_cv_.notify_all();
}

std::unique_lock<std::mutex> RocksDbLedger::ExcludeCommits() {
  std::unique_lock<std::mutex> maintenance(maintenance_mu_);
  // No group prepares while this is held; wait for the prepared ones to be written.
  std::unique_lock<std::mutex> l(mu_);
  commits_idle_cv_.wait(l, [this] { return inflight_.empty(); });
  return maintenance;
}

Status RocksDbLedger::AddUnit(Writer& writer, ViewStore* overlay, rocksdb::WriteBatch* batch,
                              Counters* next, CommitResult* result, Time now) {
  UnitOfWork* unit = writer.unit;
  auto put = [batch, this](Cf cf, const std::string& key, std::string_view value) {
    return FromRocks(batch->Put(cfs_[cf], key, rocksdb::Slice(value.data(), value.size())),
                     "batch");
  };
  uint64_t last_tick_seq = 0;
  std::string seq_key;
  std::string record;  // reused: one encoding buffer for the whole unit
  std::string no_raw;
  for (size_t i = 0; i < unit->inputs.size(); ++i) {
    auto& in = unit->inputs[i];
    const Time at = unit->recorded_at.empty() ? now : unit->recorded_at[i];
    const uint64_t seq = ++next->last_input_seq;
    if (result->first_input_seq == 0) result->first_input_seq = seq;
    result->last_input_seq = seq;
    seq_key.clear();
    keys::PutBe64(&seq_key, seq);
    if (auto* ev = std::get_if<model::WatchEvent>(&in)) {
      // The log record is the normalized event; its raw bytes go to the raw column family,
      // compressed by PrepareUnit() before the unit queued.
      const std::string& stored = unit->stored_raw[i];
      if (!stored.empty()) CL_RETURN_IF_ERROR(PutRaw(writer.chunks, seq_key, stored, batch));
      ev->raw.swap(no_raw);  // encode the record without them (swapped back below)
      keys::EncodeLogValueTo(at, 0, in, &record);
      ev->raw.swap(no_raw);
      CL_RETURN_IF_ERROR(put(kInputsCf, seq_key, record));
      CL_RETURN_IF_ERROR(FoldWatchEvent(*ev, seq, overlay));
    } else {
      // An intent or a pass end whose tick_seq is 0 belongs to the last Tick of this unit (the
      // Tick of its pass, committed with it): the stored record is the one the caller would
      // have written after committing the Tick on its own.
      if (std::holds_alternative<model::Tick>(in)) {
        last_tick_seq = seq;
      } else if (auto* intent = std::get_if<model::ActionIntent>(&in)) {
        if (intent->tick_seq == 0) intent->tick_seq = last_tick_seq;
      } else if (auto* end = std::get_if<model::PassEnd>(&in)) {
        if (end->tick_seq == 0) end->tick_seq = last_tick_seq;
      }
      keys::EncodeLogValueTo(at, 0, in, &record);
      CL_RETURN_IF_ERROR(put(kInputsCf, seq_key, record));
    }
  }
  for (auto& d : unit->decisions) {
    d.seq = ++next->last_decision_seq;
    if (result->first_decision_seq == 0) result->first_decision_seq = d.seq;
    result->last_decision_seq = d.seq;
    if (d.cause.tick_seq == 0 && last_tick_seq != 0) {
      d.cause.tick_seq = last_tick_seq;
      if (d.cause.input_seq == 0) d.cause.input_seq = last_tick_seq - 1;
    }
    std::string& stored = writer.decision_records.emplace_back();
    model::EncodeDecisionRecord(d, &stored);
    CL_RETURN_IF_ERROR(put(kDecisionsCf, keys::Be64(d.seq), stored));
  }
  for (auto& q : unit->quarantine) {
    q.id = ++next->last_quarantine_id;
    if (q.recorded_at == Time()) q.recorded_at = now;
    CL_RETURN_IF_ERROR(put(kQuarantineCf, keys::Be64(q.id), keys::EncodeQuarantine(q)));
  }
  for (const auto& [key, value] : unit->controller_state) {
    if (value) {
      CL_RETURN_IF_ERROR(put(kStateCf, key, *value));
    } else {
      CL_RETURN_IF_ERROR(FromRocks(batch->Delete(cfs_[kStateCf], key), "batch"));
    }
  }
  for (const auto& p : unit->positions) {
    CL_RETURN_IF_ERROR(put(kMetaCf, keys::SourceKey(p.source), p.position));
  }
  return Status::Ok();
}

Status RocksDbLedger::WriteGroup(rocksdb::WriteBatch* batch, uint64_t records) {
  rocksdb::WriteOptions wo;
  wo.sync = options_.sync == SyncMode::kAlways;
  {
    std::lock_guard<std::mutex> w(wal_mu_);
    const Status written = FromRocks(db_->Write(wo, batch), "ledger: write");
    if (!written.ok()) {
      write_failed_.store(true);  // before the background sync can look again
      return written;
    }
  }
  if (options_.sync == SyncMode::kAlways) {
    std::lock_guard<std::mutex> l(mu_);
    stats_.syncs += 1;
  }
  if (options_.sync != SyncMode::kBatch) return Status::Ok();
  bool sync_now = false;
  bool first = false;
  {
    std::lock_guard<std::mutex> l(sync_mu_);
    first = unsynced_records_ == 0;
    if (first) first_unsynced_ = std::chrono::steady_clock::now();
    unsynced_records_ += records;
    if (unsynced_records_ >= options_.sync_max_records) {
      sync_now = true;
      unsynced_records_ = 0;
    }
  }
  if (!sync_now) {
    // The sync thread waits for the first unsynced record, then sleeps out the window: later
    // writes need not wake it (a wake-up per commit group costs more than the write).
    if (first) sync_cv_.notify_one();
    return Status::Ok();
  }
  std::lock_guard<std::mutex> w(wal_mu_);
  if (write_failed_.load()) return WriteHealth();
  background_syncs_.fetch_add(1);
  return FromRocks(db_->SyncWAL(), "ledger: sync");
}

Status RocksDbLedger::WriteHealth() const {
  std::lock_guard<std::mutex> l(mu_);
  return poisoned_;
}

void RocksDbLedger::SyncLoop() {
  std::unique_lock<std::mutex> l(sync_mu_);
  while (true) {
    sync_cv_.wait(l, [this] { return stopping_ || unsynced_records_ > 0; });
    if (unsynced_records_ == 0) break;  // stopping with nothing to sync
    if (!stopping_) {
      const auto deadline = first_unsynced_ + options_.sync_window;
      sync_cv_.wait_until(l, deadline, [this] { return stopping_ || unsynced_records_ == 0; });
    }
    if (unsynced_records_ == 0) continue;
    unsynced_records_ = 0;
    if (write_failed_.load()) continue;  // after a failed write, RocksDB is left alone
    l.unlock();
    // A failed fsync is not retried: the pages it failed to write may be gone from the cache, so
    // a later success would prove nothing (PostgreSQL's "fsyncgate"). The ledger stops writing.
    Status synced;
    {
      std::lock_guard<std::mutex> w(wal_mu_);
      if (write_failed_.load()) {  // a write failed since the check above
        l.lock();
        continue;
      }
      synced = FromRocks(db_->SyncWAL(), "ledger: background sync");
    }
    background_syncs_.fetch_add(1);
    if (!synced.ok()) {
      std::lock_guard<std::mutex> g(mu_);
      FailLaterLocked(0, synced);  // no group not yet written is written
    }
    l.lock();
  }
}

CommitStats RocksDbLedger::Stats() const {
  std::lock_guard<std::mutex> l(mu_);
  CommitStats s = stats_;
  s.queued = pending_units_;
  s.syncs += background_syncs_.load();
  return s;
}

}  // namespace cronledger::store
