#include "ingest/kafka_source.h"

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>

#include "model/watch_decoder.h"

namespace cronledger::ingest {

struct KafkaEventSource::Impl {
  Impl(store::Ledger& l, KafkaSourceOptions o) : ledger(l), options(std::move(o)) {}
  ~Impl() {
    if (rk == nullptr) return;
    // Leaves the group. The revocation this causes commits a batch still pending (inputs with
    // their offsets, so consistent) unless the source failed, in which case Flush() drops it and
    // it is read again from the stored offsets next time.
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
  }

  using Partitioner = int32_t (*)(const rd_kafka_topic_t*, const void*, size_t, int32_t, void*,
                                  void*);

  Status Flush();
  void OnRebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions);
  void Add(const rd_kafka_message_t& m);
  bool Repeat(const model::WatchEvent& e);
  // Ownership (see the header): the topic's partition count from the cluster's metadata.
  bool RefreshPartitionCount();
  void NoteKey(std::string_view key, int32_t partition);
  // Partitions that reached their end are caught up once what was read from them is committed.
  void ReportCaughtUp();

  store::Ledger& ledger;
  const KafkaSourceOptions options;
  rd_kafka_t* rk = nullptr;
  model::WatchDecoder decoder;
  model::DecodedDocument decoded;
  std::string padded;
  std::map<int32_t, int64_t> next;        // assigned partition -> next offset to ingest
  store::UnitOfWork batch;                // built by Add(), committed by Flush()
  std::map<int32_t, int64_t> batch_next;  // partitions the batch advances
  // Objects the batch changes: "<kind>/<ns>/<name>" -> resourceVersion, "" once deleted.
  std::map<std::string, std::string> batch_objects;
  KafkaIngestProgress counts;  // of the current Poll() call
  Status failed;
  Partitioner partitioner = &rd_kafka_msg_partitioner_consistent_random;
  std::set<int32_t> eof;       // assigned partitions whose end was reached, not yet reported
  bool need_metadata = false;  // the partition count is to be (re)read
  // Shared with the threads that ask about ownership (OwnsKey, ...).
  mutable std::mutex own_mu;
  int32_t partition_count = 0;  // 0: not known yet
  bool assigned_once = false;
  std::set<int32_t> assigned;
  std::set<int32_t> caught_up;  // a subset of `assigned`
  // Keys seen on another partition than the partitioner gives (a producer with another
  // partitioner): where they really are.
  std::map<std::string, int32_t, std::less<>> seen_on;
  std::atomic<uint64_t> misrouted{0};
};

