// The ledger's part of the audit trail (store/trail_store.h): input records as stored, and the
// trail's keys in `meta`.
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include <memory>

#include "store/keys.h"
#include "store/raw_codec.h"
#include "store/rocksdb_ledger.h"
#include "store/trail_store.h"

namespace cronledger::store {
namespace {

std::string_view ToView(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

// Log scans read the files front to back in large reads (as ScanInputsAt).
constexpr size_t kTrailScanReadahead = size_t{2} << 20;

Status CheckTrailKey(std::string_view key) {
  if (key.substr(0, trail::kKeyPrefix.size()) != trail::kKeyPrefix) {
    return Status::InvalidArgument("not an audit trail key");
  }
  return Status::Ok();
}

}  // namespace

Status Ledger::ScanStoredInputs(uint64_t from_seq,
                                const std::function<bool(const StoredInput&)>& fn) {
  std::string record;
  return ScanInputs(from_seq, true, [&](const LogRecord& rec) {
    StoredInput in;
    in.seq = rec.seq;
    in.recorded_at = rec.recorded_at;
    in.raw_pruned = rec.raw_pruned;
    model::Input stripped = rec.input;
    if (auto* ev = std::get_if<model::WatchEvent>(&stripped)) {
      in.has_raw = !ev->raw.empty();
      ev->raw.clear();
    }
    if (const auto* ev = std::get_if<model::WatchEvent>(&rec.input)) in.raw = ev->raw;
    record.clear();
    model::EncodeInput(stripped, &record);
    in.record = record;
    return fn(in);
  });
}

Status Ledger::ScanTrail(std::string_view, std::string_view,
                         const std::function<bool(std::string_view, std::string_view)>&) {
  return Status::FailedPrecondition("ledger: no audit trail state");
}

Result<std::string> Ledger::GetTrail(std::string_view key) {
  return Status::NotFound("trail key " + std::string(key));
}

Status Ledger::WriteTrail(const std::vector<std::pair<std::string, std::string>>&) {
  return Status::FailedPrecondition("ledger: no audit trail state");
}

Status RocksDbLedger::ScanStoredInputs(uint64_t from_seq,
                                       const std::function<bool(const StoredInput&)>& fn) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  rocksdb::ReadOptions ro;
  ro.snapshot = scope.snapshot();
  ro.fill_cache = false;  // a log scan reads each block once (as ScanInputsAt)
  ro.readahead_size = kTrailScanReadahead;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kInputsCf]));
  std::unique_ptr<rocksdb::Iterator> raw_it(db_->NewIterator(ro, cfs_[kRawCf]));
  std::string raw;
  for (it->Seek(keys::Be64(from_seq)); it->Valid(); it->Next()) {
    StoredInput in;
    if (!keys::GetBe64(ToView(it->key()), &in.seq)) return Status::Corruption("input log key");
    CL_ASSIGN_OR_RETURN(keys::LogValue v, keys::DecodeLogValue(ToView(it->value())));
    in.recorded_at = v.recorded_at;
    in.raw_pruned = (v.flags & keys::kFlagRawPruned) != 0;
    in.record = v.input;
    const bool watch =
        model::EncodedRecordType(v.input) == static_cast<uint8_t>(model::RecordType::kWatchEvent);
    if (watch && !in.raw_pruned) {
      const std::string key = keys::Be64(in.seq);
      if (!raw_it->Valid() || raw_it->key().compare(key) < 0) raw_it->Seek(key);
      if (raw_it->Valid() && raw_it->key() == rocksdb::Slice(key)) {
        CL_RETURN_IF_ERROR(DecodeRaw(in.seq, ToView(raw_it->value()), scope.snapshot(), &raw));
        in.has_raw = true;
        in.raw = raw;
      }
    }
    if (!fn(in)) break;
  }
  CL_RETURN_IF_ERROR(FromRocks(it->status(), "input log scan"));
  return FromRocks(raw_it->status(), "raw scan");
}

Status RocksDbLedger::ScanTrail(std::string_view prefix, std::string_view from_key,
                                const std::function<bool(std::string_view, std::string_view)>& fn) {
  CL_RETURN_IF_ERROR(CheckTrailKey(prefix));
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  rocksdb::ReadOptions ro;
  ro.snapshot = scope.snapshot();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kMetaCf]));
  const std::string start(std::max(prefix, from_key));
  for (it->Seek(start);
       it->Valid() && it->key().starts_with(rocksdb::Slice(prefix.data(), prefix.size()));
       it->Next()) {
    if (!fn(ToView(it->key()), ToView(it->value()))) break;
  }
  return FromRocks(it->status(), "trail scan");
}

Result<std::string> RocksDbLedger::GetTrail(std::string_view key) {
  CL_RETURN_IF_ERROR(CheckTrailKey(key));
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  return GetRaw(kMetaCf, key, scope.snapshot());
}

Status RocksDbLedger::WriteTrail(const std::vector<std::pair<std::string, std::string>>& puts) {
  CL_RETURN_IF_ERROR(CheckWritable("audit trail"));
  rocksdb::WriteBatch batch;
  for (const auto& [key, value] : puts) {
    CL_RETURN_IF_ERROR(CheckTrailKey(key));
    CL_RETURN_IF_ERROR(FromRocks(batch.Put(cfs_[kMetaCf], key, value), "trail batch"));
  }
  // Retention reads the trail's entries before it deletes what they cover: the two exclude each
  // other (a commit group's prepare takes the same lock, briefly).
  const std::lock_guard<std::mutex> maintenance(maintenance_mu_);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return FromRocks(db_->Write(wo, &batch), "trail write");
}

}  // namespace cronledger::store
