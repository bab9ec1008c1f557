// The read side of RocksDbLedger: view lookups, log scans, audit index scans, meta.
#include <rocksdb/iterator.h>

#include <algorithm>
#include <array>
#include <memory>
#include <set>
#include <unordered_set>
#include <utility>
#include <variant>

#include "model/json.h"
#include "store/cronjob_index.h"
#include "store/keys.h"
#include "store/raw_codec.h"
#include "store/rocksdb_ledger.h"

namespace cronledger::store {
namespace {

rocksdb::Slice ToSlice(std::string_view s) { return rocksdb::Slice(s.data(), s.size()); }
std::string_view ToView(const rocksdb::Slice& s) { return std::string_view(s.data(), s.size()); }

// The read-ahead of a whole-log scan's iterators (ReadOptions::readahead_size).
constexpr size_t kLogScanReadahead = size_t{2} << 20;

template <typename T>
Result<T> DecodeObject(std::string_view raw, Result<T> (*decode)(const model::Json&),
                       std::string_view what) {
  auto json = model::ParseJson(raw);
  if (!json.ok()) return json.status().WithContext(what);
  auto obj = decode(*json);
  if (!obj.ok()) return obj.status().WithContext(what);
  return obj;
}

// The decisions of one CronJob: what its index range holds.
std::function<bool(const model::Decision&)> OfCronJob(std::string_view ns, std::string_view name) {
  return [ns, name](const model::Decision& d) {
    return d.cron_job.namespace_ == ns && d.cron_job.name == name;
  };
}

}  // namespace

Result<std::string> RocksDbLedger::GetRaw(Cf cf, std::string_view key,
                                          const rocksdb::Snapshot* snapshot) {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  std::string value;
  rocksdb::Status s = db_->Get(ro, cfs_[cf], ToSlice(key), &value);
  if (!s.ok()) return FromRocks(s, std::string("read ") + CfName(cf));
  return value;
}

Result<ViewObject> RocksDbLedger::GetObjectAt(model::ObjectKind kind, std::string_view ns,
                                              std::string_view name,
                                              const rocksdb::Snapshot* snapshot) {
  CL_ASSIGN_OR_RETURN(std::string bytes,
                      GetRaw(kViewCf, view_key::Object(kind, ns, name), snapshot));
  ViewObject obj;
  CL_ASSIGN_OR_RETURN(obj.entry, DecodeObjectEntry(bytes));
  CL_RETURN_IF_ERROR(ViewedRaw(obj.entry.source_seq, snapshot, &obj.raw));
  return obj;
}

Status RocksDbLedger::InputRawAt(uint64_t seq, const rocksdb::Snapshot* snapshot,
                                 std::string* out) {
  CL_ASSIGN_OR_RETURN(const std::string stored, GetRaw(kRawCf, keys::Be64(seq), snapshot));
  return DecodeRaw(seq, stored, snapshot, out);
}

Status RocksDbLedger::ViewedRaw(uint64_t source_seq, const rocksdb::Snapshot* snapshot,
                                std::string* out) {
  const Status read = InputRawAt(source_seq, snapshot, out);
  // Retention never prunes what the view points at, so a miss is corruption.
  if (read.IsNotFound()) {
    return Status::Corruption("view points at missing raw bytes of seq " +
                              std::to_string(source_seq));
  }
  return read;
}

Status RocksDbLedger::ForEachViewEntryAt(char prefix_char, const rocksdb::Snapshot* snapshot,
                                         const std::function<Status(ObjectEntry entry)>& fn) {
  const std::string prefix(1, prefix_char);
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kViewCf]));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    CL_ASSIGN_OR_RETURN(ObjectEntry e, DecodeObjectEntry(ToView(it->value())));
    CL_RETURN_IF_ERROR(fn(std::move(e)));
  }
  return FromRocks(it->status(), "view scan");
}

Result<uint64_t> RocksDbLedger::LastInputSeqAt(const rocksdb::Snapshot* snapshot) {
  uint64_t seq = 0;
  auto last = GetRaw(kMetaCf, keys::kLastInputSeq, snapshot);
  if (last.ok() && !keys::GetBe64(*last, &seq)) {
    return Status::Corruption("ledger: bad meta last_input_seq");
  }
  return seq;
}

