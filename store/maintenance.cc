// RocksDbLedger maintenance: rebuild-and-verify of the view, checkpoints, retention.
#include <rocksdb/iterator.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>

#include "store/keys.h"
#include "store/rocksdb_ledger.h"
#include "store/trail_store.h"

namespace cronledger::store {
namespace {

std::string_view ToView(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

// A readable rendering of a view value for difference reports.
std::string DescribeValue(std::string_view key, std::string_view value) {
  if (key.empty()) return std::string(value);
  if (key[0] == view_key::kCronJobPrefix || key[0] == view_key::kJobPrefix) {
    auto e = DecodeObjectEntry(value);
    if (!e.ok()) return "undecodable: " + e.status().message();
    std::string out = "uid=" + e->uid + " resourceVersion=" + e->resource_version +
                      " seq=" + std::to_string(e->source_seq);
    if (!e->owner_name.empty()) out += " owner=" + e->owner_name;
    return out;
  }
  if (key[0] == view_key::kResourcePrefix) {
    auto e = DecodeResourceVersionEntry(value);
    if (!e.ok()) return "undecodable: " + e.status().message();
    return "resourceVersion=" + e->resource_version + " seq=" + std::to_string(e->source_seq);
  }
  return "present";
}

constexpr size_t kMaintenanceBatch = 1000;

}  // namespace

uint64_t RocksDbLedger::EstimatedViewKeys() {
  // Sizing only: an estimate too high wastes a little memory, too low costs a rehash. Capped
  // so that a wild estimate cannot reserve gigabytes (2^24 keys: 64 MiB of slots).
  constexpr uint64_t kMaxReserve = uint64_t{1} << 24;
  uint64_t keys = 0;
  if (!db_->GetIntProperty(cfs_[kViewCf], rocksdb::DB::Properties::kEstimateNumKeys, &keys)) {
    return 0;
  }
  return std::min(keys, kMaxReserve);
}

Result<RebuildReport> RocksDbLedger::Rebuild(bool repair) {
  if (repair) CL_RETURN_IF_ERROR(CheckWritable("rebuild --repair"));
  const std::unique_lock<std::mutex> maintenance = ExcludeCommits();
  // With commits held off, the indexer catches up with the last of them and stays idle.
  CL_RETURN_IF_ERROR(SyncAuditIndex());
  // Commits wait (maintenance_mu_); a read-only instance holds its catch-ups off instead.
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  RebuildReport report;
  FlatViewStore rebuilt;
  rebuilt.Reserve(EstimatedViewKeys());
  Status fold_status;
  CL_RETURN_IF_ERROR(ScanWatchEventsReadAheadAt(scope.snapshot(), 0,
                                                [&](uint64_t seq, const model::WatchEventRef& ev) {
                                                  fold_status = rebuilt.Fold(ev, seq);
                                                  ++report.records_folded;
                                                  return fold_status.ok();
                                                }));
  CL_RETURN_IF_ERROR(fold_status);
  report.view_entries = rebuilt.size();
  const auto sorted = rebuilt.SortedEntries();

  // Merge-compare the stored view (sorted) with the rebuild (sorted).
  rocksdb::WriteBatch fix;
  {
    rocksdb::ReadOptions ro;
    ro.snapshot = scope.snapshot();
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kViewCf]));
    auto want_it = sorted.begin();
    const auto want_end = sorted.end();
    it->SeekToFirst();
    while (it->Valid() || want_it != want_end) {
      const int cmp = !it->Valid()          ? 1
                      : want_it == want_end ? -1
                                            : ToView(it->key()).compare(want_it->first);
      if (cmp < 0) {  // stored, not rebuilt
        const std::string key(ToView(it->key()));
        report.differences.push_back(
            {view_key::Describe(key), DescribeValue(key, ToView(it->value())), ""});
        CL_RETURN_IF_ERROR(FromRocks(fix.Delete(cfs_[kViewCf], key), "rebuild batch"));
        it->Next();
      } else if (cmp > 0) {  // rebuilt, not stored
        report.differences.push_back({view_key::Describe(want_it->first), "",
                                      DescribeValue(want_it->first, want_it->second)});
        CL_RETURN_IF_ERROR(
            FromRocks(fix.Put(cfs_[kViewCf], want_it->first, want_it->second), "rebuild batch"));
        ++want_it;
      } else {
        if (ToView(it->value()) != want_it->second) {
          report.differences.push_back({view_key::Describe(want_it->first),
                                        DescribeValue(want_it->first, ToView(it->value())),
                                        DescribeValue(want_it->first, want_it->second)});
          CL_RETURN_IF_ERROR(
              FromRocks(fix.Put(cfs_[kViewCf], want_it->first, want_it->second), "rebuild batch"));
        }
        it->Next();
        ++want_it;
      }
    }
    CL_RETURN_IF_ERROR(FromRocks(it->status(), "view scan"));
  }
  CL_RETURN_IF_ERROR(VerifyIndex(scope.snapshot(), &report, &fix));
  if (repair && (!report.differences.empty() || report.index_older_layout != 0)) {
    rocksdb::WriteOptions wo;
    wo.sync = true;
    CL_RETURN_IF_ERROR(FromRocks(db_->Write(wo, &fix), "rebuild: repair"));
    report.repaired = true;
  }
  return report;
}

