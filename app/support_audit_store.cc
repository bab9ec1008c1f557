#include "app/support_audit_store.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <utility>
#include <variant>

#include "app/support_audit.h"
#include "app/support_stream_records.h"
#include "app/system_clock.h"
#include "audit/metrics.h"
#include "emit/ledger_record.h"
#include "model/json.h"
#include "replay/trail.h"

namespace cronledger::app::audit_store {
namespace fs = std::filesystem;

namespace {

constexpr const char* kPositionsFile = "positions.json";
constexpr const char* kSourcesDir = "sources";
// Records per unit of work when a copy catches up.
constexpr size_t kUnitRecords = 1000;

bool IsPruned(const store::LogRecord& r) { return r.raw_pruned; }
bool IsPruned(const model::Decision&) { return false; }

Status WriteFileDurably(const fs::path& path, const std::string& bytes) {
  const fs::path tmp = path.string() + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::IoError("audit store: cannot write " + tmp.string());
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) {
      ::close(fd);
      return Status::IoError("audit store: cannot write " + tmp.string());
    }
    done += static_cast<size_t>(n);
  }
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (!synced) return Status::IoError("audit store: cannot sync " + tmp.string());
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec)
    return Status::IoError("audit store: cannot rename " + tmp.string() + ": " + ec.message());
  const int dir = ::open(path.parent_path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  return Status::Ok();
}

}  // namespace

// The records that wait for a predecessor, per source and stream, by seq.
struct AuditStore::Waiting {
  std::map<std::string, std::map<uint64_t, Held<store::LogRecord>>> inputs;
  std::map<std::string, std::map<uint64_t, Held<model::Decision>>> decisions;
};

std::string SourceDirName(std::string_view source) {
  if (source.empty()) return "%";
  std::string out;
  static const char kHex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < source.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(source[i]);
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '-' || c == '_' || (c == '.' && i > 0);
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::optional<std::string> SourceOfDirName(std::string_view dir) {
  if (dir == "%") return std::string();
  std::string out;
  for (size_t i = 0; i < dir.size(); ++i) {
    if (dir[i] != '%') {
      out += dir[i];
      continue;
    }
    if (i + 2 >= dir.size()) return std::nullopt;
    auto hex = [](char c) -> int {
      if (c >= '0' && c <= '9') return c - '0';
      if (c >= 'A' && c <= 'F') return c - 'A' + 10;
      return -1;
    };
    const int hi = hex(dir[i + 1]);
    const int lo = hex(dir[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  if (SourceDirName(out) != dir) return std::nullopt;
  return out;
}

std::string CopyDir(const std::string& dir, std::string_view source) {
  return (fs::path(dir) / kSourcesDir / SourceDirName(source)).string();
}

bool IsAuditStoreDir(const std::string& dir) {
  std::error_code ec;
  return fs::is_directory(fs::path(dir) / kSourcesDir, ec) &&
         !fs::exists(fs::path(dir) / "CURRENT", ec);
}

Status CheckNotAnAuditStore(const std::string& dir) {
  if (!IsAuditStoreDir(dir)) return Status::Ok();
  std::vector<std::string> copies;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / kSourcesDir, ec)) {
    if (e.is_directory())
      copies.push_back((fs::path(dir) / kSourcesDir / e.path().filename()).string());
  }
  std::sort(copies.begin(), copies.end());
  std::string list;
  for (const std::string& c : copies) list += (list.empty() ? "" : ", ") + c;
  return Status::FailedPrecondition(
      dir +
      " is an audit store (cronledger audit-store); this command reads one source's ledger: "
      "--data-dir " +
      dir + "/" + std::string(kSourcesDir) + "/<source> (" +
      (list.empty() ? std::string("no source yet") : list) + ")");
}

Result<std::vector<std::pair<std::string, std::unique_ptr<store::Ledger>>>> OpenAuditStoreSources(
    const std::string& dir, Duration refresh) {
  std::vector<std::pair<std::string, std::string>> found;  // source, directory
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / kSourcesDir, ec)) {
    if (!e.is_directory()) continue;
    if (auto source = SourceOfDirName(e.path().filename().string())) {
      found.emplace_back(*source, e.path().string());
    }
  }
  if (ec) return Status::IoError("audit store: cannot list " + dir + ": " + ec.message());
  if (found.empty()) return Status::NotFound("the audit store " + dir + " holds no source yet");
  std::sort(found.begin(), found.end());
  std::vector<std::pair<std::string, std::unique_ptr<store::Ledger>>> out;
  for (auto& [source, path] : found) {
    CL_ASSIGN_OR_RETURN(auto ledger, OpenLedgerForAudit(path, refresh));
    out.emplace_back(source, std::move(ledger));
  }
  return out;
}