Result<ViewObject> RocksDbLedger::GetObject(model::ObjectKind kind, std::string_view ns,
                                            std::string_view name) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  return GetObjectAt(kind, ns, name, scope.snapshot());
}

Result<model::CronJob> RocksDbLedger::GetCronJob(std::string_view ns, std::string_view name) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  CL_ASSIGN_OR_RETURN(ViewObject obj,
                      GetObjectAt(model::ObjectKind::kCronJob, ns, name, scope.snapshot()));
  return DecodeObject<model::CronJob>(obj.raw, &model::DecodeCronJob, "stored CronJob");
}

Result<std::vector<std::string>> RocksDbLedger::OwnedJobNamesAt(std::string_view ns,
                                                                std::string_view owner,
                                                                const rocksdb::Snapshot* snapshot) {
  const std::string prefix = view_key::OwnerPrefix(ns, owner);
  std::vector<std::string> names;
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kViewCf]));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    names.emplace_back(ToView(it->key()).substr(prefix.size()));
  }
  CL_RETURN_IF_ERROR(FromRocks(it->status(), "jobs-by-owner scan"));
  return names;
}

Result<std::vector<model::Job>> RocksDbLedger::JobsByOwnerAt(std::string_view ns,
                                                             std::string_view owner,
                                                             const rocksdb::Snapshot* snapshot) {
  CL_ASSIGN_OR_RETURN(const std::vector<std::string> names, OwnedJobNamesAt(ns, owner, snapshot));
  std::vector<model::Job> jobs;
  for (const auto& name : names) {
    CL_ASSIGN_OR_RETURN(ViewObject obj, GetObjectAt(model::ObjectKind::kJob, ns, name, snapshot));
    CL_ASSIGN_OR_RETURN(model::Job job,
                        DecodeObject<model::Job>(obj.raw, &model::DecodeJob, "stored Job"));
    jobs.push_back(std::move(job));
  }
  return jobs;
}

Result<std::vector<model::Job>> RocksDbLedger::ListJobsByOwner(std::string_view ns,
                                                               std::string_view owner) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  return JobsByOwnerAt(ns, owner, scope.snapshot());
}

Result<std::vector<ObjectEntry>> RocksDbLedger::ListCronJobEntries() {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  std::vector<ObjectEntry> out;
  CL_RETURN_IF_ERROR(
      ForEachViewEntryAt(view_key::kCronJobPrefix, scope.snapshot(), [&out](ObjectEntry e) {
        out.push_back(std::move(e));
        return Status::Ok();
      }));
  return out;
}

Result<std::vector<model::CronJob>> RocksDbLedger::ListCronJobs() {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  std::vector<model::CronJob> out;
  std::string raw;
  auto decode = [&](const ObjectEntry& e) -> Status {
    CL_RETURN_IF_ERROR(ViewedRaw(e.source_seq, scope.snapshot(), &raw));
    CL_ASSIGN_OR_RETURN(model::CronJob cj,
                        DecodeObject<model::CronJob>(raw, &model::DecodeCronJob, "stored CronJob"));
    out.push_back(std::move(cj));
    return Status::Ok();
  };
  CL_RETURN_IF_ERROR(ForEachViewEntryAt(view_key::kCronJobPrefix, scope.snapshot(), decode));
  return out;
}

Result<CronJobView> RocksDbLedger::ReadCronJobView(std::string_view ns, std::string_view name) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  CronJobView v;
  CL_ASSIGN_OR_RETURN(ViewObject obj,
                      GetObjectAt(model::ObjectKind::kCronJob, ns, name, scope.snapshot()));
  v.cron_job_entry = obj.entry;
  CL_ASSIGN_OR_RETURN(
      v.cron_job, DecodeObject<model::CronJob>(obj.raw, &model::DecodeCronJob, "stored CronJob"));
  CL_ASSIGN_OR_RETURN(v.jobs, JobsByOwnerAt(ns, name, scope.snapshot()));
  CL_ASSIGN_OR_RETURN(v.last_input_seq, LastInputSeqAt(scope.snapshot()));
  return v;
}