namespace {

void OnLog(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  const auto* impl = static_cast<const KafkaEventSource::Impl*>(rd_kafka_opaque(rk));
  if (impl != nullptr && impl->options.log) {
    impl->options.log(level, fac, buf);
  } else if (level <= 4) {
    std::fprintf(stderr, "rdkafka %s: %s\n", fac, buf);
  }
}

void OnRebalanceCb(rd_kafka_t* rk, rd_kafka_resp_err_t err,
                   rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  (void)rk;
  static_cast<KafkaEventSource::Impl*>(opaque)->OnRebalance(err, partitions);
}

// The producers' partitioner by its librdkafka name (the `partitioner` property), nullptr when
// it is not a key hash. A key is only ever hashed (keys are never empty here), so the topic
// handle the random variants would need for an empty key is not passed.
KafkaEventSource::Impl::Partitioner PartitionerNamed(std::string_view name) {
  const std::pair<std::string_view, KafkaEventSource::Impl::Partitioner> known[] = {
      {"consistent_random", &rd_kafka_msg_partitioner_consistent_random},
      {"consistent", &rd_kafka_msg_partitioner_consistent},
      {"murmur2", &rd_kafka_msg_partitioner_murmur2},
      {"murmur2_random", &rd_kafka_msg_partitioner_murmur2_random},
      {"fnv1a", &rd_kafka_msg_partitioner_fnv1a},
      {"fnv1a_random", &rd_kafka_msg_partitioner_fnv1a_random}};
  for (const auto& [n, fn] : known) {
    if (n == name) return fn;
  }
  return nullptr;
}

Result<rd_kafka_conf_t*> NewConf(const KafkaSourceOptions& o, KafkaEventSource::Impl* impl) {
  for (const auto& [key, value] : o.properties) {
    if (key == "enable.auto.commit" || key == "enable.auto.offset.store" || key == "group.id") {
      return Status::InvalidArgument("kafka property " + key +
                                     " is set by cronledger and cannot be overridden");
    }
    if (key == "partitioner") {
      impl->partitioner = PartitionerNamed(value);
      if (impl->partitioner == nullptr) {
        return Status::InvalidArgument(
            "kafka property partitioner must be a key hash (consistent_random, consistent, "
            "murmur2, murmur2_random, fnv1a, fnv1a_random): watch events are keyed by CronJob");
      }
    }
  }
  std::vector<std::pair<std::string, std::string>> props = o.properties;
  props.emplace_back("bootstrap.servers", o.brokers);
  props.emplace_back("group.id", o.group_id);
  props.emplace_back("enable.auto.commit", "false");
  props.emplace_back("enable.auto.offset.store", "false");
  // The end of each partition is reported (PARTITION_EOF): how a partition is known caught up.
  props.emplace_back("enable.partition.eof", "true");
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& [key, value] : props) {
    if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr, sizeof(errstr)) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      // errstr may quote the value (a password, say); only the key is reported.
      return Status::InvalidArgument("invalid kafka property " + key);
    }
  }
  rd_kafka_conf_set_opaque(conf, impl);
  rd_kafka_conf_set_log_cb(conf, &OnLog);
  rd_kafka_conf_set_rebalance_cb(conf, &OnRebalanceCb);
  return conf;
}

}  // namespace

std::string KafkaPartitionSource(std::string_view topic, int32_t partition) {
  return "kafka:" + std::string(topic) + "/" + std::to_string(partition);
}

std::string EncodeKafkaPosition(int64_t next_offset) {
  return "next=" + std::to_string(next_offset);
}

Result<int64_t> DecodeKafkaPosition(std::string_view s) {
  constexpr std::string_view kPrefix = "next=";
  int64_t next = 0;
  if (s.substr(0, kPrefix.size()) != kPrefix) return Status::Corruption("bad kafka position");
  const char* begin = s.data() + kPrefix.size();
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, next);
  if (ec != std::errc() || ptr != end || begin == end || next < 0) {
    return Status::Corruption("bad kafka position");
  }
  return next;
}

Status KafkaEventSource::Impl::Flush() {
  if (!failed.ok()) {
    // After a failure (e.g. an assignment whose stored offset could not be read) the batch may
    // not line up with the stored offsets: drop it; it is read again from them next time.
    batch = store::UnitOfWork();
    batch_next.clear();
    batch_objects.clear();
    return failed;
  }
  if (batch_next.empty()) return Status::Ok();
  for (const auto& [partition, offset] : batch_next) {
    batch.positions.push_back(
        {KafkaPartitionSource(options.topic, partition), EncodeKafkaPosition(offset)});
  }
  auto committed =
      options.commit ? options.commit(std::move(batch)) : ledger.Commit(std::move(batch));
  batch = store::UnitOfWork();
  batch_objects.clear();  // committed (the view has them now) or dropped with the batch
  if (!committed.ok()) {
    batch_next.clear();
    return committed.status();
  }
  if (committed->first_input_seq != 0) {
    if (counts.first_seq == 0) counts.first_seq = committed->first_input_seq;
    counts.last_seq = committed->last_input_seq;
  }
  rd_kafka_topic_partition_list_t* offsets =
      rd_kafka_topic_partition_list_new(static_cast<int>(batch_next.size()));
  for (const auto& [partition, offset] : batch_next) {
    next[partition] = offset;
    rd_kafka_topic_partition_list_add(offsets, options.topic.c_str(), partition)->offset = offset;
  }
  if (options.commit_to_group) {
    // Best effort, for lag monitoring only: the ledger's positions decide where reading resumes,
    // so a failed group commit changes nothing and its result is deliberately not awaited.
    (void)rd_kafka_commit(rk, offsets, 1);
  }
  rd_kafka_topic_partition_list_destroy(offsets);
  batch_next.clear();
  return Status::Ok();
}

