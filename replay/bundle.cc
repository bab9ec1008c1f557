#include "replay/bundle.h"

#include <cstring>
#include <map>
#include <set>

#include "model/json.h"
#include "model/sha256.h"
#include "store/view.h"

namespace cronledger::replay {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

model::Json TimeOrNull(const std::optional<Time>& t) {
  return t ? model::Json(FormatRfc3339Nano(*t)) : model::Json(nullptr);
}

std::string_view InputTypeName(const model::Input& in) {
  static constexpr std::string_view kNames[] = {"WatchEvent",   "Tick",         "ActionOutcome",
                                                "ConfigChange", "ActionIntent", "PassEnd"};
  return kNames[in.index()];
}

// Chooses the records of a scope in one scan of the inputs (see bundle.h).
class Selector {
 public:
  explicit Selector(const ReplayScope& scope) : scope_(scope) {}

  Status Add(const store::LogRecord& rec) {
    if (const auto* ev = std::get_if<model::WatchEvent>(&rec.input)) return AddWatch(rec, *ev);
    if (std::holds_alternative<model::ConfigChange>(rec.input)) {
      out_[rec.seq] = rec;
    } else if (const auto* t = std::get_if<model::Tick>(&rec.input)) {
      all_ticks_.insert(rec.seq);
      if (!scope_.Selects(t->namespace_, t->name) || !scope_.InWindow(t->now)) return Status::Ok();
      Flush();
      ticks_.insert(rec.seq);
      last_tick_ = rec.seq;
      out_[rec.seq] = rec;
    } else if (const auto* i = std::get_if<model::ActionIntent>(&rec.input)) {
      if (ticks_.count(i->tick_seq) != 0) intents_.insert(rec.seq), out_[rec.seq] = rec;
    } else if (const auto* o = std::get_if<model::ActionOutcome>(&rec.input)) {
      if (intents_.count(o->decision_seq) != 0) out_[rec.seq] = rec;
    } else if (const auto* e = std::get_if<model::PassEnd>(&rec.input)) {
      const std::string key = FamilyKey(e->namespace_, e->name);
      if (ticks_.count(e->tick_seq) != 0) {
        out_[rec.seq] = rec;
        started_.insert(key);
      } else if (scope_.Selects(e->namespace_, e->name) && started_.count(key) == 0) {
        seeds_[key] = rec;
      }
    }
    return Status::Ok();
  }

  bool Wants(const model::Decision& d) const {
    const uint64_t tick = d.cause.tick_seq;
    return ticks_.count(tick) != 0 ||
           (all_ticks_.count(tick) == 0 && scope_.Selects(d.cron_job.namespace_, d.cron_job.name) &&
            scope_.InWindow(d.time));
  }

  // The selected inputs in seq order. Watch events after the last replayed Tick cannot be in any
  // replayed pass's view (view_seq < tick seq) and are left out.
  std::vector<const store::LogRecord*> Inputs() {
    for (auto& [key, rec] : seeds_) out_[rec.seq] = rec;
    std::vector<const store::LogRecord*> v;
    for (const auto& [seq, rec] : out_) {
      if (std::holds_alternative<model::WatchEvent>(rec.input) && seq > last_tick_) continue;
      v.push_back(&rec);
    }
    return v;
  }

 private:
  Status AddWatch(const store::LogRecord& rec, const model::WatchEvent& ev) {
    if (ev.type == model::WatchEventType::kBookmark) return Status::Ok();
    const std::string key = store::view_key::Object(ev.kind, ev.namespace_, ev.name);
    const std::string& family = ev.kind == model::ObjectKind::kCronJob ? ev.name : ev.owner_name;
    CL_ASSIGN_OR_RETURN(auto held, view_.Get(key));
    if (!scope_.Selects(ev.namespace_, family) && !held) return Status::Ok();
    if (flushed_) {
      out_[rec.seq] = rec;
      return Status::Ok();
    }
    // Before the window: keep only the record each object's current version comes from.
    CL_RETURN_IF_ERROR(store::FoldWatchEvent(ev, rec.seq, &view_));
    CL_ASSIGN_OR_RETURN(auto after, view_.Get(key));
    if (!after) {
      live_.erase(key);
      return Status::Ok();
    }
    CL_ASSIGN_OR_RETURN(store::ObjectEntry entry, store::DecodeObjectEntry(*after));
    if (entry.source_seq == rec.seq) live_[key] = rec;
    return Status::Ok();
  }

