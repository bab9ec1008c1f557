// Trail bundles: every record with its leaf, and their verification (replay/trail.h).
#include <map>

#include "model/sha256.h"
#include "replay/bundle.h"
#include "replay/trail.h"
#include "replay/trail_internal.h"

namespace cronledger::replay::trail {
namespace {

namespace st = store::trail;

std::string_view InputTypeName(const model::Input& in) {
  static constexpr std::string_view kNames[] = {"WatchEvent",   "Tick",         "ActionOutcome",
                                                "ConfigChange", "ActionIntent", "PassEnd"};
  return kNames[in.index()];
}

Hash HashOf(std::string_view bytes) {
  const model::Sha256::Digest d = model::Sha256::Hash(bytes);
  Hash h;
  std::copy(d.begin(), d.end(), h.begin());
  return h;
}

// Writes one log's lines: the records from `scan`, the entries of records removed by retention
// between them. `line(seq, entry)` writes a record's line.
class LineWriter {
 public:
  LineWriter(store::Ledger& ledger, std::string_view log, std::string* out)
      : entries_(ledger, log), log_(log), out_(out) {}

  // The entry of `seq` (if any), after writing the removed records before it.
  Result<std::optional<st::TrailEntry>> Before(uint64_t seq) {
    while (true) {
      CL_ASSIGN_OR_RETURN(auto next, entries_.Peek());
      if (next == nullptr || next->first > seq) return std::optional<st::TrailEntry>();
      entries_.Take();
      if (next->first == seq) return std::optional<st::TrailEntry>(next->second);
      // An entry without its record: what retention removed, or what is gone otherwise (written
      // as it is, for the verification to report).
      if (next->second.removed_by_retention) {
        *out_ += model::DumpJson(
            {{"removed", next->first}, {"log", log_}, {"leaf", Hex(next->second.leaf)}});
        *out_ += '\n';
      }
    }
  }
  Status Drain() { return Before(UINT64_MAX).status(); }

