#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "app/manifests.h"
#include "model/json_limits.h"

namespace cronledger::app {
namespace {

namespace fs = std::filesystem;
using model::Json;

Json ScalarToJson(const YAML::Node& node) {
  const std::string& s = node.Scalar();
  // Quoted scalars carry the non-specific tag "!"; only plain scalars are typed (YAML 1.2 core).
  if (node.Tag() == "!") return s;
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  const bool numeric_start = (s[0] >= '0' && s[0] <= '9') || s[0] == '-' || s[0] == '+';
  if (numeric_start) {
    char* end = nullptr;
    errno = 0;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno == 0 && end != nullptr && *end == '\0') return static_cast<int64_t>(v);
    errno = 0;
    const double d = std::strtod(s.c_str(), &end);
    if (errno == 0 && end != nullptr && *end == '\0') return d;
  }
  return s;
}

Json NodeToJson(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return nullptr;
    case YAML::NodeType::Scalar:
      return ScalarToJson(node);
    case YAML::NodeType::Sequence: {
      Json arr = Json::array();
      for (const auto& item : node) arr.push_back(NodeToJson(item));
      return arr;
    }
    case YAML::NodeType::Map: {
      Json obj = Json::object();
      for (const auto& kv : node) obj[kv.first.as<std::string>()] = NodeToJson(kv.second);
      return obj;
    }
  }
  return nullptr;
}

Result<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::IoError("cannot read " + path.string() + ": " + std::strerror(errno));
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Status AddDocument(const Json& doc, const std::string& source, ManifestLoadResult* out) {
  if (doc.is_null()) return Status::Ok();  // an empty YAML document ("---" at the end)
  if (!doc.is_object()) {
    out->skipped.push_back(source + ": not an object");
    return Status::Ok();
  }
  // `kind` as kubectl reads it; one that is not a string (`kind:` with no value, a number) names
  // no kind.
  const auto kind_member = doc.find("kind");
  if (kind_member != doc.end() && !kind_member->is_string() && !kind_member->is_null()) {
    out->skipped.push_back(source + ": kind is not a string");
    return Status::Ok();
  }
  const std::string kind = kind_member != doc.end() && kind_member->is_string()
                               ? kind_member->get<std::string>()
                               : std::string();
  if (kind == "List" && doc.contains("items") && doc["items"].is_array()) {
    for (size_t i = 0; i < doc["items"].size(); ++i) {
      CL_RETURN_IF_ERROR(
          AddDocument(doc["items"][i], source + ".items[" + std::to_string(i) + "]", out));
    }
    return Status::Ok();
  }
  if (kind != "CronJob") {
    out->skipped.push_back(source + ": kind \"" + kind + "\" is not a CronJob");
    return Status::Ok();
  }
  // The API server's limits, on the JSON kubectl would send for this document.
  CL_RETURN_IF_ERROR(model::CheckObjectLimits(model::DumpJson(doc)).WithContext(source));
  auto cj = model::DecodeCronJob(doc);
  if (!cj.ok()) return cj.status().WithContext(source);
  if (cj->metadata.name.empty())
    return Status::InvalidArgument(source + ": metadata.name is empty");
  if (cj->metadata.namespace_.empty()) cj->metadata.namespace_ = "default";
  out->cron_jobs.push_back({std::move(cj).value(), source});
  return Status::Ok();
}

Status LoadFile(const fs::path& path, ManifestLoadResult* out) {
  CL_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return LoadManifestText(path.string(), text, out);
}

bool IsManifestFile(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".yaml" || ext == ".yml" || ext == ".json";
}

// Sees only where each document starts. yaml-cpp's document loop does not advance past a stray
// token at document level (`{},` or `"a",`): it yields empty documents from the same place until
// memory runs out. A pass with this handler finds such a stream before YAML::LoadAll sees it.
class DocumentStarts final : public YAML::EventHandler {
 public:
  // Whether the last document began where the one before it did: the parse makes no progress.
  bool stalled() const { return stalled_; }
  const YAML::Mark& last() const { return last_; }

  void OnDocumentStart(const YAML::Mark& mark) override {
    stalled_ = seen_ && mark.pos == last_.pos;
    seen_ = true;
    last_ = mark;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  bool seen_ = false;
  bool stalled_ = false;
  YAML::Mark last_ = YAML::Mark::null_mark();
};

// Fails on a stream yaml-cpp would read forever; other errors are left to the loader.
Status CheckYamlProgress(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  while (parser.HandleNextDocument(starts)) {
    if (!starts.stalled()) continue;
    return Status::InvalidArgument("YAML: error at line " + std::to_string(starts.last().line + 1) +
                                   ", column " + std::to_string(starts.last().column + 1) +
                                   ": unexpected content after the end of a document");
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<Json>> YamlDocumentsToJson(const std::string& text) {
  try {
    CL_RETURN_IF_ERROR(CheckYamlProgress(text));
    std::vector<Json> docs;
    for (const auto& node : YAML::LoadAll(text)) docs.push_back(NodeToJson(node));
    return docs;
  } catch (const YAML::Exception& e) {
    return Status::InvalidArgument(std::string("YAML: ") + e.what());
  }
}

Status LoadManifestText(const std::string& name, const std::string& text, ManifestLoadResult* out) {
  std::vector<Json> docs;
  if (fs::path(name).extension() == ".json") {
    auto j = model::ParseJson(text);
    if (!j.ok()) return j.status().WithContext(name);
    docs.push_back(std::move(j).value());
  } else {
    auto parsed = YamlDocumentsToJson(text);
    if (!parsed.ok()) return parsed.status().WithContext(name);
    docs = std::move(parsed).value();
  }
  for (size_t i = 0; i < docs.size(); ++i) {
    CL_RETURN_IF_ERROR(AddDocument(docs[i], name + ":" + std::to_string(i), out));
  }
  return Status::Ok();
}

Result<ManifestLoadResult> LoadManifests(const std::vector<std::string>& paths) {
  ManifestLoadResult out;
  for (const auto& p : paths) {
    std::error_code ec;
    const fs::path path(p);
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> files;
      for (const auto& entry : fs::directory_iterator(path, ec)) {
        if (entry.is_regular_file() && IsManifestFile(entry.path())) files.push_back(entry.path());
      }
      if (ec) return Status::IoError("cannot list " + p + ": " + ec.message());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) CL_RETURN_IF_ERROR(LoadFile(f, &out));
    } else if (fs::exists(path, ec)) {
      CL_RETURN_IF_ERROR(LoadFile(path, &out));
    } else {
      return Status::NotFound("no such file or directory: " + p);
    }
  }
  return out;
}

Time DefaultStart(const ManifestLoadResult& manifests, Time now) {
  std::optional<Time> newest;
  for (const auto& m : manifests.cron_jobs) {
    if (const auto& created = m.cron_job.metadata.creation_timestamp) {
      newest = newest ? std::max(*newest, *created) : *created;
    }
  }
  return newest.value_or(now);
}

}  // namespace cronledger::app