void KafkaEventSource::Impl::OnRebalance(rd_kafka_resp_err_t err,
                                         rd_kafka_topic_partition_list_t* partitions) {
  const bool cooperative = std::strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    {
      std::lock_guard lock(own_mu);
      assigned_once = true;
      for (int i = 0; i < partitions->cnt; ++i) {
        assigned.insert(partitions->elems[i].partition);
        caught_up.erase(partitions->elems[i].partition);  // caught up again from now on
        eof.erase(partitions->elems[i].partition);
      }
    }
    // The count is read on every assignment (a topic can grow); a failure is retried by Poll.
    need_metadata = !RefreshPartitionCount();
    for (int i = 0; i < partitions->cnt; ++i) {
      rd_kafka_topic_partition_t& p = partitions->elems[i];
      auto stored = ledger.GetSourcePosition(KafkaPartitionSource(p.topic, p.partition));
      int64_t offset = RD_KAFKA_OFFSET_BEGINNING;  // a partition this ledger never read
      if (stored.ok()) {
        auto decoded_offset = DecodeKafkaPosition(*stored);
        if (!decoded_offset.ok() && failed.ok()) failed = decoded_offset.status();
        if (decoded_offset.ok()) offset = *decoded_offset;
      } else if (!stored.status().IsNotFound() && failed.ok()) {
        failed = stored.status();
      }
      p.offset = offset;
      next[p.partition] = offset < 0 ? 0 : offset;
    }
    if (cooperative) {
      rd_kafka_error_t* e = rd_kafka_incremental_assign(rk, partitions);
      if (e != nullptr && failed.ok()) failed = Status::Unavailable(rd_kafka_error_string(e));
      if (e != nullptr) rd_kafka_error_destroy(e);
    } else {
      rd_kafka_assign(rk, partitions);
    }
    return;
  }
  // Revoked (or lost): this replica stops owning them at once (passes not started yet skip
  // their CronJobs), and what was read from them is committed before they go.
  {
    std::lock_guard lock(own_mu);
    for (int i = 0; i < partitions->cnt; ++i) {
      assigned.erase(partitions->elems[i].partition);
      caught_up.erase(partitions->elems[i].partition);
      eof.erase(partitions->elems[i].partition);
    }
  }
  if (Status s = Flush(); !s.ok() && failed.ok()) failed = s;
  for (int i = 0; i < partitions->cnt; ++i) next.erase(partitions->elems[i].partition);
  if (cooperative) {
    rd_kafka_error_t* e = rd_kafka_incremental_unassign(rk, partitions);
    if (e != nullptr) rd_kafka_error_destroy(e);  // the partitions are gone either way
  } else {
    rd_kafka_assign(rk, nullptr);
  }
}

bool KafkaEventSource::Impl::Repeat(const model::WatchEvent& e) {
  if (e.type == model::WatchEventType::kBookmark || e.name.empty()) return false;
  const std::string id =
      std::string(model::ObjectKindName(e.kind)) + "/" + e.namespace_ + "/" + e.name;
  std::string held;  // the view's resourceVersion of the object, "" when it holds none
  if (auto it = batch_objects.find(id); it != batch_objects.end()) {
    held = it->second;
  } else if (auto obj = ledger.GetObject(e.kind, e.namespace_, e.name); obj.ok()) {
    held = obj->entry.resource_version;
  } else if (!obj.status().IsNotFound()) {
    return false;  // unknown: keep the event (a repeat folds to the same state anyway)
  }
  const bool deleted = e.type == model::WatchEventType::kDeleted;
  const bool repeat = deleted ? held.empty() : held == e.resource_version;
  if (!repeat) batch_objects[id] = deleted ? "" : e.resource_version;
  return repeat;
}