Result<ReadSources> OpenReadSources(const std::string& dir, Duration refresh) {
  ReadSources out;
  out.merged = IsAuditStoreDir(dir);
  if (out.merged) {
    CL_ASSIGN_OR_RETURN(auto opened, OpenAuditStoreSources(dir, refresh));
    for (auto& [source, ledger] : opened) {
      out.sources.push_back({source, ledger.get()});
      out.ledgers.push_back(std::move(ledger));
    }
  } else {
    CL_ASSIGN_OR_RETURN(auto ledger, OpenLedgerForAudit(dir, refresh));
    out.sources.push_back({"", ledger.get()});
    out.ledgers.push_back(std::move(ledger));
  }
  return out;
}

void AuditStoreMetrics::Record(const Result<RoundReport>& round, Time now) {
  std::lock_guard<std::mutex> l(mu_);
  ++rounds_;
  last_ok_ = round.ok();
  if (!round.ok()) {
    ++failures_;
    return;
  }
  for (const SourceState& s : round->sources) records_ += s.inputs_added + s.decisions_added;
  duplicates_ += round->duplicates;
  last_good_ = now;
  sources_ = round->sources;
}

std::string AuditStoreMetrics::Render() const {
  std::lock_guard<std::mutex> l(mu_);
  std::string out;
  auto counter = [&out](const char* name, const char* help, uint64_t v) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " counter\n" + name +
           " " + std::to_string(v) + "\n";
  };
  counter("cronledger_audit_store_rounds_total", "Rounds of reading the streams.", rounds_);
  counter("cronledger_audit_store_round_failures_total", "Rounds that failed.", failures_);
  counter("cronledger_audit_store_records_total", "Records stored in the sources' copies.",
          records_);
  counter("cronledger_audit_store_duplicates_total", "Repeated records dropped.", duplicates_);
  out +=
      "# HELP cronledger_audit_store_last_round_timestamp_seconds When the last good round "
      "ended.\n# TYPE cronledger_audit_store_last_round_timestamp_seconds gauge\n";
  if (last_good_) {
    out += "cronledger_audit_store_last_round_timestamp_seconds " +
           std::to_string(last_good_->UnixNanosSaturated() / 1'000'000'000) + "\n";
  }
  out +=
      "# HELP cronledger_audit_store_last_record_timestamp_seconds When a source recorded the "
      "last input its copy holds.\n"
      "# TYPE cronledger_audit_store_last_record_timestamp_seconds gauge\n";
  for (const SourceState& s : sources_) {
    if (!s.last_recorded_at) continue;
    out += "cronledger_audit_store_last_record_timestamp_seconds{source=\"" +
           audit::EscapeLabel(s.source) + "\"} " +
           std::to_string(s.last_recorded_at->UnixNanosSaturated() / 1'000'000'000) + "\n";
  }
  const std::pair<const char*, const char*> gauges[] = {
      {"cronledger_audit_store_last_seq", "The last seq stored in a source's copy, per log."},
      {"cronledger_audit_store_waiting_records",
       "Records of a source that wait for a missing seq, per log."}};
  for (const auto& [name, help] : gauges) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n";
    for (const SourceState& s : sources_) {
      const bool seq = std::string_view(name) == "cronledger_audit_store_last_seq";
      const std::string label = "{source=\"" + audit::EscapeLabel(s.source) + "\",log=\"";
      out += std::string(name) + label + "inputs\"} " +
             std::to_string(seq ? s.last_input_seq : s.waiting_inputs) + "\n";
      out += std::string(name) + label + "decisions\"} " +
             std::to_string(seq ? s.last_decision_seq : s.waiting_decisions) + "\n";
    }
  }
  return out;
}

