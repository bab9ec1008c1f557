#include "bench/controller/raw_create_peer.h"

#include <rocksdb/db.h>
#include <rocksdb/utilities/options_util.h>
#include <rocksdb/write_buffer_manager.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "bench/cpu_time.h"
#include "store/keys.h"

namespace cronledger::bench {
namespace {

Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return Status::Ok();
  return Status::IoError(what + ": " + s.ToString());
}

// An open database with its column families by name.
struct Db {
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  std::map<std::string, rocksdb::ColumnFamilyHandle*> by_name;
  Db() = default;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db() {
    for (auto* h : handles) {
      if (db) db->DestroyColumnFamilyHandle(h);
    }
  }
};

// Opens `dir` with the options RocksDB recorded for it (the ledger's own options file).
Status OpenWithRecordedOptions(const std::string& dir, const store::LedgerOptions& lo,
                               bool read_only, Db* out) {
  rocksdb::ConfigOptions config;
  rocksdb::DBOptions db_options;
  std::vector<rocksdb::ColumnFamilyDescriptor> descs;
  std::shared_ptr<rocksdb::Cache> cache = rocksdb::NewLRUCache(lo.block_cache_bytes);
  CL_RETURN_IF_ERROR(FromRocks(rocksdb::LoadLatestOptions(config, dir, &db_options, &descs, &cache),
                               "load options of " + dir));
  if (lo.write_buffer_budget_bytes != 0) {
    db_options.write_buffer_manager =
        std::make_shared<rocksdb::WriteBufferManager>(lo.write_buffer_budget_bytes);
  }
  rocksdb::DB* raw = nullptr;
  const rocksdb::Status s =
      read_only ? rocksdb::DB::OpenForReadOnly(db_options, dir, descs, &out->handles, &raw)
                : rocksdb::DB::Open(db_options, dir, descs, &out->handles, &raw);
  CL_RETURN_IF_ERROR(FromRocks(s, "open " + dir));
  out->db.reset(raw);
  for (size_t i = 0; i < descs.size(); ++i) out->by_name[descs[i].name] = out->handles[i];
  return Status::Ok();
}

Result<rocksdb::ColumnFamilyHandle*> Cf(const Db& db, const std::string& name) {
  auto it = db.by_name.find(name);
  if (it == db.by_name.end()) return Status::NotFound("no column family " + name);
  return it->second;
}

// Every captured key is the big-endian seq of its record (input and decision keys). A round
// shifts them past the captured range.
std::string ShiftedKey(const std::string& key, uint64_t shift) {
  if (shift == 0) return key;
  uint64_t seq = 0;
  store::keys::GetBe64(std::string_view(key).substr(key.size() - 8), &seq);
  std::string out = key.substr(0, key.size() - 8);
  store::keys::PutBe64(&out, seq + shift);
  return out;
}

}  // namespace

Result<CapturedCreates> ReadCreateRecords(const std::string& ledger_dir,
                                          const std::vector<uint64_t>& input_seqs,
                                          const std::vector<uint64_t>& decision_seqs) {
  Db db;
  store::LedgerOptions lo;
  CL_RETURN_IF_ERROR(OpenWithRecordedOptions(ledger_dir, lo, /*read_only=*/true, &db));
  CapturedCreates out;
  std::string value;
  auto get = [&](const char* cf_name, uint64_t seq) -> Status {
    CL_ASSIGN_OR_RETURN(rocksdb::ColumnFamilyHandle * cf, Cf(db, cf_name));
    const std::string key = store::keys::Be64(seq);
    CL_RETURN_IF_ERROR(
        FromRocks(db.db->Get(rocksdb::ReadOptions(), cf, key, &value), std::string(cf_name)));
    out.bytes += key.size() + value.size();
    out.max_seq = std::max(out.max_seq, seq);
    out.records.push_back(RawRecord{cf_name, key, value});
    return Status::Ok();
  };
  for (const uint64_t seq : input_seqs) CL_RETURN_IF_ERROR(get("inputs", seq));
  for (const uint64_t seq : decision_seqs) CL_RETURN_IF_ERROR(get("decisions", seq));
  out.creates = decision_seqs.size();
  return out;
}

