// The audit indexer: the audit column family maintained from the decision log behind the commit,
// the reads past its watermark, and its verification against a rebuild (docs/ledger.md "The audit
// index").
//
// A commit writes the decision records only. The group that wrote them hands them to the indexer
// thread (moved, in seq order), which writes their index entries, the Job templates they refer to
// and the watermark (keys::kIndexedThrough) in one batch. The batch goes through the WAL without
// an fsync: a crash that loses it loses its watermark with it, and the next open indexes those
// decisions again from the log. The entries of a decision are a function of the decision and of
// the templates stored before it (cronjob_index::JobTemplateWriter), so indexing again, or a
// rebuild, writes the same bytes.
#include <rocksdb/iterator.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>

#include "store/keys.h"
#include "store/rocksdb_ledger.h"

namespace cronledger::store {
namespace {

std::string_view ToView(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }
rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }

// The longest the indexer waits for a full batch once it has work.
constexpr auto kIndexLinger = std::chrono::milliseconds(20);

// Job templates looked up in the database as it is and written into the indexer's batch.
class BatchTemplateStore final : public cronjob_index::TemplateStore {
 public:
  BatchTemplateStore(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf, rocksdb::WriteBatch* batch)
      : db_(db), cf_(cf), batch_(batch) {}
  Result<std::optional<std::string>> Get(std::string_view key) override {
    std::string value;
    const rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), cf_, ToSlice(key), &value);
    if (s.IsNotFound()) return std::optional<std::string>();
    if (!s.ok()) return FromRocks(s, "audit Job template read");
    return std::optional<std::string>(std::move(value));
  }
  Status Put(std::string_view key, std::string_view value) override {
    return FromRocks(batch_->Put(cf_, ToSlice(key), ToSlice(value)), "index batch");
  }

 private:
  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* cf_;
  rocksdb::WriteBatch* batch_;
};

// The templates a rebuild writes, in memory.
class RebuiltTemplates final : public cronjob_index::TemplateStore {
 public:
  Result<std::optional<std::string>> Get(std::string_view key) override {
    auto it = stored_.find(std::string(key));
    if (it == stored_.end()) return std::optional<std::string>();
    return std::optional<std::string>(it->second);
  }
  Status Put(std::string_view key, std::string_view value) override {
    stored_.insert_or_assign(std::string(key), std::string(value));
    return Status::Ok();
  }
  const std::map<std::string, std::string>& stored() const { return stored_; }

 private:
  std::map<std::string, std::string> stored_;
};

// The audit index entries of one decision record as stored (docs/ledger.md "Column families and
// keys"): the CronJob entry with its covering value, the action, time and reason entries. The one
// place that knows the layout: the indexer writes what it yields and a rebuild compares with it.
// The record is decoded without its Json members, whose bytes the value copies.
Status IndexEntries(cronjob_index::JobTemplateWriter& writer, std::string_view record,
                    uint64_t unit, cronjob_index::TemplateStore& templates, std::string* value,
                    const std::function<Status(std::string, std::string_view)>& put) {
  model::DecisionMembers members;
  CL_ASSIGN_OR_RETURN(const model::Decision d, model::DecodeDecisionRecordParts(record, &members));
  std::string suffix;
  keys::PutTimeKey(&suffix, d.time);
  keys::PutBe64(&suffix, d.seq);
  const std::string action(1, static_cast<char>(d.action));
  CL_RETURN_IF_ERROR(writer.EncodeStored(d, members, unit, templates, value));
  CL_RETURN_IF_ERROR(
      put(keys::ByCronJobPrefix(d.cron_job.namespace_, d.cron_job.name) + suffix, *value));
  CL_RETURN_IF_ERROR(put(keys::ByActionPrefix(d.action) + suffix, ""));
  CL_RETURN_IF_ERROR(put(keys::ByTimePrefix() + suffix, action));
  if (!d.reason.empty()) CL_RETURN_IF_ERROR(put(keys::ByReasonPrefix(d.reason) + suffix, action));
  return Status::Ok();
}

bool IsIndexEntryKey(std::string_view key) {
  return !key.empty() && (key[0] == 'c' || key[0] == 'a' || key[0] == 't' || key[0] == 'r');
}

// A readable index key for difference reports, e.g. "audit c prod/backup seq 12".
std::string DescribeIndexKey(std::string_view key) {
  if (key.starts_with("j")) return "audit Job template";
  uint64_t seq = 0;
  std::string out = "audit ";
  out += key.empty() ? '?' : key[0];
  if (!key.empty() && key[0] == 'c') {
    const size_t ns_end = key.find('\0', 1);
    const size_t name_end = ns_end == std::string_view::npos ? ns_end : key.find('\0', ns_end + 1);
    if (name_end != std::string_view::npos) {
      out.append(" ")
          .append(key.substr(1, ns_end - 1))
          .append("/")
          .append(key.substr(ns_end + 1, name_end - ns_end - 1));
    }
  } else if (!key.empty() && key[0] == 'r' && key.find('\0') != std::string_view::npos) {
    out.append(" ").append(key.substr(1, key.find('\0') - 1));
  }
  if (keys::SeqOfIndexKey(key, &seq)) out += " seq " + std::to_string(seq);
  return out;
}