Result<uint64_t> RocksDbLedger::ScanViewObjects(
    const std::function<Status(ViewObject object)>& fn) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  const rocksdb::Snapshot* snapshot = scope.snapshot();
  auto with_raw = [&](ObjectEntry e) -> Status {
    ViewObject obj{std::move(e), {}};
    CL_RETURN_IF_ERROR(ViewedRaw(obj.entry.source_seq, snapshot, &obj.raw));
    return fn(std::move(obj));
  };
  for (const char prefix : {view_key::kCronJobPrefix, view_key::kJobPrefix}) {
    CL_RETURN_IF_ERROR(ForEachViewEntryAt(prefix, snapshot, with_raw));
  }
  return LastInputSeqAt(snapshot);
}

Result<std::string> RocksDbLedger::GetInputRaw(uint64_t seq) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  std::string raw;
  CL_RETURN_IF_ERROR(InputRawAt(seq, scope.snapshot(), &raw));
  return raw;
}

Result<std::string> RocksDbLedger::GetResourceVersion(std::string_view resource) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  CL_ASSIGN_OR_RETURN(std::string bytes,
                      GetRaw(kViewCf, view_key::Resource(resource), scope.snapshot()));
  CL_ASSIGN_OR_RETURN(ResourceVersionEntry e, DecodeResourceVersionEntry(bytes));
  return e.resource_version;
}

Result<std::string> RocksDbLedger::GetControllerState(std::string_view key) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  return GetRaw(kStateCf, key, scope.snapshot());
}

Status RocksDbLedger::ScanInputs(uint64_t from_seq, bool with_raw,
                                 const std::function<bool(const LogRecord&)>& fn) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  return ScanInputsAt(scope.snapshot(), from_seq, with_raw, fn);
}

Status Ledger::ScanWatchEvents(
    uint64_t from_seq, const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn) {
  return ScanInputs(from_seq, false, [&fn](const LogRecord& rec) {
    const auto* ev = std::get_if<model::WatchEvent>(&rec.input);
    return ev == nullptr || fn(rec.seq, model::WatchEventRef::Of(*ev));
  });
}

Status Ledger::ScanWatchEventsReadAhead(
    uint64_t from_seq, const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn) {
  return ScanWatchEvents(from_seq, fn);
}

Status RocksDbLedger::ScanWatchEvents(
    uint64_t from_seq, const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  return ScanWatchEventsAt(scope.snapshot(), from_seq, fn);
}

Status RocksDbLedger::ScanWatchEventsAt(
    const rocksdb::Snapshot* snapshot, uint64_t from_seq,
    const std::function<bool(uint64_t, const model::WatchEventRef&)>& fn) {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kInputsCf]));
  model::WatchEventRef ev;
  std::string_view input;
  for (it->Seek(keys::Be64(from_seq)); it->Valid(); it->Next()) {
    // The fold needs no recorded_at: skip the envelope instead of decoding it.
    if (!keys::LogValueInput(ToView(it->value()), &input)) {
      return Status::Corruption("input log: malformed envelope");
    }
    if (model::EncodedRecordType(input) != static_cast<uint8_t>(model::RecordType::kWatchEvent)) {
      continue;
    }
    uint64_t seq = 0;
    if (!keys::GetBe64(ToView(it->key()), &seq)) return Status::Corruption("input log key");
    CL_RETURN_IF_ERROR(model::DecodeWatchEventRef(input, &ev));
    if (!fn(seq, ev)) break;
  }
  return FromRocks(it->status(), "input log scan");
}