Result<RawPeerResult> RunRawPeer(const RawPeerOptions& options, const CapturedCreates& captured) {
  if (captured.creates == 0 || captured.records.empty()) {
    return Status::InvalidArgument("raw peer: no create records captured");
  }
  {
    // The same column families and options as the controller's ledger: let the ledger create
    // the database, then reopen it with the options it recorded.
    store::LedgerOptions lo = options.ledger;
    lo.path = options.dir;
    CL_ASSIGN_OR_RETURN(auto created, store::Ledger::Open(lo));
  }
  Db db;
  CL_RETURN_IF_ERROR(OpenWithRecordedOptions(options.dir, options.ledger, false, &db));
  std::vector<rocksdb::ColumnFamilyHandle*> cf_of;
  cf_of.reserve(captured.records.size());
  for (const RawRecord& r : captured.records) {
    CL_ASSIGN_OR_RETURN(rocksdb::ColumnFamilyHandle * cf, Cf(db, r.cf));
    cf_of.push_back(cf);
  }
  CL_ASSIGN_OR_RETURN(rocksdb::ColumnFamilyHandle * meta, Cf(db, "meta"));

  // Batches cut the captured records into runs of creates_per_batch creates' worth of records.
  const size_t n = captured.records.size();
  const size_t per_batch = std::max<size_t>(
      1, static_cast<size_t>(static_cast<double>(n) / static_cast<double>(captured.creates) *
                             static_cast<double>(options.creates_per_batch)));
  const size_t batches_per_round = (n + per_batch - 1) / per_batch;
  const uint64_t shift_per_round = captured.max_seq + 1;
  std::atomic<uint64_t> next_batch{0};
  std::atomic<uint64_t> records_written{0};
  std::atomic<uint64_t> bytes_written{0};
  std::atomic<uint64_t> batches_written{0};
  std::mutex error_mu;
  Status error = Status::Ok();
  const double cpu0 = ProcessCpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&t0] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  const uint64_t max_records =
      static_cast<uint64_t>(static_cast<double>(n) / static_cast<double>(captured.creates) *
                            static_cast<double>(options.max_creates));
  const uint64_t min_records =
      static_cast<uint64_t>(static_cast<double>(n) / static_cast<double>(captured.creates) *
                            static_cast<double>(options.min_creates));
  auto writer = [&] {
    rocksdb::WriteOptions wo;
    wo.sync = true;  // one fsync per batch
    for (;;) {
      const uint64_t written = records_written.load();
      const bool enough = elapsed() >= options.min_seconds && written >= min_records;
      if (enough || written >= max_records) return;
      const uint64_t b = next_batch.fetch_add(1);
      const uint64_t round = b / batches_per_round;
      const size_t begin = static_cast<size_t>(b % batches_per_round) * per_batch;
      const size_t end = std::min(n, begin + per_batch);
      rocksdb::WriteBatch batch;
      uint64_t bytes = 0;
      for (size_t i = begin; i < end; ++i) {
        const RawRecord& r = captured.records[i];
        const std::string key = ShiftedKey(r.key, round * shift_per_round);
        batch.Put(cf_of[i], key, r.value);
        bytes += key.size() + r.value.size();
      }
      // The ledger's per-group bookkeeping (store: last_input_seq and friends in "meta").
      batch.Put(meta, "last_input_seq", store::keys::Be64(round * shift_per_round + end));
      const rocksdb::Status s = db.db->Write(wo, &batch);
      if (!s.ok()) {
        std::lock_guard<std::mutex> l(error_mu);
        error = FromRocks(s, "raw peer write");
        return;
      }
      records_written.fetch_add(end - begin);
      bytes_written.fetch_add(bytes);
      batches_written.fetch_add(1);
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < std::max(1, options.threads); ++i) threads.emplace_back(writer);
  for (auto& t : threads) t.join();
  CL_RETURN_IF_ERROR(error);
  RawPeerResult r;
  r.seconds = elapsed();
  r.cpu_seconds = ProcessCpuSeconds() - cpu0;
  r.batches = batches_written.load();
  r.bytes = bytes_written.load();
  r.creates = static_cast<uint64_t>(static_cast<double>(records_written.load()) /
                                    static_cast<double>(n) * static_cast<double>(captured.creates));
  return r;
}

}  // namespace cronledger::bench