 private:
  EntryCursor entries_;
  std::string log_;
  std::string* out_;
};

Status WriteInputs(store::Ledger& ledger, std::string* out, uint64_t* count) {
  LineWriter writer(ledger, st::kInputsLog, out);
  Status status;
  CL_RETURN_IF_ERROR(ledger.ScanStoredInputs(1, [&](const store::StoredInput& in) {
    auto entry = writer.Before(in.seq);
    auto decoded =
        entry.ok() ? model::DecodeInput(in.record) : Result<model::Input>(entry.status());
    if (!decoded.ok()) {
      status = decoded.status().WithContext("input " + std::to_string(in.seq));
      return false;
    }
    if (auto* ev = std::get_if<model::WatchEvent>(&*decoded); ev && in.has_raw) {
      ev->raw = std::string(in.raw);
    }
    model::Json line = {{"input", in.seq},
                        {"type", InputTypeName(*decoded)},
                        {"recordedAt", FormatRfc3339Nano(in.recorded_at)},
                        {"rawPruned", in.raw_pruned},
                        {"record", Base64Encode(model::EncodeInput(*decoded))}};
    if (*entry) {
      line["leaf"] = Hex((*entry)->leaf);
      if (in.raw_pruned && (*entry)->raw_digest) line["rawSha256"] = Hex(*(*entry)->raw_digest);
    }
    *out += model::DumpJson(line);
    *out += '\n';
    ++*count;
    return true;
  }));
  CL_RETURN_IF_ERROR(status);
  return writer.Drain();
}

Status WriteDecisions(store::Ledger& ledger, std::string* out, uint64_t* count) {
  LineWriter writer(ledger, st::kDecisionsLog, out);
  Status status;
  CL_RETURN_IF_ERROR(ledger.ScanDecisionBytes(1, [&](uint64_t seq, std::string_view bytes) {
    auto entry = writer.Before(seq);
    auto d =
        entry.ok() ? model::DecodeDecisionRecord(bytes) : Result<model::Decision>(entry.status());
    if (!d.ok()) {
      status = d.status().WithContext("decision " + std::to_string(seq));
      return false;
    }
    model::Json line = {{"decision", seq},
                        {"time", FormatRfc3339Nano(d->time)},
                        {"cronJob", d->cron_job.namespace_ + "/" + d->cron_job.name},
                        {"action", model::DecisionActionName(d->action)},
                        {"record", Base64Encode(bytes)}};
    if (*entry) line["leaf"] = Hex((*entry)->leaf);
    *out += model::DumpJson(line);
    *out += '\n';
    ++*count;
    return true;
  }));
  CL_RETURN_IF_ERROR(status);
  return writer.Drain();
}

// The leaf a bundle line claims, if it has one.
Result<std::optional<st::TrailEntry>> Claimed(const model::Json& j, bool removed) {
  if (!j.contains("leaf")) return std::optional<st::TrailEntry>();
  if (!j["leaf"].is_string()) return Status::Corruption("\"leaf\": want 64 hex digits");
  st::TrailEntry e;
  CL_ASSIGN_OR_RETURN(e.leaf, ParseHex(j["leaf"].get<std::string>()));
  e.removed_by_retention = removed;
  return std::optional<st::TrailEntry>(e);
}

Result<TrailItem> InputItem(const model::Json& j, uint64_t seq) {
  TrailItem item;
  item.seq = seq;
  CL_ASSIGN_OR_RETURN(item.claimed, Claimed(j, false));
  CL_ASSIGN_OR_RETURN(std::string bytes, Base64Decode(model::StringOr(j, "record")));
  CL_ASSIGN_OR_RETURN(Time recorded_at, ParseRfc3339(model::StringOr(j, "recordedAt")));
  CL_ASSIGN_OR_RETURN(model::Input in, model::DecodeInput(bytes));
  RawKind kind = RawKind::kNone;
  Hash digest{};
  if (auto* ev = std::get_if<model::WatchEvent>(&in)) {
    if (!ev->raw.empty()) {
      digest = HashOf(ev->raw);
      kind = RawKind::kDigest;
      ev->raw.clear();
    } else if (j.value("rawPruned", false)) {
      kind = RawKind::kPrunedUnknown;
      if (j.contains("rawSha256") && j["rawSha256"].is_string()) {
        CL_ASSIGN_OR_RETURN(digest, ParseHex(j["rawSha256"].get<std::string>()));
        kind = RawKind::kDigest;
      }
    }
  }
  const std::string stored = model::EncodeInput(in);  // the bytes the store keeps
  item.recomputed = InputLeaf(seq, recorded_at, stored, kind, digest);
  item.leaf_at = [=](uint64_t at) { return InputLeaf(at, recorded_at, stored, kind, digest); };
  item.name = RecordName(st::kInputsLog, seq, stored);
  return item;
}

Result<TrailItem> DecisionItem(const model::Json& j, uint64_t seq) {
  TrailItem item;
  item.seq = seq;
  CL_ASSIGN_OR_RETURN(item.claimed, Claimed(j, false));
  CL_ASSIGN_OR_RETURN(std::string bytes, Base64Decode(model::StringOr(j, "record")));
  item.recomputed = DecisionLeaf(seq, bytes);
  item.leaf_at = [bytes](uint64_t at) { return DecisionLeaf(at, bytes); };
  item.name = RecordName(st::kDecisionsLog, seq, bytes);
  return item;
}

struct BundleChains {
  std::map<std::string, std::unique_ptr<ChainChecker>> checkers;  // by log
  std::map<std::string, std::map<uint64_t, std::string>> names;
};

Status AddLine(const model::Json& j, BundleChains* chains) {
  std::string log;
  Result<TrailItem> item = Status::Corruption("want an input, decision or removed record");
  if (j.contains("input") && j["input"].is_number_unsigned()) {
    log = st::kInputsLog;
    item = InputItem(j, j["input"].get<uint64_t>());
  } else if (j.contains("decision") && j["decision"].is_number_unsigned()) {
    log = st::kDecisionsLog;
    item = DecisionItem(j, j["decision"].get<uint64_t>());
  } else if (j.contains("removed") && j["removed"].is_number_unsigned()) {
    log = model::StringOr(j, "log");
    TrailItem removed;
    removed.seq = j["removed"].get<uint64_t>();
    auto claimed = Claimed(j, true);
    if (!claimed.ok()) return claimed.status();
    removed.claimed = *claimed;
    item = removed;
  }
  CL_RETURN_IF_ERROR(item.status());
  auto it = chains->checkers.find(log);
  if (it == chains->checkers.end()) return Status::Ok();  // a log the checkpoint does not cover
  it->second->Add(*item);
  if (it->second->WantsName(item->seq)) chains->names[log][item->seq] = item->name;
  return Status::Ok();
}

Result<TrailVerdict> VerifyBundleLines(std::string_view text, const Checkpoint& checkpoint) {
  CL_RETURN_IF_ERROR(RejectMergedCheckpoint(checkpoint));
  TrailVerdict out;
  BundleChains chains;
  std::string source;
  size_t pos = 0, line_no = 0;
  bool ended = false;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = text.substr(pos, nl - pos);
    ++line_no;
    auto j = model::ParseJson(line);
    if (!j.ok() || !j->is_object()) {
      return Status::Corruption("bundle line " + std::to_string(line_no) + ": not a JSON object");
    }
    if (line_no == 1) {
      const model::Json trail = model::MemberOr(*j, "trail");
      if (model::StringOr(*j, "bundle") != "cronledger" || !trail.is_object()) {
        return Status::Corruption(
            "not a trail bundle (write one with `cronledger export --trail`)");
      }
      source = model::StringOr(trail, "source");
      for (const ChainHead& c : checkpoint.chains) {
        if (c.source != source) {
          return Status::NotFound("the bundle holds no records of source \"" + c.source + "\"");
        }
        chains.checkers[c.log] = std::make_unique<ChainChecker>(c);
      }
    } else if (j->value("end", false)) {
      if (j->value("sha256", "") != model::Sha256::Hex(model::Sha256::Hash(text.substr(0, pos)))) {
        out.notes.push_back(
            "the bundle's checksum does not match its lines: it was changed "
            "after export");
      }
      ended = true;
    } else {
      Status s = AddLine(*j, &chains);
      if (!s.ok()) {
        return Status::Corruption("bundle line " + std::to_string(line_no) + ": " + s.message());
      }
    }
    pos = nl + 1;
  }
  if (!ended) out.notes.push_back("the bundle has no end line: it was cut short");
  for (const ChainHead& c : checkpoint.chains) {
    out.chains.push_back(chains.checkers[c.log]->Finish(chains.names[c.log]));
  }
  return out;
}

}  // namespace