Status AuditStoreMetrics::Ready() const {
  std::lock_guard<std::mutex> l(mu_);
  if (!last_good_) return Status::FailedPrecondition("no round has succeeded yet");
  if (!last_ok_) return Status::FailedPrecondition("the last round failed");
  return Status::Ok();
}

bool RoundReport::complete() const {
  for (const SourceState& s : sources) {
    if (s.waiting_inputs > 0 || s.waiting_decisions > 0) return false;
  }
  return true;
}

std::vector<std::string> RoundReport::Describe(const std::string& topic_prefix) const {
  const emit::KafkaTopics topics = emit::TopicsForPrefix(topic_prefix);
  std::vector<std::string> lines;
  for (const SourceState& s : sources) {
    const std::string name = s.source.empty() ? "(no cronledger-source)" : s.source;
    lines.push_back(name + ": inputs up to seq " + std::to_string(s.last_input_seq) + " (+" +
                    std::to_string(s.inputs_added) + "), decisions up to seq " +
                    std::to_string(s.last_decision_seq) + " (+" +
                    std::to_string(s.decisions_added) + ") in " + s.dir +
                    (s.last_recorded_at
                         ? ", last recorded at " + FormatRfc3339Nano(*s.last_recorded_at)
                         : std::string()));
    const std::pair<const std::string*, std::pair<uint64_t, uint64_t>> waits[] = {
        {&topics.ledger, {s.input_waits_for, s.waiting_inputs}},
        {&topics.decisions, {s.decision_waits_for, s.waiting_decisions}}};
    for (const auto& [topic, w] : waits) {
      if (w.second == 0) continue;
      lines.push_back(name + ": " + *topic + " waits for seq " + std::to_string(w.first) + " (" +
                      std::to_string(w.second) +
                      " later records held): on a partition not read yet, or lost from the topic");
    }
  }
  return lines;
}

AuditStore::AuditStore(AuditStoreOptions options)
    : options_(std::move(options)),
      topics_(emit::TopicsForPrefix(options_.topic_prefix)),
      waiting_(std::make_unique<Waiting>()) {}

AuditStore::~AuditStore() = default;

Result<std::unique_ptr<AuditStore>> AuditStore::Open(const AuditStoreOptions& options) {
  if (options.brokers.empty()) return Status::InvalidArgument("kafka brokers are required");
  if (options.data_dir.empty()) return Status::InvalidArgument("the data directory is required");
  if (options.topic_prefix.empty()) return Status::InvalidArgument("the topic prefix is empty");
  for (const auto& [key, value] : options.properties) {
    (void)value;
    if (key == "group.id" || key == "enable.auto.commit" || key == "enable.auto.offset.store") {
      return Status::InvalidArgument("kafka property " + key +
                                     " cannot be set for the audit store (it keeps its own "
                                     "positions)");
    }
  }
  std::unique_ptr<AuditStore> s(new AuditStore(options));
  std::error_code ec;
  fs::create_directories(fs::path(options.data_dir) / kSourcesDir, ec);
  if (ec) {
    return Status::IoError("audit store: cannot create " + options.data_dir + ": " + ec.message());
  }
  CL_RETURN_IF_ERROR(s->LoadPositions());
  CL_RETURN_IF_ERROR(s->OpenSources());
  return s;
}