Status RocksDbLedger::Backup(const std::string& dir) {
  CL_RETURN_IF_ERROR(CheckWritable("backup (a checkpoint needs the writer)"));
  rocksdb::Checkpoint* raw = nullptr;
  CL_RETURN_IF_ERROR(FromRocks(rocksdb::Checkpoint::Create(db_.get(), &raw), "backup"));
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  // Flushing the memtables first makes the checkpoint self-contained SST files plus a short WAL.
  return FromRocks(checkpoint->CreateCheckpoint(dir), "backup to " + dir);
}

Result<RetentionReport> RocksDbLedger::ApplyRetention(const RetentionOptions& options, Time now) {
  RetentionReport report;
  report.dry_run = options.dry_run;
  const bool prune_raw = options.raw_max_age > Duration::zero();
  const bool prune_log = options.log_max_age > Duration::zero();
  if (!options.dry_run) CL_RETURN_IF_ERROR(CheckWritable("retention"));
  if (!prune_raw && !prune_log) return report;  // the default: keep everything
  const std::unique_lock<std::mutex> maintenance = ExcludeCommits();
  // Commits wait (maintenance_mu_); a read-only instance holds its catch-ups off instead.
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  rocksdb::ReadOptions ro;
  ro.snapshot = scope.snapshot();
  const Time raw_cutoff = now.Add(-options.raw_max_age);
  const Time log_cutoff = now.Add(-options.log_max_age);
  Time scan_until = Time::GoZero();
  if (prune_raw) scan_until = std::max(scan_until, raw_cutoff);
  if (prune_log) scan_until = std::max(scan_until, log_cutoff);

  // What the view points at stays: object entries' and resourceVersions' source records.
  std::set<uint64_t> pinned;
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kViewCf]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const char prefix = it->key()[0];
      if (prefix == view_key::kCronJobPrefix || prefix == view_key::kJobPrefix) {
        CL_ASSIGN_OR_RETURN(ObjectEntry e, DecodeObjectEntry(ToView(it->value())));
        pinned.insert(e.source_seq);
      } else if (prefix == view_key::kResourcePrefix) {
        CL_ASSIGN_OR_RETURN(ResourceVersionEntry e,
                            DecodeResourceVersionEntry(ToView(it->value())));
        pinned.insert(e.source_seq);
      }
    }
    CL_RETURN_IF_ERROR(FromRocks(it->status(), "view scan"));
  }

  // With an audit trail of the inputs, only what it has chained is touched, and a deleted
  // record's entry is marked (store/trail_store.h).
  const std::string trail_state = trail::StateKey(trail::kLocalSource, trail::kInputsLog);
  auto has_trail = GetRaw(kMetaCf, trail_state, scope.snapshot());
  if (!has_trail.ok() && !has_trail.status().IsNotFound()) return has_trail.status();

  rocksdb::WriteBatch batch;
  auto flush = [&]() -> Status {
    if (batch.Count() == 0 || options.dry_run) {
      batch.Clear();
      return Status::Ok();
    }
    rocksdb::WriteOptions wo;
    wo.sync = true;
    Status s = FromRocks(db_->Write(wo, &batch), "retention write");
    batch.Clear();
    return s;
  };
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kInputsCf]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    CL_ASSIGN_OR_RETURN(keys::LogValue v, keys::DecodeLogValue(ToView(it->value())));
    // Records are appended in time order; the first young one ends the scan (a clock that
    // stepped back only makes retention keep more).
    if (v.recorded_at >= scan_until) break;
    const std::string key(ToView(it->key()));
    uint64_t seq = 0;
    if (!keys::GetBe64(key, &seq)) return Status::Corruption("input log key");
    const bool is_watch = static_cast<uint8_t>(v.input.size() > 1 ? v.input[1] : 0) ==
                          static_cast<uint8_t>(model::RecordType::kWatchEvent);
    const bool has_raw = is_watch && (v.flags & keys::kFlagRawPruned) == 0;
    const bool expired_log = prune_log && v.recorded_at < log_cutoff;
    const bool expired_raw = prune_raw && v.recorded_at < raw_cutoff && has_raw;
    if (!expired_log && !expired_raw) continue;
    if (pinned.count(seq) != 0) {
      ++report.pinned;
      continue;
    }
    std::optional<trail::TrailEntry> entry;
    if (has_trail.ok()) {
      const std::string entry_key = trail::EntryKey(trail::kLocalSource, trail::kInputsLog, seq);
      auto stored = GetRaw(kMetaCf, entry_key, scope.snapshot());
      if (!stored.ok() && !stored.status().IsNotFound()) return stored.status();
      if (stored.ok()) {
        CL_ASSIGN_OR_RETURN(entry, trail::DecodeEntry(*stored));
      }
      // Raw bytes the entry has no digest of would leave the leaf unverifiable.
      if (!entry || (has_raw && !entry->raw_digest)) {
        ++report.unchained;
        continue;
      }
      if (expired_log) {
        entry->removed_by_retention = true;
        CL_RETURN_IF_ERROR(FromRocks(
            batch.Put(cfs_[kMetaCf], entry_key, trail::EncodeEntry(*entry)), "retention batch"));
      }
    }
    if (has_raw) {
      CL_RETURN_IF_ERROR(FromRocks(batch.Delete(cfs_[kRawCf], key), "retention batch"));
      ++report.raw_deleted;
    }
    if (expired_log) {
      CL_RETURN_IF_ERROR(FromRocks(batch.Delete(cfs_[kInputsCf], key), "retention batch"));
      ++report.inputs_deleted;
    } else {
      std::string value;
      model::RecordWriter w(&value);
      w.Byte(keys::kLogEnvelopeV1);
      w.Time(v.recorded_at);
      w.Byte(v.flags | keys::kFlagRawPruned);
      value.append(v.input);
      CL_RETURN_IF_ERROR(FromRocks(batch.Put(cfs_[kInputsCf], key, value), "retention batch"));
    }
    if (batch.Count() >= kMaintenanceBatch) CL_RETURN_IF_ERROR(flush());
  }
  CL_RETURN_IF_ERROR(FromRocks(it->status(), "input log scan"));
  it.reset();
  CL_RETURN_IF_ERROR(flush());
  // Chunked raw values (format 3) share chunks: those no surviving value refers to go now.
  if (!options.dry_run && report.raw_deleted > 0) CL_RETURN_IF_ERROR(SweepChunks());
  return report;
}

}  // namespace cronledger::store