Status RocksDbLedger::ScanInputsAt(const rocksdb::Snapshot* snapshot, uint64_t from_seq,
                                   bool with_raw, const std::function<bool(const LogRecord&)>& fn) {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  // A log scan reads each block once: it does not fill the block cache (which would evict the
  // view's and the indexes' hot blocks and cost an insert per block; replay --verify +3-5%).
  ro.fill_cache = false;
  // And it reads the files front to back: in large reads (one pread per block otherwise, 4-5 per
  // KiB of log; kLogScanReadahead per file iterator, a few at a time).
  ro.readahead_size = kLogScanReadahead;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kInputsCf]));
  std::unique_ptr<rocksdb::Iterator> raw_it;
  if (with_raw) raw_it.reset(db_->NewIterator(ro, cfs_[kRawCf]));
  // One record per record type, each decoded into again and again: its strings keep their
  // storage (the log's types alternate, so one record switching type would allocate them anew).
  std::array<LogRecord, std::variant_size_v<model::Input> + 1> recs;
  for (it->Seek(keys::Be64(from_seq)); it->Valid(); it->Next()) {
    uint64_t seq = 0;
    if (!keys::GetBe64(ToView(it->key()), &seq)) return Status::Corruption("input log key");
    CL_ASSIGN_OR_RETURN(keys::LogValue v, keys::DecodeLogValue(ToView(it->value())));
    const uint8_t type = model::EncodedRecordType(v.input);
    LogRecord& rec = recs[type < recs.size() ? type : 0];
    rec.seq = seq;
    CL_RETURN_IF_ERROR(model::DecodeInputInto(v.input, &rec.input));  // reuses rec's strings
    rec.recorded_at = v.recorded_at;
    rec.raw_pruned = (v.flags & keys::kFlagRawPruned) != 0;
    auto* ev = std::get_if<model::WatchEvent>(&rec.input);
    if (raw_it && ev != nullptr && !rec.raw_pruned) {
      // The raw column family has a key for every watch event with bytes, in the same order.
      const std::string key = keys::Be64(rec.seq);
      // Usually the next key: step to it, seek only when that does not reach it.
      if (raw_it->Valid() && raw_it->key().compare(key) < 0) raw_it->Next();
      if (!raw_it->Valid() || raw_it->key().compare(key) < 0) raw_it->Seek(key);
      if (raw_it->Valid() && raw_it->key() == rocksdb::Slice(key)) {
        CL_RETURN_IF_ERROR(DecodeRaw(rec.seq, ToView(raw_it->value()), snapshot, &ev->raw));
      }
    }
    if (!fn(rec)) break;
  }
  CL_RETURN_IF_ERROR(FromRocks(it->status(), "input log scan"));
  if (raw_it) CL_RETURN_IF_ERROR(FromRocks(raw_it->status(), "raw scan"));
  return Status::Ok();
}

Status RocksDbLedger::ScanDecisions(uint64_t from_seq,
                                    const std::function<bool(const model::Decision&)>& fn) {
  // The stored bytes, decoded: a record that does not decode ends the scan with its error.
  Status decoded;
  CL_RETURN_IF_ERROR(ScanDecisionBytes(from_seq, [&](uint64_t, std::string_view bytes) {
    auto d = model::DecodeDecisionRecord(bytes);
    if (!d.ok()) {
      decoded = d.status();
      return false;
    }
    return fn(*d);
  }));
  return decoded;
}

Status Ledger::ScanDecisionBytes(uint64_t from_seq,
                                 const std::function<bool(uint64_t, std::string_view)>& fn) {
  std::string bytes;
  return ScanDecisions(from_seq, [&](const model::Decision& d) {
    bytes.clear();
    model::EncodeDecisionRecord(d, &bytes);
    return fn(d.seq, bytes);
  });
}

Status RocksDbLedger::ScanDecisionBytes(uint64_t from_seq,
                                        const std::function<bool(uint64_t, std::string_view)>& fn) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  return ScanDecisionBytesAt(scope.snapshot(), from_seq, fn);
}

Status RocksDbLedger::ScanDecisionBytesAt(
    const rocksdb::Snapshot* snapshot, uint64_t from_seq,
    const std::function<bool(uint64_t, std::string_view)>& fn) {
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  ro.fill_cache = false;  // as ScanInputsAt: a log scan reads each block once, in large reads
  ro.readahead_size = kLogScanReadahead;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kDecisionsCf]));
  for (it->Seek(keys::Be64(from_seq)); it->Valid(); it->Next()) {
    uint64_t seq = 0;
    if (!keys::GetBe64(ToView(it->key()), &seq)) return Status::Corruption("decision log key");
    if (!fn(seq, ToView(it->value()))) break;
  }
  return FromRocks(it->status(), "decision log scan");
}