Status AuditStore::OpenSources() {
  std::error_code ec;
  std::vector<std::string> sources;
  for (const auto& e : fs::directory_iterator(fs::path(options_.data_dir) / kSourcesDir, ec)) {
    if (!e.is_directory()) continue;
    const auto source = SourceOfDirName(e.path().filename().string());
    if (source) sources.push_back(*source);
  }
  if (ec)
    return Status::IoError("audit store: cannot list " + options_.data_dir + ": " + ec.message());
  for (const std::string& source : sources) CL_RETURN_IF_ERROR(LedgerOf(source).status());
  return Status::Ok();
}

Status AuditStore::LoadPositions() {
  const fs::path path = fs::path(options_.data_dir) / kPositionsFile;
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::Ok();
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto j = model::ParseJson(text);
  if (!j.ok() || !j->is_object()) {
    return Status::Corruption("audit store: " + path.string() + " is not a JSON object");
  }
  for (const auto& [topic, partitions] : j->items()) {
    if (!partitions.is_object()) {
      return Status::Corruption("audit store: " + path.string() + ": " + topic +
                                " is not an object");
    }
    for (const auto& [partition, offset] : partitions.items()) {
      char* end = nullptr;
      const long p = std::strtol(partition.c_str(), &end, 10);
      if (end == partition.c_str() || *end != '\0' || p < 0 || !offset.is_number_integer()) {
        return Status::Corruption("audit store: " + path.string() + ": bad position " + topic +
                                  "/" + partition);
      }
      positions_[topic][static_cast<int32_t>(p)] = offset.get<int64_t>();
    }
  }
  return Status::Ok();
}

Status AuditStore::StorePositions() const {
  model::Json j = model::Json::object();
  for (const auto& [topic, partitions] : positions_) {
    model::Json t = model::Json::object();
    for (const auto& [partition, offset] : partitions) t[std::to_string(partition)] = offset;
    j[topic] = std::move(t);
  }
  return WriteFileDurably(fs::path(options_.data_dir) / kPositionsFile, model::DumpJson(j) + "\n");
}

Result<store::Ledger*> AuditStore::LedgerOf(const std::string& source) {
  auto it = ledgers_.find(source);
  if (it != ledgers_.end()) return it->second.get();
  store::LedgerOptions o;
  o.path = CopyDir(options_.data_dir, source);
  o.create_if_missing = true;
  CL_ASSIGN_OR_RETURN(auto ledger, store::Ledger::Open(o));
  store::Ledger* raw = ledger.get();
  ledgers_.emplace(source, std::move(ledger));
  return raw;
}

