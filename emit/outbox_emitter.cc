#include "emit/outbox_emitter.h"

#include <charconv>
#include <optional>

#include "emit/ledger_record.h"
#include "model/json.h"

namespace cronledger::emit {
namespace {

// Bounds the key cache; a miss costs one point read of the input log.
constexpr size_t kMaxCachedKeys = 1u << 16;

std::string Key(std::string_view ns, std::string_view name) {
  return std::string(ns) + "/" + std::string(name);
}

}  // namespace

Result<uint64_t> DecodeEmitPosition(std::string_view s) {
  constexpr std::string_view kPrefix = "seq=";
  uint64_t seq = 0;
  if (s.substr(0, kPrefix.size()) != kPrefix) return Status::Corruption("bad emit position");
  const char* begin = s.data() + kPrefix.size();
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(begin, end, seq);
  if (ec != std::errc() || ptr != end || begin == end) {
    return Status::Corruption("bad emit position");
  }
  return seq;
}

std::string EncodeEmitPosition(uint64_t seq) { return "seq=" + std::to_string(seq); }

OutboxEmitterOptions OutboxOptionsFor(const KafkaConfig& kafka, EmitStream stream,
                                      std::string source_id) {
  const KafkaTopics topics = TopicsForPrefix(kafka.topic_prefix);
  OutboxEmitterOptions o;
  o.producer.brokers = kafka.brokers;
  o.producer.properties = kafka.properties;
  o.stream = stream;
  o.topic = stream == EmitStream::kDecisions ? topics.decisions : topics.ledger;
  o.source_id = std::move(source_id);
  return o;
}

OutboxEmitter::OutboxEmitter(store::Ledger& ledger, OutboxEmitterOptions options,
                             std::unique_ptr<KafkaProducer> producer, uint64_t position)
    : ledger_(ledger),
      options_(std::move(options)),
      producer_(std::move(producer)),
      produced_through_(position) {
  progress_.position = position;
}

OutboxEmitter::~OutboxEmitter() = default;

Result<std::unique_ptr<OutboxEmitter>> OutboxEmitter::Open(store::Ledger& ledger,
                                                           const OutboxEmitterOptions& options) {
  if (options.topic.empty()) return Status::InvalidArgument("emit: a topic is required");
  if (options.max_in_flight == 0) return Status::InvalidArgument("emit: max_in_flight is 0");
  OutboxEmitterOptions o = options;
  if (o.position_source.empty()) o.position_source = "kafka-emit:" + o.topic;
  uint64_t position = 0;
  auto stored = ledger.GetSourcePosition(o.position_source);
  if (stored.ok()) {
    CL_ASSIGN_OR_RETURN(position, DecodeEmitPosition(*stored));
  } else if (!stored.status().IsNotFound()) {
    return stored.status();
  }
  CL_ASSIGN_OR_RETURN(auto producer, KafkaProducer::Open(o.producer));
  return std::unique_ptr<OutboxEmitter>(
      new OutboxEmitter(ledger, std::move(o), std::move(producer), position));
}

Result<uint64_t> OutboxEmitter::Head() {
  CL_ASSIGN_OR_RETURN(auto meta, ledger_.Meta());
  return options_.stream == EmitStream::kDecisions ? meta.last_decision_seq : meta.last_input_seq;
}

Status OutboxEmitter::Drain(std::chrono::milliseconds timeout) {
  CL_ASSIGN_OR_RETURN(const uint64_t target, Head());
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (progress_.position < target || !in_flight_.empty()) {
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Unavailable("emit: " + options_.topic + " not drained: position " +
                                 std::to_string(progress_.position) + " of " +
                                 std::to_string(target));
    }
    CL_RETURN_IF_ERROR(Step(std::chrono::milliseconds(50)).status());
  }
  return Status::Ok();
}

Status OutboxEmitter::ProduceOne(uint64_t seq, const std::string& key, const std::string& value) {
  const std::string seq_text = std::to_string(seq);
  ProducerRecord record;
  record.topic = options_.topic;
  record.key = key;
  record.value = value;
  record.headers = {
      {kSchemaHeader, options_.stream == EmitStream::kDecisions ? kDecisionSchema : kLedgerSchema},
      {kSeqHeader, seq_text}};
  if (!options_.source_id.empty()) record.headers.emplace_back(kSourceHeader, options_.source_id);
  record.token = seq;
  CL_RETURN_IF_ERROR(producer_->Produce(record));
  in_flight_.emplace(seq, false);
  produced_through_ = seq;
  ++progress_.produced;
  return Status::Ok();
}

Result<std::string> OutboxEmitter::KeyOfSeq(uint64_t seq) {
  if (auto it = key_cache_.find(seq); it != key_cache_.end()) return it->second;
  std::optional<store::LogRecord> found;
  CL_RETURN_IF_ERROR(ledger_.ScanInputs(seq, false, [&](const store::LogRecord& r) {
    if (r.seq == seq) found = r;
    return false;
  }));
  if (!found) return Status::NotFound("input " + std::to_string(seq));
  return KeyOfInput(*found);
}