Result<std::vector<model::Decision>> RocksDbLedger::IndexScan(
    const std::string& prefix, Time from, Time to, size_t limit,
    std::optional<model::DecisionAction> action, Cover cover,
    const std::function<bool(const model::Decision&)>& match) {
  std::string start = prefix;
  keys::PutTimeKey(&start, from);
  std::string end = prefix;
  keys::PutTimeKey(&end, to);
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  rocksdb::ReadOptions ro;
  ro.snapshot = scope.snapshot();
  const rocksdb::Slice upper(end);
  ro.iterate_upper_bound = &upper;
  // The range is read first and decoded afterwards into a vector of the exact size: a Decision is
  // large, and growing a vector of them while reading moved every decoded record several times.
  // Per matching entry: its seq and the end of its value in `values` (empty unless the value
  // is to be decoded).
  std::vector<std::pair<uint64_t, size_t>> matched;
  std::string values;
  uint64_t entries = 0;
  {
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kAuditCf]));
    for (it->Seek(start); it->Valid() && (limit == 0 || matched.size() < limit); it->Next()) {
      ++entries;
      const std::string_view value = ToView(it->value());
      if (action &&
          (value.size() != 1 || static_cast<uint8_t>(value[0]) != static_cast<uint8_t>(*action))) {
        continue;
      }
      uint64_t seq = 0;
      if (!keys::SeqOfIndexKey(ToView(it->key()), &seq)) return Status::Corruption("audit key");
      // A whole record of a v1 value that omits a Json member is read from the log without
      // decoding the value.
      const bool omits = value.size() >= 2 &&
                         static_cast<uint8_t>(value[0]) == cronjob_index::kV1 && value[1] != 0;
      if (cover == Cover::kSummary || (cover == Cover::kFull && !omits)) values.append(value);
      matched.emplace_back(seq, values.size());
    }
    CL_RETURN_IF_ERROR(FromRocks(it->status(), "audit index scan"));
  }
  std::vector<model::Decision> out(matched.size());
  // The decisions the entries do not cover: (seq, slot in out), read from the log afterwards.
  std::vector<std::pair<uint64_t, size_t>> from_log;
  // Whole records whose Job object refers to a template: (slot in out, the reference).
  std::vector<std::pair<size_t, cronjob_index::JobObjectRef>> templated;
  size_t begin = 0;
  for (size_t i = 0; i < matched.size(); ++i) {
    const auto [seq, end_of_value] = matched[i];
    const std::string_view value(values.data() + begin, end_of_value - begin);
    begin = end_of_value;
    CL_ASSIGN_OR_RETURN(
        cronjob_index::IndexValue v,
        cronjob_index::DecodeIndexValue(value, &out[i], /*members=*/cover == Cover::kFull));
    if (v.version != 0 && out[i].seq != seq) {
      return Status::Corruption("audit CronJob index value of seq " + std::to_string(seq) +
                                " holds seq " + std::to_string(out[i].seq));
    }
    if (v.version == 0 ||
        (cover == Cover::kFull && v.version == cronjob_index::kV1 && v.omitted != 0)) {
      from_log.emplace_back(seq, i);
      continue;
    }
    if (cover != Cover::kFull || v.version != cronjob_index::kV2) continue;
    if (v.has_job_object) {
      if (v.job_object.form == cronjob_index::kJobInline) {
        CL_ASSIGN_OR_RETURN(out[i].job_object,
                            cronjob_index::DecodeCbor(v.job_object.cbor, "audit Job object"));
      } else {
        templated.emplace_back(i, v.job_object);
      }
    }
    if (v.has_status) {
      CL_ASSIGN_OR_RETURN(out[i].status, cronjob_index::DecodeCbor(v.status_cbor, "audit status"));
    }
  }
  if (!templated.empty()) {
    CL_RETURN_IF_ERROR(RestoreTemplatedJobObjects(scope.snapshot(), templated, &out, &from_log));
  }
  index_entries_.fetch_add(entries, std::memory_order_relaxed);
  from_index_.fetch_add(out.size() - from_log.size(), std::memory_order_relaxed);
  CL_RETURN_IF_ERROR(
      ReadLoggedDecisions(scope.snapshot(), from_log, cover == Cover::kSummary, &out));
  // The decisions committed after the index's watermark, from the log at the same snapshot.
  std::vector<model::Decision> tail;
  CL_RETURN_IF_ERROR(TailDecisions(
      scope.snapshot(),
      [&](const model::Decision& d) { return !(d.time < from) && d.time < to && match(d); },
      cover == Cover::kSummary, &tail));
  if (tail.empty()) return out;
  // In index order (time, then seq); an entry past the watermark (written by an older build after
  // this one) is in both.
  std::unordered_set<uint64_t> indexed;
  for (const model::Decision& d : out) indexed.insert(d.seq);
  for (model::Decision& d : tail) {
    if (!indexed.contains(d.seq)) out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const model::Decision& a, const model::Decision& b) {
    return a.time < b.time || (a.time == b.time && a.seq < b.seq);
  });
  if (limit != 0 && out.size() > limit) out.resize(limit);
  return out;
}