Status AuditStore::Drain(const std::string& source, RoundState* round) {
  SourceState& state = round->states[source];
  state.source = source;
  CL_ASSIGN_OR_RETURN(store::Ledger * ledger, LedgerOf(source));
  state.dir = CopyDir(options_.data_dir, source);
  CL_ASSIGN_OR_RETURN(store::LedgerMeta meta, ledger->Meta());

  // Commits the run of `held` that follows `last` (records at or below it are repeats, dropped)
  // in units of at most kUnitRecords, each ended early when `add` refuses the next record, and
  // returns the new last seq.
  auto commit_run = [&](auto& held, uint64_t last, auto start_unit, auto add, auto last_of,
                        uint64_t* added) -> Result<uint64_t> {
    while (!held.empty() && held.begin()->first <= last) {
      held.erase(held.begin());
      ++round->report.duplicates;
    }
    while (!held.empty() && held.begin()->first == last + 1) {
      store::UnitOfWork unit = start_unit(held.begin()->second.record);
      size_t n = 0;
      while (!held.empty() && held.begin()->first == last + 1 && n < kUnitRecords &&
             add(&unit, held.begin()->second.record)) {
        held.erase(held.begin());
        ++last;
        ++n;
      }
      CL_ASSIGN_OR_RETURN(store::CommitResult r, ledger->Commit(std::move(unit)));
      if (last_of(r) != last) {
        return Status::Internal("audit store: the copy of '" + source + "' stored seq " +
                                std::to_string(last_of(r)) + " for seq " + std::to_string(last));
      }
      *added += n;
    }
    return last;
  };
  // Inputs, with the times their source recorded. An intent or pass end whose tick_seq is 0 had
  // no Tick before it in its source's unit; it starts a unit here too, so that the ledger does
  // not give it the seq of a Tick of an earlier unit.
  auto& inputs = waiting_->inputs[source];
  CL_ASSIGN_OR_RETURN(
      state.last_input_seq,
      commit_run(
          inputs, meta.last_input_seq, [](const store::LogRecord&) { return store::UnitOfWork(); },
          [](store::UnitOfWork* unit, store::LogRecord& r) {
            const auto* intent = std::get_if<model::ActionIntent>(&r.input);
            const auto* end = std::get_if<model::PassEnd>(&r.input);
            const bool untied = (intent != nullptr && intent->tick_seq == 0) ||
                                (end != nullptr && end->tick_seq == 0);
            if (untied && !unit->inputs.empty()) return false;
            unit->recorded_at.push_back(r.recorded_at);
            unit->inputs.push_back(std::move(r.input));
            return true;
          },
          [](const store::CommitResult& r) { return r.last_input_seq; }, &state.inputs_added));
  auto& decisions = waiting_->decisions[source];
  CL_ASSIGN_OR_RETURN(state.last_decision_seq,
                      commit_run(
                          decisions, meta.last_decision_seq,
                          [](const model::Decision&) { return store::UnitOfWork(); },
                          [](store::UnitOfWork* unit, model::Decision& d) {
                            unit->decisions.push_back(std::move(d));
                            return true;
                          },
                          [](const store::CommitResult& r) { return r.last_decision_seq; },
                          &state.decisions_added));

  if (state.last_input_seq > 0) {
    CL_RETURN_IF_ERROR(
        ledger->ScanInputs(state.last_input_seq, false, [&](const store::LogRecord& r) {
          state.last_recorded_at = r.recorded_at;
          return false;
        }));
  }
  state.waiting_inputs = inputs.size();
  state.input_waits_for = inputs.empty() ? 0 : state.last_input_seq + 1;
  state.waiting_decisions = decisions.size();
  state.decision_waits_for = decisions.empty() ? 0 : state.last_decision_seq + 1;
  return Status::Ok();
}

size_t AuditStore::WaitingRecords() const {
  size_t n = 0;
  for (const auto& [source, records] : waiting_->inputs) n += records.size();
  for (const auto& [source, records] : waiting_->decisions) n += records.size();
  return n;
}

Status AuditStore::CheckWaiting(RoundState* round) {
  const size_t waiting = WaitingRecords();
  if (waiting <= options_.max_waiting) return Status::Ok();
  std::string what;
  for (auto& [source, state] : round->states) {
    const std::string name = source.empty() ? "(no cronledger-source)" : source;
    if (state.waiting_inputs > 0) {
      what += "; " + name + " waits for " + topics_.ledger + " seq " +
              std::to_string(state.input_waits_for);
    }
    if (state.waiting_decisions > 0) {
      what += "; " + name + " waits for " + topics_.decisions + " seq " +
              std::to_string(state.decision_waits_for);
    }
  }
  return Status::FailedPrecondition("audit store: " + std::to_string(waiting) +
                                    " records wait for missing seqs, more than " +
                                    std::to_string(options_.max_waiting) + what);
}