// A stored CronJob entry of an older layout that reads back as the decision `record`: a v0 value
// (the decision log), a v1 value, or a v2 value holding the Job object inline where today's refers
// to a template. Not a difference; a repair rewrites it.
bool OlderLayoutOf(std::string_view stored, std::string_view rebuilt, std::string_view record) {
  model::DecisionMembers members;
  auto d = model::DecodeDecisionRecordParts(record, &members);
  model::Decision read;
  auto v = cronjob_index::DecodeIndexValue(stored, &read, /*members=*/true);
  if (!d.ok() || !v.ok()) return false;
  if (v->version == 0) return true;
  if (!(read == *d)) return false;
  if (v->version == cronjob_index::kV1) return true;
  model::Decision unused;
  auto today = cronjob_index::DecodeIndexValue(rebuilt, &unused, /*members=*/true);
  return today.ok() && v->has_job_object && today->has_job_object &&
         v->job_object.form == cronjob_index::kJobInline &&
         today->job_object.form == cronjob_index::kJobTemplate &&
         v->job_object.cbor == members.job_object_cbor;
}

}  // namespace

Status RocksDbLedger::StartIndexer() {
  auto stored = GetRaw(kAuditCf, keys::kIndexedThrough);
  uint64_t through = 0;
  if (stored.ok()) {
    if (!keys::GetBe64(*stored, &through)) return Status::Corruption("ledger: bad audit watermark");
  } else if (stored.status().IsNotFound()) {
    // Written by a build that indexed in its commits: indexed through its last decision.
    {
      std::lock_guard<std::mutex> l(mu_);
      through = committed_.last_decision_seq;
    }
    rocksdb::WriteOptions wo;
    wo.sync = true;
    CL_RETURN_IF_ERROR(
        FromRocks(db_->Put(wo, cfs_[kAuditCf], ToSlice(keys::kIndexedThrough), keys::Be64(through)),
                  "ledger: audit watermark"));
  } else {
    return stored.status();
  }
  {
    std::lock_guard<std::mutex> l(mu_);
    std::lock_guard<std::mutex> i(index_mu_);
    indexed_through_ = through;
    index_target_ = committed_.last_decision_seq;
  }
  index_thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), "cl-audit-index");
    IndexLoop();
  });
  return Status::Ok();
}

void RocksDbLedger::StopIndexer() {
  if (!index_thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> l(index_mu_);
    index_stopping_ = true;
  }
  index_cv_.notify_all();
  index_thread_.join();
}

void RocksDbLedger::IndexLoop() {
  std::vector<std::pair<uint64_t, std::string>> batch;  // (seq, the record as stored)
  std::unique_lock<std::mutex> l(index_mu_);
  while (true) {
    index_cv_.wait(l, [this] { return index_stopping_ || indexed_through_ < index_target_; });
    if (indexed_through_ >= index_target_) break;  // stopping, everything indexed
    // Lingers for a full batch: one write and one wake-up for many commits, not one each. Queries
    // do not wait for the index (they read past its watermark), so its lag costs them little.
    index_cv_.wait_for(l, kIndexLinger, [this] {
      return index_stopping_ || index_sync_wanted_ ||
             index_target_ - indexed_through_ >= kIndexBatch;
    });
    Status status;
    if (options_.before_index_batch) {
      l.unlock();
      status = options_.before_index_batch();
      l.lock();
    }
    const uint64_t next = indexed_through_ + 1;
    auto pop = [this] {
      index_queue_bytes_ -= index_queue_.front().second.size();
      index_queue_.pop_front();
    };
    while (!index_queue_.empty() && index_queue_.front().first < next) pop();
    batch.clear();
    uint64_t through = 0;
    if (!status.ok()) {
      l.unlock();
    } else if (!index_queue_.empty() && index_queue_.front().first == next) {
      while (!index_queue_.empty() && index_queue_.front().first == next + batch.size() &&
             batch.size() < kIndexBatch) {
        batch.push_back(std::move(index_queue_.front()));
        pop();
      }
      through = batch.back().first;
      l.unlock();
    } else {
      // Not handed over (before this open, or beyond the queue's bound): read from the log.
      uint64_t until = std::min(index_target_, next + kIndexBatch - 1);
      if (!index_queue_.empty()) until = std::min(until, index_queue_.front().first - 1);
      through = until;
      l.unlock();
      status = ScanDecisionBytes(next, [&](uint64_t seq, std::string_view record) {
        if (seq > until) return false;
        batch.emplace_back(seq, std::string(record));
        return true;
      });
      if (status.ok() && (batch.empty() || batch.front().first != next ||
                          batch.back().first != until || batch.size() != until - next + 1)) {
        status = Status::Corruption("audit index: the decision log lacks decisions " +
                                    std::to_string(next) + ".." + std::to_string(until));
      }
    }
    if (status.ok()) status = IndexBatch(batch);
    if (!status.ok()) {
      {
        std::lock_guard<std::mutex> m(mu_);
        if (poisoned_.ok()) FailLaterLocked(0, status.WithContext("ledger: audit index"));
      }
      l.lock();
      index_status_ = status;
      indexed_cv_.notify_all();
      break;
    }
    l.lock();
    indexed_through_ = through;
    if (indexed_through_ >= index_target_) index_sync_wanted_ = false;
    indexed_cv_.notify_all();
  }
}