Status RocksDbLedger::RestoreTemplatedJobObjects(
    const rocksdb::Snapshot* snapshot,
    const std::vector<std::pair<size_t, cronjob_index::JobObjectRef>>& templated,
    std::vector<model::Decision>* out, std::vector<std::pair<uint64_t, size_t>>* from_log) {
  // The distinct templates, in order of first use (a CronJob's range refers to one per spec
  // version it had), read at the scan's snapshot in one MultiGet and decoded once each.
  struct Template {
    uint64_t id;
    const model::CronJobRef* cron_job;
  };
  std::vector<Template> distinct;
  std::vector<size_t> template_of(templated.size());
  for (size_t k = 0; k < templated.size(); ++k) {
    const model::CronJobRef& cj = (*out)[templated[k].first].cron_job;
    const uint64_t id = templated[k].second.template_id;
    size_t t = 0;
    while (t < distinct.size() && !(distinct[t].id == id && distinct[t].cron_job->name == cj.name &&
                                    distinct[t].cron_job->namespace_ == cj.namespace_)) {
      ++t;
    }
    if (t == distinct.size()) distinct.push_back({id, &cj});
    template_of[k] = t;
  }
  std::vector<std::string> key_bytes;
  for (const Template& t : distinct) {
    key_bytes.push_back(keys::JobTemplateKey(t.cron_job->namespace_, t.cron_job->name, t.id));
  }
  std::vector<rocksdb::Slice> keys(key_bytes.begin(), key_bytes.end());
  std::vector<rocksdb::PinnableSlice> values(keys.size());
  std::vector<rocksdb::Status> statuses(keys.size());
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  db_->MultiGet(ro, cfs_[kAuditCf], keys.size(), keys.data(), values.data(), statuses.data());
  template_reads_.fetch_add(keys.size(), std::memory_order_relaxed);
  std::vector<std::optional<model::Json>> templates(keys.size());
  for (size_t t = 0; t < keys.size(); ++t) {
    // A missing template (never the case for a value this build wrote) leaves its decisions to
    // the decision log.
    if (statuses[t].IsNotFound()) continue;
    CL_RETURN_IF_ERROR(FromRocks(statuses[t], "read audit Job template"));
    CL_ASSIGN_OR_RETURN(templates[t], cronjob_index::DecodeTemplateValue(ToView(values[t])));
  }
  for (size_t k = 0; k < templated.size(); ++k) {
    const auto& [slot, ref] = templated[k];
    model::Decision& d = (*out)[slot];
    const std::optional<model::Json>& tmpl = templates[template_of[k]];
    if (!tmpl) {
      from_log->emplace_back(d.seq, slot);
      continue;
    }
    CL_RETURN_IF_ERROR(cronjob_index::RestoreJobObject(ref, *tmpl, d, &d.job_object));
  }
  // ReadLoggedDecisions fills slots in any order; keep the log's key order for its MultiGets.
  std::sort(from_log->begin(), from_log->end());
  return Status::Ok();
}

