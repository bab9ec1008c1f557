// Bundle sets (replay/bundle.h): one bundle per source of an audit store, framed by section lines.
#include <set>

#include "model/json.h"
#include "model/sha256.h"
#include "replay/bundle.h"

namespace cronledger::replay {
namespace {

constexpr std::string_view kSetHeaderPrefix = "{\"bundleSet\":";
constexpr std::string_view kSectionPrefix = "{\"section\":";
constexpr std::string_view kSetEndPrefix = "{\"setEnd\":";

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

Status LineError(size_t line, const std::string& what) {
  return Status::Corruption("bundle set line " + std::to_string(line) + ": " + what);
}

}  // namespace

std::string WriteBundleSet(const std::vector<BundleSection>& sections) {
  model::Json sources = model::Json::array();
  for (const BundleSection& s : sections) sources.push_back(s.source);
  std::string out = model::DumpJson(model::Json{
      {"bundleSet", "cronledger"}, {"version", kBundleSetVersion}, {"sources", sources}});
  out += '\n';
  for (const BundleSection& s : sections) {
    out += model::DumpJson(model::Json{{"section", s.source}});
    out += '\n';
    out += s.bundle;
    if (!s.bundle.empty() && s.bundle.back() != '\n') out += '\n';
  }
  const std::string sum = model::Sha256::Hex(model::Sha256::Hash(out));
  out +=
      model::DumpJson(model::Json{{"setEnd", true}, {"sources", sections.size()}, {"sha256", sum}});
  out += '\n';
  return out;
}

bool IsBundleSet(std::string_view text) { return StartsWith(text, kSetHeaderPrefix); }

Result<LoadedBundleSet> ReadBundleSet(std::string_view text) {
  LoadedBundleSet out;
  size_t pos = 0;
  size_t line_no = 0;
  bool ended = false;
  std::set<std::string> named;
  std::vector<std::string> declared;
  while (pos < text.size()) {
    const size_t nl = text.find('\n', pos);
    const size_t end = nl == std::string_view::npos ? text.size() : nl + 1;
    const std::string_view line = text.substr(pos, end - pos);
    ++line_no;
    if (ended) return LineError(line_no, "a line after the set's last line");
    if (line_no == 1) {
      auto j = model::ParseJson(line);
      if (!j.ok() || !j->is_object() || model::StringOr(*j, "bundleSet") != "cronledger") {
        return LineError(1,
                         "not a cronledger bundle set (want {\"bundleSet\":\"cronledger\",...})");
      }
      if (model::MemberOr(*j, "version") != kBundleSetVersion) {
        return LineError(1, "unsupported bundle set version " +
                                model::DumpJson(model::MemberOr(*j, "version")) +
                                " (this build reads " + std::to_string(kBundleSetVersion) + ")");
      }
      const model::Json sources = model::MemberOr(*j, "sources");
      if (!sources.is_array()) return LineError(1, "want \"sources\" as a list of source ids");
      for (const model::Json& s : sources) {
        if (!s.is_string()) return LineError(1, "want \"sources\" as a list of source ids");
        declared.push_back(s.get<std::string>());
      }
    } else if (StartsWith(line, kSetEndPrefix)) {
      auto j = model::ParseJson(line);
      if (!j.ok() || !j->is_object() || !model::MemberOr(*j, "sha256").is_string()) {
        return LineError(line_no, "a malformed last line");
      }
      out.checksum_matches = model::StringOr(*j, "sha256") ==
                             model::Sha256::Hex(model::Sha256::Hash(text.substr(0, pos)));
      ended = true;
    } else if (StartsWith(line, kSectionPrefix)) {
      auto j = model::ParseJson(line);
      if (!j.ok() || !j->is_object() || !model::MemberOr(*j, "section").is_string()) {
        return LineError(line_no, "a malformed section line");
      }
      BundleSection section;
      section.source = model::StringOr(*j, "section");
      if (!named.insert(section.source).second) {
        return LineError(line_no, "source \"" + section.source + "\" has a second section");
      }
      out.sections.push_back(std::move(section));
    } else if (out.sections.empty()) {
      return LineError(line_no, "a line before the first section");
    } else {
      out.sections.back().bundle.append(line);
    }
    pos = end;
  }
  if (line_no == 0) return Status::Corruption("bundle set: empty");
  if (!ended) return Status::Corruption("bundle set: no last line (the file was cut short)");
  out.sections_match_header = declared.size() == out.sections.size();
  for (size_t i = 0; out.sections_match_header && i < declared.size(); ++i) {
    out.sections_match_header = declared[i] == out.sections[i].source;
  }
  return out;
}

}  // namespace cronledger::replay