Result<std::string> OutboxEmitter::KeyOfInput(const store::LogRecord& record) {
  std::string key;
  if (const auto* e = std::get_if<model::WatchEvent>(&record.input)) {
    if (e->name.empty()) return std::string(kClusterKey);  // bookmark
    // A Job goes with its controller owner (the CronJob); an orphan Job with itself.
    const bool owned = e->kind == model::ObjectKind::kJob && !e->owner_name.empty();
    return Key(e->namespace_, owned ? e->owner_name : e->name);
  }
  if (const auto* t = std::get_if<model::Tick>(&record.input)) {
    key = Key(t->namespace_, t->name);
  } else if (const auto* a = std::get_if<model::ActionIntent>(&record.input)) {
    // Job calls belong to the CronJob of their pass, known from the pass's Tick.
    auto of_tick = a->kind == model::ObjectKind::kJob && a->tick_seq < record.seq
                       ? KeyOfSeq(a->tick_seq)
                       : Result<std::string>(Status::NotFound(""));
    key = of_tick.ok() ? *of_tick : Key(a->namespace_, a->name);
  } else if (const auto* o = std::get_if<model::ActionOutcome>(&record.input)) {
    auto of_intent = o->kind == model::ObjectKind::kJob && o->decision_seq < record.seq
                         ? KeyOfSeq(o->decision_seq)
                         : Result<std::string>(Status::NotFound(""));
    return of_intent.ok() ? *of_intent : Key(o->namespace_, o->name);
  } else if (const auto* p = std::get_if<model::PassEnd>(&record.input)) {
    return Key(p->namespace_, p->name);
  } else {
    return std::string(kClusterKey);  // configuration changes apply to every CronJob
  }
  if (key_cache_.size() >= kMaxCachedKeys) key_cache_.clear();
  key_cache_[record.seq] = key;
  return key;
}

Status OutboxEmitter::Fill() {
  size_t budget = options_.max_in_flight - std::min(options_.max_in_flight, in_flight_.size());
  if (budget == 0) return Status::Ok();
  Status status;
  auto produce = [&](uint64_t seq, const Result<std::string>& key, const std::string& value) {
    status = key.ok() ? ProduceOne(seq, *key, value) : key.status();
    return status.ok() && --budget > 0;
  };
  Status scan;
  if (options_.stream == EmitStream::kDecisions) {
    scan = ledger_.ScanDecisions(produced_through_ + 1, [&](const model::Decision& d) {
      return produce(d.seq, KeyOfDecision(d), model::CanonicalDecisionBytes(d));
    });
  } else {
    scan = ledger_.ScanInputs(produced_through_ + 1, true, [&](const store::LogRecord& r) {
      return produce(r.seq, KeyOfInput(r), model::DumpJson(EncodeLedgerRecord(r)));
    });
  }
  CL_RETURN_IF_ERROR(scan);
  // A full local queue is back-pressure, not a failure: the record is produced next round.
  if (status.IsUnavailable()) return Status::Ok();
  return status;
}

Status OutboxEmitter::Advance() {
  uint64_t position = progress_.position;
  while (!in_flight_.empty() && in_flight_.begin()->second) {
    position = in_flight_.begin()->first;
    in_flight_.erase(in_flight_.begin());
  }
  progress_.in_flight = in_flight_.size();
  if (position == progress_.position) return Status::Ok();
  store::UnitOfWork unit;
  unit.positions.push_back({options_.position_source, EncodeEmitPosition(position)});
  CL_RETURN_IF_ERROR(ledger_.Commit(std::move(unit)).status());
  progress_.position = position;
  return Status::Ok();
}

Result<EmitProgress> OutboxEmitter::Step(std::chrono::milliseconds wait) {
  if (!failed_.ok()) return failed_;
  Status status = Fill();
  std::vector<DeliveryReport> reports;
  producer_->Poll(status.ok() ? wait : std::chrono::milliseconds(0), &reports);
  for (const DeliveryReport& r : reports) {
    auto it = in_flight_.find(r.token);
    CL_CHECK(it != in_flight_.end());  // every token is a seq this session produced
    if (r.status.ok()) {
      it->second = true;
      ++progress_.acknowledged;
    } else if (status.ok()) {
      status = r.status.WithContext("seq " + std::to_string(r.token));
    }
  }
  if (status.ok()) status = producer_->FatalError();
  // Acknowledged records before the first gap are recorded even when the session failed.
  const Status advanced = Advance();
  if (status.ok()) status = advanced;
  if (!status.ok()) {
    failed_ = status;
    return status;
  }
  return progress_;
}

}  // namespace cronledger::emit