template <typename Record, typename Decode>
Status AuditStore::ReadTopic(const std::string& topic, std::string_view schema, Decode decode,
                             std::map<std::string, std::map<uint64_t, Held<Record>>>* held,
                             RoundState* round) {
  emit::TopicReaderOptions reader;
  reader.brokers = options_.brokers;
  reader.properties = options_.properties;
  reader.timeout = options_.read_timeout;
  reader.log = options_.log;
  uint64_t since_drain = 0;
  CL_ASSIGN_OR_RETURN(
      emit::PartitionOffsets ends,
      emit::ReadTopicRange(
          reader, topic, positions_[topic], [&](const emit::TopicMessage& tm) -> Status {
            ++round->report.messages;
            const StreamMessage m = StreamMessageOf(tm);
            CL_ASSIGN_OR_RETURN(model::Json j, StreamPayload(topic, m, schema));
            Result<Record> decoded = decode(j);
            if (!decoded.ok()) {
              return Status::Corruption(StreamWhere(topic, m) + ": " + decoded.status().message());
            }
            auto& by_seq = (*held)[m.source];
            const uint64_t seq = decoded->seq;
            auto it = by_seq.find(seq);
            if (it == by_seq.end()) {
              by_seq.emplace(seq, Held<Record>{std::move(*decoded), topic, m.partition, m.offset});
            } else {
              Held<Record>& kept = it->second;
              if (!SameStreamRecord(kept.record, *decoded)) {
                return Status::Corruption(StreamWhere(topic, m) + ": seq " + std::to_string(seq) +
                                          " of source '" + m.source +
                                          "' is on the topic twice with different records");
              }
              if (IsPruned(kept.record) && !IsPruned(*decoded)) kept.record = std::move(*decoded);
              ++round->report.duplicates;
            }
            // Commit as the read goes, so that memory holds only what waits.
            if (++since_drain == kUnitRecords) {
              since_drain = 0;
              for (const auto& [source, records] : *held) {
                if (!records.empty()) CL_RETURN_IF_ERROR(Drain(source, round));
              }
              CL_RETURN_IF_ERROR(CheckWaiting(round));
            }
            return Status::Ok();
          }));
  // Read to these ends; Round() sets a partition back to its first waiting record.
  positions_[topic] = std::move(ends);
  return Status::Ok();
}

Result<RoundReport> AuditStore::Round() {
  RoundState round;
  for (const auto& [source, ledger] : ledgers_) round.states[source].source = source;
  CL_RETURN_IF_ERROR(ReadTopic<store::LogRecord>(
      topics_.ledger, emit::kLedgerSchema,
      [](const model::Json& j) { return emit::DecodeLedgerRecord(j); }, &waiting_->inputs, &round));
  CL_RETURN_IF_ERROR(ReadTopic<model::Decision>(
      topics_.decisions, emit::kDecisionSchema,
      [](const model::Json& j) { return model::DecodeDecision(j); }, &waiting_->decisions, &round));
  std::set<std::string> sources;
  for (const auto& [source, state] : round.states) sources.insert(source);
  for (const auto& [source, records] : waiting_->inputs) sources.insert(source);
  for (const auto& [source, records] : waiting_->decisions) sources.insert(source);
  for (const std::string& source : sources) CL_RETURN_IF_ERROR(Drain(source, &round));
  // Each copy keeps its audit trail up to date, the chain its replica keeps over the same records
  // (replay/trail.h): `verify-trail` checks a copy against the replica's checkpoints.
  for (const auto& [source, state] : round.states) {
    if (state.inputs_added + state.decisions_added == 0) continue;
    CL_ASSIGN_OR_RETURN(store::Ledger * ledger, LedgerOf(source));
    CL_RETURN_IF_ERROR(replay::trail::UpdateTrail(*ledger, {}, RealClock().Now()).status());
  }

  // A partition's position stays at its first waiting record, so a restart reads it again.
  auto hold_back = [&](const auto& by_source) {
    for (const auto& [source, records] : by_source) {
      for (const auto& [seq, h] : records) {
        auto& at = positions_[h.topic][h.partition];
        if (h.offset < at) at = h.offset;
      }
    }
  };
  hold_back(waiting_->inputs);
  hold_back(waiting_->decisions);
  CL_RETURN_IF_ERROR(StorePositions());
  CL_RETURN_IF_ERROR(CheckWaiting(&round));
  for (auto& [source, state] : round.states) round.report.sources.push_back(std::move(state));
  return std::move(round.report);
}

}  // namespace cronledger::app::audit_store