void KafkaEventSource::Impl::Add(const rd_kafka_message_t& m) {
  auto it = next.find(m.partition);
  if (it != next.end() && m.offset < it->second) {
    ++counts.skipped;  // already in the ledger
    return;
  }
  if (m.key != nullptr && m.key_len > 0) {
    NoteKey(std::string_view(static_cast<const char*>(m.key), m.key_len), m.partition);
  }
  const std::string where =
      options.topic + "/" + std::to_string(m.partition) + "/" + std::to_string(m.offset);
  decoded.events.clear();
  decoded.rejections.clear();
  const std::string_view value(static_cast<const char*>(m.payload), m.payload ? m.len : 0);
  if (value.empty()) {
    decoded.rejections.push_back(model::Rejection::Whole("empty Kafka message", ""));
  } else {
    padded.assign(value);
    padded.resize(value.size() + model::kDecoderPadding);
    decoder.Decode(std::string_view(padded.data(), value.size()), &decoded);
  }
  for (auto& ev : decoded.events) {
    if (options.dedupe_by_resource_version && Repeat(ev)) {
      ++counts.duplicates;
      continue;
    }
    ++counts.events;
    batch.inputs.emplace_back(std::move(ev));
  }
  for (auto& r : decoded.rejections) {
    std::string source = where;
    if (r.item >= 0) source += " items[" + std::to_string(r.item) + "]";
    batch.quarantine.push_back(
        {0, Time(), std::move(r.reason), std::move(source), std::move(r.raw)});
  }
  counts.quarantined += decoded.rejections.size();
  ++counts.messages;
  batch_next[m.partition] = m.offset + 1;
  if (it != next.end()) it->second = m.offset + 1;
}

KafkaEventSource::KafkaEventSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
KafkaEventSource::~KafkaEventSource() = default;

Result<std::unique_ptr<KafkaEventSource>> KafkaEventSource::Open(
    store::Ledger& ledger, const KafkaSourceOptions& options) {
  if (options.brokers.empty()) return Status::InvalidArgument("kafka brokers are required");
  if (options.topic.empty()) return Status::InvalidArgument("kafka topic is required");
  if (options.batch_messages == 0) return Status::InvalidArgument("batch_messages is 0");
  auto impl = std::make_unique<Impl>(ledger, options);
  CL_ASSIGN_OR_RETURN(rd_kafka_conf_t * conf, NewConf(options, impl.get()));
  char errstr[512];
  impl->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr, sizeof(errstr));
  if (impl->rk == nullptr) {
    rd_kafka_conf_destroy(conf);  // rd_kafka_new() leaves it to the caller on failure
    return Status::InvalidArgument(std::string("kafka consumer: ") + errstr);
  }
  rd_kafka_poll_set_consumer(impl->rk);
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, options.topic.c_str(), RD_KAFKA_PARTITION_UA);
  const rd_kafka_resp_err_t err = rd_kafka_subscribe(impl->rk, topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    return Status::InvalidArgument(std::string("kafka subscribe: ") + rd_kafka_err2str(err));
  }
  return std::unique_ptr<KafkaEventSource>(new KafkaEventSource(std::move(impl)));
}

Result<KafkaIngestProgress> KafkaEventSource::Poll(std::chrono::milliseconds wait) {
  Impl& s = *impl_;
  s.counts = KafkaIngestProgress();
  int timeout = static_cast<int>(wait.count());
  for (size_t taken = 0; taken < s.options.batch_messages && s.failed.ok(); ++taken) {
    rd_kafka_message_t* m = rd_kafka_consumer_poll(s.rk, timeout);
    if (m == nullptr) break;
    timeout = 0;  // after the first message, only what is ready
    if (m->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      s.Add(*m);
    } else if (m->err == RD_KAFKA_RESP_ERR__FATAL) {
      char reason[512];
      rd_kafka_fatal_error(s.rk, reason, sizeof(reason));
      s.failed = Status::FailedPrecondition(std::string("kafka consumer fatal error: ") + reason);
    } else if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      if (s.next.count(m->partition) != 0) s.eof.insert(m->partition);
    } else {
      // Transient client errors (broker down, transport): librdkafka keeps retrying.
      OnLog(s.rk, 4, "CONSUME", rd_kafka_message_errstr(m));
    }
    rd_kafka_message_destroy(m);
  }
  if (!s.failed.ok()) return s.failed;
  if (Status flushed = s.Flush(); !flushed.ok()) {
    s.failed = flushed;
    return flushed;
  }
  if (s.need_metadata) s.need_metadata = !s.RefreshPartitionCount();
  s.ReportCaughtUp();
  return s.counts;
}