Status RocksDbLedger::ReadLoggedDecisions(const rocksdb::Snapshot* snapshot,
                                          const std::vector<std::pair<uint64_t, size_t>>& wanted,
                                          bool summary, std::vector<model::Decision>* out) {
  // Batches of MultiGet: one sorted pass through the log's files per batch, not one lookup each.
  constexpr size_t kBatch = 256;
  rocksdb::ReadOptions ro;
  ro.snapshot = snapshot;
  std::vector<std::string> key_bytes(std::min(kBatch, wanted.size()));
  std::vector<rocksdb::Slice> keys(key_bytes.size());
  std::vector<rocksdb::PinnableSlice> values(key_bytes.size());
  std::vector<rocksdb::Status> statuses(key_bytes.size());
  for (size_t first = 0; first < wanted.size(); first += kBatch) {
    const size_t n = std::min(kBatch, wanted.size() - first);
    for (size_t i = 0; i < n; ++i) {
      key_bytes[i] = keys::Be64(wanted[first + i].first);
      keys[i] = ToSlice(key_bytes[i]);
      values[i].Reset();
    }
    db_->MultiGet(ro, cfs_[kDecisionsCf], n, keys.data(), values.data(), statuses.data());
    for (size_t i = 0; i < n; ++i) {
      CL_RETURN_IF_ERROR(FromRocks(statuses[i], "read decisions"));
      model::Decision& d = (*out)[wanted[first + i].second];
      CL_ASSIGN_OR_RETURN(d, model::DecodeDecisionRecord(ToView(values[i])));
      if (summary) {
        d.job_object = nullptr;
        d.status = nullptr;
      }
    }
    log_reads_.fetch_add(n, std::memory_order_relaxed);
  }
  return Status::Ok();
}

Result<std::vector<model::Decision>> RocksDbLedger::DecisionsByCronJob(std::string_view ns,
                                                                       std::string_view name,
                                                                       Time from, Time to,
                                                                       size_t limit) {
  return IndexScan(keys::ByCronJobPrefix(ns, name), from, to, limit, std::nullopt, Cover::kFull,
                   OfCronJob(ns, name));
}

Result<std::vector<model::Decision>> RocksDbLedger::DecisionSummariesByCronJob(
    std::string_view ns, std::string_view name, Time from, Time to, size_t limit) {
  return IndexScan(keys::ByCronJobPrefix(ns, name), from, to, limit, std::nullopt, Cover::kSummary,
                   OfCronJob(ns, name));
}

Result<std::vector<model::Decision>> RocksDbLedger::DecisionsByActionReason(
    std::optional<model::DecisionAction> action, std::string_view reason, Time from, Time to,
    size_t limit) {
  auto match = [&](const model::Decision& d) {
    return (!action || d.action == *action) && (reason.empty() || d.reason == reason);
  };
  if (!reason.empty()) {
    return IndexScan(keys::ByReasonPrefix(reason), from, to, limit, action, Cover::kNone, match);
  }
  if (action) {
    return IndexScan(keys::ByActionPrefix(*action), from, to, limit, std::nullopt, Cover::kNone,
                     match);
  }
  return IndexScan(keys::ByTimePrefix(), from, to, limit, std::nullopt, Cover::kNone, match);
}

DecisionReadStats RocksDbLedger::DecisionReads() const {
  return {index_entries_.load(std::memory_order_relaxed),
          from_index_.load(std::memory_order_relaxed), log_reads_.load(std::memory_order_relaxed),
          template_reads_.load(std::memory_order_relaxed),
          tail_reads_.load(std::memory_order_relaxed)};
}

Result<std::vector<model::Decision>> Ledger::DecisionSummariesByCronJob(std::string_view ns,
                                                                        std::string_view name,
                                                                        Time from, Time to,
                                                                        size_t limit) {
  CL_ASSIGN_OR_RETURN(std::vector<model::Decision> out,
                      DecisionsByCronJob(ns, name, from, to, limit));
  for (model::Decision& d : out) {
    d.job_object = nullptr;
    d.status = nullptr;
  }
  return out;
}