  void Flush() {
    if (flushed_) return;
    flushed_ = true;
    for (auto& [key, rec] : live_) out_[rec.seq] = std::move(rec);
    live_.clear();
  }

  const ReplayScope& scope_;
  store::MemViewStore view_;
  std::map<std::string, store::LogRecord> live_;  // object key -> the record of its version
  bool flushed_ = false;
  std::map<uint64_t, store::LogRecord> out_;
  std::map<std::string, store::LogRecord> seeds_;
  std::set<std::string> started_;
  std::set<uint64_t> ticks_, intents_, all_ticks_;
  uint64_t last_tick_ = 0;
};

model::Json HeaderJson(const BundleHeader& h) {
  return {{"bundle", "cronledger"},
          {"version", h.version},
          {"recordFormat", h.record_format},
          {"schemaVersion", h.schema_version},
          {"tzdata", h.tzdata},
          {"scope",
           {{"since", TimeOrNull(h.scope.since)},
            {"until", TimeOrNull(h.scope.until)},
            {"cronJob", h.scope.cron_job ? model::Json(*h.scope.cron_job) : model::Json(nullptr)}}},
          {"inputs", h.inputs},
          {"decisions", h.decisions}};
}

}  // namespace

Result<std::string> ExportBundle(RecordSource& source, const ReplayScope& scope,
                                 BundleHeader header) {
  Selector sel(scope);
  Status status;
  CL_RETURN_IF_ERROR(source.ScanInputs([&](const store::LogRecord& rec) {
    status = sel.Add(rec);
    return status.ok();
  }));
  CL_RETURN_IF_ERROR(status);
  std::vector<model::Decision> decisions;
  CL_RETURN_IF_ERROR(source.ScanDecisions([&](const model::Decision& d) {
    if (sel.Wants(d)) decisions.push_back(d);
    return true;
  }));
  const auto inputs = sel.Inputs();
  header.version = kBundleVersion;
  header.record_format = model::kInputFormatV1;
  header.scope = scope;
  header.inputs = inputs.size();
  header.decisions = decisions.size();
  std::string out = model::DumpJson(HeaderJson(header)) + "\n";
  for (const store::LogRecord* r : inputs) {
    out += model::DumpJson({{"input", r->seq},
                            {"type", InputTypeName(r->input)},
                            {"recordedAt", FormatRfc3339Nano(r->recorded_at)},
                            {"rawPruned", r->raw_pruned},
                            {"record", Base64Encode(model::EncodeInput(r->input))}});
    out += '\n';
  }
  for (const model::Decision& d : decisions) {
    out += model::DumpJson({{"decision", d.seq},
                            {"time", FormatRfc3339Nano(d.time)},
                            {"cronJob", FamilyKey(d.cron_job.namespace_, d.cron_job.name)},
                            {"action", model::DecisionActionName(d.action)},
                            {"record", Base64Encode(model::EncodeDecisionRecord(d))}});
    out += '\n';
  }
  const std::string sum = model::Sha256::Hex(model::Sha256::Hash(out));
  out += model::DumpJson(
      {{"end", true}, {"inputs", header.inputs}, {"decisions", header.decisions}, {"sha256", sum}});
  out += '\n';
  return out;
}

std::string Base64Encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const uint32_t v = (uint32_t{static_cast<uint8_t>(bytes[i])} << 16) |
                       (uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8) |
                       uint32_t{static_cast<uint8_t>(bytes[i + 2])};
    for (int k = 3; k >= 0; --k) out.push_back(kAlphabet[(v >> (6 * k)) & 63]);
  }
  if (i < bytes.size()) {
    uint32_t v = uint32_t{static_cast<uint8_t>(bytes[i])} << 16;
    if (i + 1 < bytes.size()) v |= uint32_t{static_cast<uint8_t>(bytes[i + 1])} << 8;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(i + 1 < bytes.size() ? kAlphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return Status::Corruption("base64: length not a multiple of 4");
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t v = 0;
    int pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      const char c = text[i + k];
      const char* p = c == '=' ? nullptr : std::strchr(kAlphabet, c);
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++pad;
      } else if (p == nullptr || c == '\0' || pad > 0) {
        return Status::Corruption("base64: bad character at " + std::to_string(i + k));
      }
      v = (v << 6) | (p ? static_cast<uint32_t>(p - kAlphabet) : 0);
    }
    out.push_back(static_cast<char>(v >> 16));
    if (pad < 2) out.push_back(static_cast<char>((v >> 8) & 255));
    if (pad < 1) out.push_back(static_cast<char>(v & 255));
  }
  return out;
}

}  // namespace cronledger::replay