std::map<int32_t, int64_t> KafkaEventSource::Assignment() const { return impl_->next; }

bool KafkaEventSource::Impl::RefreshPartitionCount() {
  rd_kafka_topic_t* rkt = rd_kafka_topic_new(rk, options.topic.c_str(), nullptr);
  if (rkt == nullptr) return false;
  const rd_kafka_metadata_t* md = nullptr;
  const rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, 5000);
  int32_t count = 0;
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR && md->topic_cnt == 1 &&
      md->topics[0].err == RD_KAFKA_RESP_ERR_NO_ERROR) {
    count = md->topics[0].partition_cnt;
  }
  if (md != nullptr) rd_kafka_metadata_destroy(md);
  rd_kafka_topic_destroy(rkt);
  if (count <= 0) return false;
  std::lock_guard lock(own_mu);
  if (partition_count != 0 && partition_count != count) seen_on.clear();  // keys moved
  partition_count = count;
  return true;
}

void KafkaEventSource::Impl::NoteKey(std::string_view key, int32_t partition) {
  std::lock_guard lock(own_mu);
  if (partition_count == 0) return;
  const int32_t hashed =
      partitioner(nullptr, key.data(), key.size(), partition_count, nullptr, nullptr);
  auto it = seen_on.find(key);
  if (hashed == partition) {
    if (it != seen_on.end()) seen_on.erase(it);
    return;
  }
  ++counts.misrouted;
  if (misrouted.fetch_add(1) == 0) {
    OnLog(rk, 4, "OWNERSHIP",
          ("key " + std::string(key) + " is on partition " + std::to_string(partition) +
           ", the partitioner gives " + std::to_string(hashed) +
           ": producers and consumers must use the same partitioner")
              .c_str());
  }
  if (it == seen_on.end()) {
    seen_on.emplace(std::string(key), partition);
  } else {
    it->second = partition;
  }
}

void KafkaEventSource::Impl::ReportCaughtUp() {
  if (eof.empty()) return;
  std::vector<int32_t> now_caught_up;
  {
    std::lock_guard lock(own_mu);
    if (partition_count == 0) return;  // ownership cannot be answered yet: keep them pending
    for (int32_t p : eof) {
      if (assigned.count(p) != 0 && caught_up.insert(p).second) now_caught_up.push_back(p);
    }
  }
  eof.clear();
  if (!now_caught_up.empty() && options.on_caught_up) options.on_caught_up(now_caught_up);
}

std::optional<int32_t> KafkaEventSource::PartitionOfKey(std::string_view key) const {
  const Impl& s = *impl_;
  std::lock_guard lock(s.own_mu);
  if (auto it = s.seen_on.find(key); it != s.seen_on.end()) return it->second;
  if (s.partition_count == 0 || key.empty()) return std::nullopt;
  return s.partitioner(nullptr, key.data(), key.size(), s.partition_count, nullptr, nullptr);
}

std::set<int32_t> KafkaEventSource::AssignedPartitions() const {
  std::lock_guard lock(impl_->own_mu);
  return impl_->assigned;
}

bool KafkaEventSource::OwnsKey(std::string_view key) const {
  const std::optional<int32_t> partition = PartitionOfKey(key);
  if (!partition) return false;
  std::lock_guard lock(impl_->own_mu);
  return impl_->caught_up.count(*partition) != 0;
}

bool KafkaEventSource::CaughtUp() const {
  std::lock_guard lock(impl_->own_mu);
  return impl_->assigned_once && impl_->caught_up.size() == impl_->assigned.size();
}

}  // namespace cronledger::ingest