Result<std::vector<std::string>> Ledger::DecisionCronJobNames(std::string_view ns) {
  std::set<std::string> names;
  const Status s = ScanDecisions(0, [&](const model::Decision& d) {
    if (d.cron_job.namespace_ == ns) names.insert(d.cron_job.name);
    return true;
  });
  if (!s.ok()) return s;
  return std::vector<std::string>(names.begin(), names.end());
}

Result<std::vector<std::string>> RocksDbLedger::DecisionCronJobNames(std::string_view ns) {
  // "c" ns "\0": the CronJob index keys of the namespace ("c" ns "\0" name "\0" time seq).
  std::string prefix = keys::ByCronJobPrefix(ns, "");
  prefix.pop_back();
  std::string end = prefix;
  end.back() = '\1';
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  rocksdb::ReadOptions ro;
  ro.snapshot = scope.snapshot();
  const rocksdb::Slice upper(end);
  ro.iterate_upper_bound = &upper;
  std::vector<std::string> names;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kAuditCf]));
  std::string target = prefix;
  for (it->Seek(target); it->Valid(); it->Seek(target)) {
    const std::string_view key = ToView(it->key());
    const size_t name_end = key.find('\0', prefix.size());
    if (!key.starts_with(prefix) || name_end == std::string_view::npos) {
      return Status::Corruption("audit key: CronJob index key without a name");
    }
    names.emplace_back(key.substr(prefix.size(), name_end - prefix.size()));
    // Just past every key of this name: "\1" sorts after the "\0" that ends it and before any
    // longer name that shares it as a prefix ("a" < "a\1" < "a-b", "ab").
    target.assign(prefix).append(names.back()).push_back('\1');
  }
  CL_RETURN_IF_ERROR(FromRocks(it->status(), "audit CronJob names scan"));
  std::vector<model::Decision> tail;
  CL_RETURN_IF_ERROR(TailDecisions(
      scope.snapshot(), [&](const model::Decision& d) { return d.cron_job.namespace_ == ns; },
      /*summary=*/true, &tail));
  if (tail.empty()) return names;
  for (const model::Decision& d : tail) names.push_back(d.cron_job.name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

Result<std::vector<QuarantineEntry>> RocksDbLedger::ListQuarantine(uint64_t from_id, size_t limit) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  std::vector<QuarantineEntry> out;
  rocksdb::ReadOptions ro;
  ro.snapshot = scope.snapshot();
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, cfs_[kQuarantineCf]));
  for (it->Seek(keys::Be64(from_id)); it->Valid() && (limit == 0 || out.size() < limit);
       it->Next()) {
    uint64_t id = 0;
    if (!keys::GetBe64(ToView(it->key()), &id)) return Status::Corruption("quarantine key");
    CL_ASSIGN_OR_RETURN(QuarantineEntry q, keys::DecodeQuarantine(id, ToView(it->value())));
    out.push_back(std::move(q));
  }
  CL_RETURN_IF_ERROR(FromRocks(it->status(), "quarantine scan"));
  return out;
}

Result<LedgerMeta> RocksDbLedger::Meta() {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  LedgerMeta m;
  {
    std::lock_guard<std::mutex> l(mu_);
    m.last_input_seq = committed_.last_input_seq;
    m.last_decision_seq = committed_.last_decision_seq;
    m.quarantine_count = committed_.last_quarantine_id;
  }
  CL_ASSIGN_OR_RETURN(std::string version, GetRaw(kMetaCf, keys::kSchemaVersion, scope.snapshot()));
  m.schema_version = std::atoi(version.c_str());
  return m;
}

Result<std::string> RocksDbLedger::GetSourcePosition(std::string_view source) {
  ReadScope scope(this);
  CL_RETURN_IF_ERROR(scope.status());
  return GetRaw(kMetaCf, keys::SourceKey(source), scope.snapshot());
}

}  // namespace cronledger::store
