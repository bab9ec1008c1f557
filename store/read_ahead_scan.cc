// RocksDbLedger's read-ahead scan of the watch events (what Rebuild folds): a second thread
// iterates the input log and copies the watch event records into batches, while the caller's
// thread decodes them and calls fn. On two cores the RocksDB iteration and the decode + fold
// overlap instead of adding up (docs/ledger.md, "Rebuild").
#include <pthread.h>
#include <rocksdb/iterator.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "store/keys.h"
#include "store/rocksdb_ledger.h"

namespace cronledger::store {
namespace {

std::string_view ToView(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

// A batch is handed over when it holds this much: large enough that the hand-over costs little
// per record, small enough that the batches in flight stay in the cores' caches.
constexpr size_t kBatchBytes = 64 << 10;
constexpr size_t kBatches = 6;
constexpr size_t kRecordHeader = sizeof(uint64_t) + sizeof(uint32_t);

// Watch event records in log order, each as [seq: 8 bytes][length: 4 bytes][input record].
struct Batch {
  std::string bytes;
  bool last = false;  // the reader has finished; `status` says how
  Status status;
};

// The hand-over between the reading thread and the caller's: kBatches batches go round. A thread
// that waits is woken only once half of the batches are there for it (or the scan ends), so the
// two threads each run for several batches between wake-ups instead of trading one per batch.
class BatchQueue {
 public:
  BatchQueue() {
    for (size_t i = 0; i < kBatches; ++i) free_.push_back(std::make_unique<Batch>());
  }

  // Reader: an empty batch to fill, or nullptr once the caller has stopped.
  std::unique_ptr<Batch> TakeFree() {
    std::unique_lock<std::mutex> l(mu_);
    if (!stopped_ && free_.empty()) {
      reader_waits_ = true;
      free_cv_.wait(l, [this] { return stopped_ || free_.size() >= kWakeAt; });
      reader_waits_ = false;
    }
    if (stopped_) return nullptr;
    std::unique_ptr<Batch> b = std::move(free_.back());
    free_.pop_back();
    b->bytes.clear();
    b->bytes.reserve(kBatchBytes + (4 << 10));  // a batch fills without growing, mostly
    return b;
  }
  void PushFull(std::unique_ptr<Batch> b) {
    bool wake = false;
    {
      std::lock_guard<std::mutex> l(mu_);
      const bool last = b->last;
      full_.push_back(std::move(b));
      wake = caller_waits_ && (last || full_.size() >= kWakeAt);
    }
    if (wake) full_cv_.notify_one();
  }
  // Caller: the next batch in log order (waits for it).
  std::unique_ptr<Batch> TakeFull() {
    std::unique_lock<std::mutex> l(mu_);
    if (full_.empty()) {
      caller_waits_ = true;
      full_cv_.wait(
          l, [this] { return full_.size() >= kWakeAt || (!full_.empty() && full_.back()->last); });
      caller_waits_ = false;
    }
    std::unique_ptr<Batch> b = std::move(full_.front());
    full_.pop_front();
    return b;
  }
  void Return(std::unique_ptr<Batch> b) {
    bool wake = false;
    {
      std::lock_guard<std::mutex> l(mu_);
      free_.push_back(std::move(b));
      wake = reader_waits_ && free_.size() >= kWakeAt;
    }
    if (wake) free_cv_.notify_one();
  }
  // Caller: wants no more batches; a reader waiting for an empty one gets nullptr.
  void Stop() {
    {
      std::lock_guard<std::mutex> l(mu_);
      stopped_ = true;
    }
    free_cv_.notify_one();
  }

 private:
  static constexpr size_t kWakeAt = kBatches / 2;
  std::mutex mu_;
  std::condition_variable free_cv_, full_cv_;
  std::vector<std::unique_ptr<Batch>> free_;
  std::deque<std::unique_ptr<Batch>> full_;
  bool stopped_ = false;
  bool reader_waits_ = false;
  bool caller_waits_ = false;
};

void AppendRecord(uint64_t seq, std::string_view input, std::string* out) {
  const auto len = static_cast<uint32_t>(input.size());
  char header[kRecordHeader];
  std::memcpy(header, &seq, sizeof(seq));
  std::memcpy(header + sizeof(seq), &len, sizeof(len));
  out->append(header, kRecordHeader).append(input);
}

// keys::GetBe64, inlined: the reading thread does it for every record.
bool LogKeySeq(const rocksdb::Slice& key, uint64_t* seq) {
  if (key.size() != 8) return false;
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(key.data()[i]);
  *seq = v;
  return true;
}

// The reading thread: the watch event records with seq >= from_seq into batches, then a last
// batch with the scan's status. The iterator lives and dies on this thread, before the caller
// returns (and so before the snapshot is released or the DB closed).
void ReadWatchEvents(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* inputs,
                     const rocksdb::Snapshot* snapshot, uint64_t from_seq, BatchQueue* queue) {
  ::pthread_setname_np(::pthread_self(), "cl-read-ahead");
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  ro.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(ro, inputs));
  std::unique_ptr<Batch> batch = queue->TakeFree();
  if (batch == nullptr) return;
  Status status;
  std::string_view input;
  for (it->Seek(keys::Be64(from_seq)); it->Valid(); it->Next()) {
    if (!keys::LogValueInput(ToView(it->value()), &input)) {
      status = Status::Corruption("input log: malformed envelope");
      break;
    }
    if (model::EncodedRecordType(input) != static_cast<uint8_t>(model::RecordType::kWatchEvent)) {
      continue;
    }
    uint64_t seq = 0;
    if (!LogKeySeq(it->key(), &seq)) {
      status = Status::Corruption("input log key");
      break;
    }
    if (input.size() > UINT32_MAX) {
      status = Status::Corruption("input log: a record of 4 GiB or more");
      break;
    }
    AppendRecord(seq, input, &batch->bytes);
    if (batch->bytes.size() >= kBatchBytes) {
      queue->PushFull(std::move(batch));
      batch = queue->TakeFree();
      if (batch == nullptr) return;  // the caller stopped
    }
  }
  if (status.ok()) status = FromRocks(it->status(), "input log scan");
  batch->last = true;
  batch->status = status;
  queue->PushFull(std::move(batch));
}

// Decodes the records of `batch` and calls fn for each. False when the scan ends here: fn
// returned false (*status stays OK) or a record does not decode (*status says why).
bool Deliver(const Batch& batch,
             const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn,
             model::WatchEventRef* ev, Status* status) {
  const char* p = batch.bytes.data();
  const char* const end = p + batch.bytes.size();
  while (p != end) {
    uint64_t seq = 0;
    uint32_t len = 0;
    std::memcpy(&seq, p, sizeof(seq));
    std::memcpy(&len, p + sizeof(seq), sizeof(len));
    p += kRecordHeader;
    *status = model::DecodeWatchEventRef(std::string_view(p, len), ev);
    if (!status->ok() || !fn(seq, *ev)) return false;
    p += len;
  }
  return true;
}

}  // namespace

Status RocksDbLedger::ScanWatchEventsReadAhead(
    uint64_t from_seq, const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  return ScanWatchEventsReadAheadAt(scope.snapshot(), from_seq, fn);
}

Status RocksDbLedger::ScanWatchEventsReadAheadAt(
    const rocksdb::Snapshot* snapshot, uint64_t from_seq,
    const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn) {
  BatchQueue queue;
  std::thread reader;
  try {
    reader = std::thread(ReadWatchEvents, db_.get(), cfs_[kInputsCf], snapshot, from_seq, &queue);
  } catch (const std::system_error&) {
    // No thread to be had: the same scan on this one.
    return ScanWatchEventsAt(snapshot, from_seq, fn);
  }
  // However this returns (a callback may throw), the reader is told to stop and joined first.
  struct StopAndJoin {
    BatchQueue& queue;
    std::thread& reader;
    ~StopAndJoin() {
      queue.Stop();
      reader.join();
    }
  } stop_and_join{queue, reader};
  Status status;
  model::WatchEventRef ev;
  for (bool more = true; more;) {
    std::unique_ptr<Batch> batch = queue.TakeFull();
    more = Deliver(*batch, fn, &ev, &status);
    if (more && batch->last) {
      status = batch->status;
      more = false;
    }
    queue.Return(std::move(batch));
  }
  return status;
}

}  // namespace cronledger::store