Status RocksDbLedger::IndexBatch(const std::vector<std::pair<uint64_t, std::string>>& records) {
  rocksdb::WriteBatch batch;
  BatchTemplateStore templates(db_.get(), cfs_[kAuditCf], &batch);
  const uint64_t unit = ++index_batches_;
  std::string value;
  auto put = [&](std::string key, std::string_view v) {
    return FromRocks(batch.Put(cfs_[kAuditCf], key, ToSlice(v)), "index batch");
  };
  for (const auto& [seq, record] : records) {
    CL_RETURN_IF_ERROR(IndexEntries(job_templates_, record, unit, templates, &value, put));
  }
  CL_RETURN_IF_ERROR(put(std::string(keys::kIndexedThrough), keys::Be64(records.back().first)));
  std::lock_guard<std::mutex> w(wal_mu_);
  if (write_failed_.load()) return WriteHealth();
  const Status written = FromRocks(db_->Write(rocksdb::WriteOptions(), &batch), "index write");
  if (!written.ok()) write_failed_.store(true);
  return written;
}

Status RocksDbLedger::SyncAuditIndex() {
  if (read_only_) return Status::Ok();
  std::unique_lock<std::mutex> l(index_mu_);
  const uint64_t target = index_target_;
  index_sync_wanted_ = true;
  index_cv_.notify_one();
  indexed_cv_.wait(l, [&] { return indexed_through_ >= target || !index_status_.ok(); });
  return index_status_;
}

Result<std::optional<uint64_t>> RocksDbLedger::IndexedThroughAt(const rocksdb::Snapshot* snapshot) {
  auto stored = GetRaw(kAuditCf, keys::kIndexedThrough, snapshot);
  if (stored.status().IsNotFound()) return std::optional<uint64_t>();
  CL_RETURN_IF_ERROR(stored.status());
  uint64_t through = 0;
  if (!keys::GetBe64(*stored, &through)) return Status::Corruption("ledger: bad audit watermark");
  return std::optional<uint64_t>(through);
}

Status RocksDbLedger::TailDecisions(const rocksdb::Snapshot* snapshot,
                                    const std::function<bool(const model::Decision&)>& match,
                                    bool summary, std::vector<model::Decision>* out) {
  CL_ASSIGN_OR_RETURN(const std::optional<uint64_t> through, IndexedThroughAt(snapshot));
  if (!through) return Status::Ok();
  Status status;
  uint64_t read = 0;
  CL_RETURN_IF_ERROR(ScanDecisionBytesAt(snapshot, *through + 1, [&](uint64_t, std::string_view b) {
    // The query's terms are in the record part: the Json members are decoded only for a match
    // that wants them.
    model::DecisionMembers members;
    auto d = model::DecodeDecisionRecordParts(b, &members);
    if (d.ok() && match(*d) && !summary) d = model::DecodeDecisionRecord(b);
    if (!d.ok()) {
      status = d.status();
      return false;
    }
    ++read;
    if (match(*d)) out->push_back(std::move(*d));
    return true;
  }));
  tail_reads_.fetch_add(read, std::memory_order_relaxed);
  return status;
}