Result<std::string> ExportTrailBundle(store::Ledger& ledger, int schema_version,
                                      const std::string& tzdata) {
  std::string body;
  uint64_t inputs = 0, decisions = 0;
  CL_RETURN_IF_ERROR(WriteInputs(ledger, &body, &inputs));
  CL_RETURN_IF_ERROR(WriteDecisions(ledger, &body, &decisions));
  const model::Json header = {
      {"bundle", "cronledger"},
      {"version", kBundleVersion},
      {"recordFormat", model::kInputFormatV1},
      {"schemaVersion", schema_version},
      {"tzdata", tzdata},
      {"scope", {{"since", nullptr}, {"until", nullptr}, {"cronJob", nullptr}}},
      {"trail", {{"format", kTrailFormat}, {"source", st::kLocalSource}}},
      {"inputs", inputs},
      {"decisions", decisions}};
  std::string out = model::DumpJson(header) + "\n" + body;
  const std::string sum = model::Sha256::Hex(model::Sha256::Hash(out));
  out += model::DumpJson(
      {{"end", true}, {"inputs", inputs}, {"decisions", decisions}, {"sha256", sum}});
  out += '\n';
  return out;
}

Result<TrailVerdict> VerifyBundle(std::string_view bundle, const Checkpoint& checkpoint) {
  // nlohmann's typed accessors throw on a member of another type: turned into a Status here.
  try {
    return VerifyBundleLines(bundle, checkpoint);
  } catch (const std::exception& e) {
    return Status::Corruption(std::string("bundle: ") + e.what());
  }
}

}  // namespace cronledger::replay::trail
