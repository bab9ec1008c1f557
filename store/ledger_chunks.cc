// RocksDbLedger and raw format 3 (store/raw_chunks.h): writing each chunk once, reading values
// back through their chunks, and deleting the chunks retention left unreferenced.
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <memory>

#include "store/raw_chunks.h"
#include "store/raw_codec.h"
#include "store/rocksdb_ledger.h"

namespace cronledger::store {
namespace {

// Known chunk ids kept at most (16 bytes and a hash node each: a few MiB; at ~8 KiB a chunk,
// ~512 MiB of distinct chunks).
constexpr size_t kMaxKnownChunks = size_t{1} << 16;
constexpr size_t kSweepBatch = 1000;

std::string_view ToView(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

// The `chunks` column family at one snapshot, for DecodeRawValue.
class RocksDbChunkSource final : public ChunkSource {
 public:
  RocksDbChunkSource(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                     const rocksdb::Snapshot* snapshot)
      : db_(db), cf_(cf), snapshot_(snapshot) {}

  Status Read(const std::vector<ChunkId>& ids,
              std::vector<std::optional<std::string>>* values) const override {
    if (cf_ == nullptr) {
      return Status::Corruption(
          "raw bytes: a chunked value (format 3) in a ledger opened without its chunks column "
          "family (created by its writer since: reopen the ledger)");
    }
    std::vector<std::string> key_bytes;
    key_bytes.reserve(ids.size());
    for (const ChunkId& id : ids) key_bytes.push_back(ChunkKey(id));
    std::vector<rocksdb::Slice> keys(key_bytes.begin(), key_bytes.end());
    std::vector<rocksdb::PinnableSlice> found(keys.size());
    std::vector<rocksdb::Status> statuses(keys.size());
    rocksdb::ReadOptions ro;
    ro.snapshot = snapshot_;
    db_->MultiGet(ro, cf_, keys.size(), keys.data(), found.data(), statuses.data());
    values->assign(ids.size(), std::nullopt);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (statuses[i].IsNotFound()) continue;
      CL_RETURN_IF_ERROR(FromRocks(statuses[i], "read chunks"));
      (*values)[i].emplace(ToView(found[i]));
    }
    return Status::Ok();
  }

 private:
  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* cf_;
  const rocksdb::Snapshot* snapshot_;
};

}  // namespace

Status RocksDbLedger::DecodeRaw(uint64_t seq, std::string_view stored,
                                const rocksdb::Snapshot* snapshot, std::string* out) {
  const RocksDbChunkSource chunks(db_.get(), cfs_[kChunksCf], snapshot);
  return DecodeRawValueOf(seq, stored, &chunks, out);
}

Status RocksDbLedger::FindStoredChunks(const UnitOfWork& unit, ChunkLookup* lookup) {
  std::vector<ChunkId> unknown;
  std::string_view value;
  std::vector<PreparedChunk> chunks;
  {
    std::lock_guard<std::mutex> l(chunk_mu_);
    lookup->epoch = chunk_epoch_;
    for (const std::string& prepared : unit.stored_raw) {
      if (!IsChunkedRawValue(prepared)) continue;
      CL_RETURN_IF_ERROR(SplitPreparedRawValue(prepared, &value, &chunks));
      for (const PreparedChunk& c : chunks) {
        if (known_chunks_.count(c.id) == 0) unknown.push_back(c.id);
      }
    }
  }
  if (unknown.empty()) return Status::Ok();
  // After the epoch was read: a chunk found here and deleted by a sweep before this unit is
  // prepared shows as a changed epoch there.
  const RocksDbChunkSource source(db_.get(), cfs_[kChunksCf], nullptr);
  std::vector<std::optional<std::string>> found;
  CL_RETURN_IF_ERROR(source.Read(unknown, &found));
  for (size_t i = 0; i < unknown.size(); ++i) {
    if (found[i]) lookup->stored.push_back(unknown[i]);
  }
  return Status::Ok();
}

Status RocksDbLedger::PutRaw(const ChunkLookup& lookup, const std::string& seq_key,
                             std::string_view prepared, rocksdb::WriteBatch* batch) {
  std::string_view value;
  std::vector<PreparedChunk> chunks;
  CL_RETURN_IF_ERROR(SplitPreparedRawValue(prepared, &value, &chunks));
  if (!chunks.empty()) {
    std::lock_guard<std::mutex> l(chunk_mu_);
    const bool lookup_current = lookup.epoch == chunk_epoch_;
    for (const PreparedChunk& c : chunks) {
      if (known_chunks_.count(c.id) != 0) continue;
      const bool stored = lookup_current && std::find(lookup.stored.begin(), lookup.stored.end(),
                                                      c.id) != lookup.stored.end();
      if (!stored) {
        CL_RETURN_IF_ERROR(FromRocks(batch->Put(cfs_[kChunksCf], ChunkKey(c.id),
                                                rocksdb::Slice(c.value.data(), c.value.size())),
                                     "batch"));
      }
      if (known_chunks_.size() >= kMaxKnownChunks) known_chunks_.clear();
      known_chunks_.insert(c.id);
    }
  }
  return FromRocks(batch->Put(cfs_[kRawCf], seq_key, rocksdb::Slice(value.data(), value.size())),
                   "batch");
}

Status RocksDbLedger::SweepChunks() {
  const Status swept = SweepUnreferencedChunks();
  // Even after a failure part of the sweep may be written: forget every chunk, and every lookup
  // made before now.
  std::lock_guard<std::mutex> l(chunk_mu_);
  known_chunks_.clear();
  ++chunk_epoch_;
  return swept;
}

Status RocksDbLedger::SweepUnreferencedChunks() {
  // Mark: every chunk a surviving raw value refers to. No commit prepares or writes meanwhile
  // (ExcludeCommits), so nothing else can come to refer to a chunk before the sweep ends.
  std::vector<ChunkId> live;
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kRawCf]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const Status s = AppendChunkIds(ToView(it->value()), &live);
      if (!s.ok()) return s.WithContext("chunk sweep");
    }
    CL_RETURN_IF_ERROR(FromRocks(it->status(), "chunk sweep: raw scan"));
  }
  std::sort(live.begin(), live.end());
  live.erase(std::unique(live.begin(), live.end()), live.end());
  // Sweep: the rest.
  rocksdb::WriteBatch batch;
  rocksdb::WriteOptions wo;
  wo.sync = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kChunksCf]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    ChunkId id;
    if (!ParseChunkKey(ToView(it->key()), &id)) return Status::Corruption("chunk key");
    if (std::binary_search(live.begin(), live.end(), id)) continue;
    CL_RETURN_IF_ERROR(FromRocks(batch.Delete(cfs_[kChunksCf], it->key()), "chunk sweep batch"));
    if (batch.Count() >= kSweepBatch) {
      CL_RETURN_IF_ERROR(FromRocks(db_->Write(wo, &batch), "chunk sweep write"));
      batch.Clear();
    }
  }
  CL_RETURN_IF_ERROR(FromRocks(it->status(), "chunk sweep: chunk scan"));
  if (batch.Count() != 0) {
    CL_RETURN_IF_ERROR(FromRocks(db_->Write(wo, &batch), "chunk sweep write"));
  }
  return Status::Ok();
}

}  // namespace cronledger::store