Status RocksDbLedger::VerifyIndex(const rocksdb::Snapshot* snapshot, RebuildReport* report,
                                  rocksdb::WriteBatch* fix) {
  CL_ASSIGN_OR_RETURN(const std::optional<uint64_t> through, IndexedThroughAt(snapshot));
  const uint64_t last = through ? *through : std::numeric_limits<uint64_t>::max();
  cronjob_index::JobTemplateWriter writer;
  RebuiltTemplates templates;
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  auto stored_put = [&](const std::string& key, std::string_view value) {
    return FromRocks(fix->Put(cfs_[kAuditCf], key, ToSlice(value)), "rebuild batch");
  };

  // The expected entries of a run of decisions, compared with the stored ones in one MultiGet.
  std::vector<std::pair<std::string, std::string>> expected;
  uint64_t missing = 0;              // expected entries the snapshot lacks
  std::vector<std::string> records;  // of the run
  std::vector<size_t> record_of;     // per expected entry
  auto compare = [&]() -> Status {
    std::vector<rocksdb::Slice> keys;
    keys.reserve(expected.size());
    for (const auto& e : expected) keys.push_back(ToSlice(e.first));
    std::vector<rocksdb::PinnableSlice> values(keys.size());
    std::vector<rocksdb::Status> statuses(keys.size());
    db_->MultiGet(ro, cfs_[kAuditCf], keys.size(), keys.data(), values.data(), statuses.data());
    for (size_t i = 0; i < keys.size(); ++i) {
      const auto& [key, want] = expected[i];
      if (statuses[i].IsNotFound()) {
        ++missing;
        report->differences.push_back({DescribeIndexKey(key), "", "present"});
        CL_RETURN_IF_ERROR(stored_put(key, want));
        continue;
      }
      CL_RETURN_IF_ERROR(FromRocks(statuses[i], "audit index read"));
      const std::string_view have = ToView(values[i]);
      if (have == want) continue;
      if (key[0] == 'c' && OlderLayoutOf(have, want, records[record_of[i]])) {
        ++report->index_older_layout;
      } else {
        report->differences.push_back({DescribeIndexKey(key), "other bytes", "rebuilt bytes"});
      }
      CL_RETURN_IF_ERROR(stored_put(key, want));
    }
    expected.clear();
    records.clear();
    record_of.clear();
    return Status::Ok();
  };

  std::string value;
  uint64_t entries = 0;
  Status status;
  CL_RETURN_IF_ERROR(ScanDecisionBytesAt(snapshot, 1, [&](uint64_t seq, std::string_view bytes) {
    if (seq > last) return false;
    records.emplace_back(bytes);
    ++report->decisions_indexed;
    status = IndexEntries(writer, records.back(), 0, templates, &value,
                          [&](std::string key, std::string_view v) {
                            expected.emplace_back(std::move(key), std::string(v));
                            record_of.push_back(records.size() - 1);
                            ++entries;
                            return Status::Ok();
                          });
    if (status.ok() && expected.size() >= 1024) status = compare();
    return status.ok();
  }));
  CL_RETURN_IF_ERROR(status);
  CL_RETURN_IF_ERROR(compare());
  report->index_entries = entries;

  // The templates the rebuilt values refer to.
  for (const auto& [key, want] : templates.stored()) {
    auto have = GetRaw(kAuditCf, key, snapshot);
    if (have.ok() && *have == want) continue;
    if (!have.ok() && !have.status().IsNotFound()) return have.status();
    report->differences.push_back(
        {DescribeIndexKey(key), have.ok() ? "other bytes" : "", "present"});
    CL_RETURN_IF_ERROR(stored_put(key, want));
  }

  // Entries no decision has: the snapshot holds every expected entry but the missing ones, so any
  // beyond that number is one; only then is each stored entry's decision read to find them.
  uint64_t stored_entries = 0;
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kAuditCf]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      if (IsIndexEntryKey(ToView(it->key()))) ++stored_entries;
    }
    CL_RETURN_IF_ERROR(FromRocks(it->status(), "audit index scan"));
  }
  if (stored_entries <= entries - missing) return Status::Ok();
  RebuiltTemplates scratch;  // the entries' keys alone are compared: any templates do
  cronjob_index::JobTemplateWriter keys_only;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kAuditCf]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string_view key = ToView(it->key());
    if (!IsIndexEntryKey(key)) continue;
    uint64_t seq = 0;
    bool expected_key = false;
    if (keys::SeqOfIndexKey(key, &seq) && seq >= 1 && seq <= last) {
      auto bytes = GetRaw(kDecisionsCf, keys::Be64(seq), snapshot);
      if (bytes.ok()) {
        // A record that does not decode has no entries: every entry naming it is extra.
        (void)IndexEntries(keys_only, *bytes, 0, scratch, &value,
                           [&](std::string k, std::string_view) {
                             expected_key = expected_key || k == key;
                             return Status::Ok();
                           });
      } else if (!bytes.status().IsNotFound()) {
        return bytes.status();
      }
    }
    if (expected_key) continue;
    report->differences.push_back({DescribeIndexKey(key), "present", ""});
    CL_RETURN_IF_ERROR(FromRocks(fix->Delete(cfs_[kAuditCf], it->key()), "rebuild batch"));
  }
  return FromRocks(it->status(), "audit index scan");
}

}  // namespace cronledger::store
