// Reading a bundle back (replay/bundle.h): every line is checked before anything is replayed.

#include "model/json.h"
#include "model/sha256.h"
#include "replay/bundle.h"

namespace cronledger::replay {
namespace {

Status LineError(size_t line, const std::string& why) {
  return Status::Corruption("bundle line " + std::to_string(line) + ": " + why);
}

Result<std::optional<Time>> OptionalTime(const model::Json& j) {
  if (j.is_null()) return std::optional<Time>();
  if (!j.is_string()) return Status::Corruption("want an RFC 3339 time or null");
  CL_ASSIGN_OR_RETURN(Time t, ParseRfc3339(j.get<std::string>()));
  return std::optional<Time>(t);
}

Result<BundleHeader> ParseHeader(const model::Json& j) {
  if (!j.is_object() || model::StringOr(j, "bundle") != "cronledger") {
    return Status::Corruption("not a cronledger bundle");
  }
  BundleHeader h;
  h.version = static_cast<int>(model::IntOr(j, "version"));
  if (h.version != kBundleVersion) {
    return Status::FailedPrecondition("bundle version " + std::to_string(h.version) +
                                      " is not supported (this build reads version " +
                                      std::to_string(kBundleVersion) + ")");
  }
  h.record_format = static_cast<int>(model::IntOr(j, "recordFormat"));
  h.schema_version = static_cast<int>(model::IntOr(j, "schemaVersion"));
  h.tzdata = model::StringOr(j, "tzdata");
  h.inputs = model::UintOr(j, "inputs");
  h.decisions = model::UintOr(j, "decisions");
  const model::Json scope = model::MemberOr(j, "scope", model::Json::object());
  CL_ASSIGN_OR_RETURN(h.scope.since, OptionalTime(model::MemberOr(scope, "since")));
  CL_ASSIGN_OR_RETURN(h.scope.until, OptionalTime(model::MemberOr(scope, "until")));
  const model::Json cj = model::MemberOr(scope, "cronJob");
  if (cj.is_string()) h.scope.cron_job = cj.get<std::string>();
  return h;
}

Status ParseRecordLine(const model::Json& j, std::vector<store::LogRecord>* inputs,
                       std::vector<model::Decision>* decisions) {
  // A trail bundle's record removed by retention (replay/trail.h): only its leaf is left.
  if (j.is_object() && j.contains("removed") && !j.contains("record")) return Status::Ok();
  if (!j.is_object() || !j.contains("record") || !j["record"].is_string()) {
    return Status::Corruption("want an input or decision record");
  }
  CL_ASSIGN_OR_RETURN(std::string bytes, Base64Decode(j["record"].get<std::string>()));
  if (j.contains("input")) {
    store::LogRecord rec;
    rec.seq = model::UintOr(j, "input");
    CL_ASSIGN_OR_RETURN(rec.recorded_at, ParseRfc3339(model::StringOr(j, "recordedAt")));
    rec.raw_pruned = model::BoolOr(j, "rawPruned");
    CL_ASSIGN_OR_RETURN(rec.input, model::DecodeInput(bytes));
    if (!inputs->empty() && inputs->back().seq >= rec.seq) {
      return Status::Corruption("input seqs must increase");
    }
    inputs->push_back(std::move(rec));
  } else if (j.contains("decision")) {
    CL_ASSIGN_OR_RETURN(model::Decision d, model::DecodeDecisionRecord(bytes));
    d.seq = model::UintOr(j, "decision");
    decisions->push_back(std::move(d));
  } else {
    return Status::Corruption("want an input or decision record");
  }
  return Status::Ok();
}

}  // namespace

Result<LoadedBundle> ReadBundle(std::string_view text) {
  LoadedBundle out;
  std::vector<store::LogRecord> inputs;
  std::vector<model::Decision> decisions;
  size_t pos = 0, line_no = 0;
  bool ended = false;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) return LineError(line_no + 1, "no final newline");
    const std::string_view line = text.substr(pos, nl - pos);
    ++line_no;
    if (ended) return LineError(line_no, "data after the end line");
    auto j = model::ParseJson(line);
    if (!j.ok()) return LineError(line_no, j.status().message());
    Status s;
    if (line_no == 1) {
      auto h = ParseHeader(*j);
      if (!h.ok()) return h.status().WithContext("bundle line 1");
      out.header = std::move(*h);
    } else if (j->is_object() && j->value("end", false)) {
      const std::string want = model::Sha256::Hex(model::Sha256::Hash(text.substr(0, pos)));
      if (j->value("sha256", "") != want) return LineError(line_no, "checksum mismatch");
      ended = true;
    } else {
      s = ParseRecordLine(*j, &inputs, &decisions);
    }
    if (!s.ok()) return LineError(line_no, s.message());
    pos = nl + 1;
  }
  if (!ended) return Status::Corruption("bundle: truncated (no end line)");
  if (inputs.size() != out.header.inputs || decisions.size() != out.header.decisions) {
    return Status::Corruption("bundle: the header counts " + std::to_string(out.header.inputs) +
                              " inputs and " + std::to_string(out.header.decisions) +
                              " decisions, the file holds " + std::to_string(inputs.size()) +
                              " and " + std::to_string(decisions.size()));
  }
  out.source = std::make_unique<MemorySource>(std::move(inputs), std::move(decisions));
  return out;
}

}  // namespace cronledger::replay
