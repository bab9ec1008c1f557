#include "model/json.h"

#include <limits>

#include "model/json_limits.h"

namespace cronledger::model {
namespace {

std::string FieldPath(std::string_view path, std::string_view key) {
  std::string out(path);
  if (!out.empty()) out.push_back('.');
  out.append(key);
  return out;
}

const Json* Find(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

Status WrongType(std::string_view path, std::string_view key, std::string_view want,
                 const Json& got) {
  return Status::InvalidArgument(FieldPath(path, key) + ": expected " + std::string(want) +
                                 ", got " + got.type_name());
}

}  // namespace

Result<Json> ParseJson(std::string_view text) {
  // nlohmann parses without recursion, but dumping, copying, comparing and CBOR encoding the tree
  // recurse: a document nested beyond the limit is refused before it becomes a tree.
  CL_RETURN_IF_ERROR(CheckJsonDepth(text, kMaxDocumentDepth));
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    return Status::InvalidArgument(std::string("malformed JSON: ") + e.what());
  }
}

std::string DumpJson(const Json& j) {
  return j.dump(-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

Json JsonText::Tree() const {
  // Without exceptions, a failed parse would give a discarded value; DumpJson's bytes cannot fail.
  return Json::parse(bytes_, /*cb=*/nullptr, /*allow_exceptions=*/false);
}

std::string StringOr(const Json& obj, std::string_view key, std::string fallback) {
  const Json* v = Find(obj, key);
  return v != nullptr && v->is_string() ? v->get<std::string>() : fallback;
}

uint64_t UintOr(const Json& obj, std::string_view key, uint64_t fallback) {
  const Json* v = Find(obj, key);
  return v != nullptr && v->is_number_unsigned() ? v->get<uint64_t>() : fallback;
}

int64_t IntOr(const Json& obj, std::string_view key, int64_t fallback) {
  const Json* v = Find(obj, key);
  if (v == nullptr) return fallback;
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    return u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? static_cast<int64_t>(u)
                                                                           : fallback;
  }
  return v->is_number_integer() ? v->get<int64_t>() : fallback;
}

bool BoolOr(const Json& obj, std::string_view key, bool fallback) {
  const Json* v = Find(obj, key);
  return v != nullptr && v->is_boolean() ? v->get<bool>() : fallback;
}

std::string StringAt(const Json& obj, std::string_view key, std::string_view member) {
  const Json* inner = Find(obj, key);
  return inner != nullptr ? StringOr(*inner, member) : "";
}

Json MemberOr(const Json& obj, std::string_view key, Json fallback) {
  if (!obj.is_object()) return fallback;
  auto it = obj.find(key);
  return it == obj.end() ? fallback : *it;
}

Result<std::optional<std::string>> OptString(const Json& obj, std::string_view key,
                                             std::string_view path) {
  const Json* v = Find(obj, key);
  if (v == nullptr) return std::optional<std::string>();
  if (!v->is_string()) return WrongType(path, key, "string", *v);
  return std::optional<std::string>(v->get<std::string>());
}

Result<std::optional<int64_t>> OptInt(const Json& obj, std::string_view key,
                                      std::string_view path) {
  const Json* v = Find(obj, key);
  if (v == nullptr) return std::optional<int64_t>();
  // nlohmann keeps every non-negative integer as unsigned (is_number_integer() holds for those
  // too): one above int64's range would wrap to a negative value, so it is out of range.
  if (v->is_number_unsigned() &&
      v->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return Status::InvalidArgument(FieldPath(path, key) + ": integer out of range");
  }
  if (v->is_number_integer()) return std::optional<int64_t>(v->get<int64_t>());
  if (v->is_number_float()) {
    // encoding/json accepts 3.0 for an int field only if it is integral; we reject all floats the
    // way the API server's strict decoder does for integer fields.
    return WrongType(path, key, "integer", *v);
  }
  return WrongType(path, key, "integer", *v);
}

Result<std::optional<bool>> OptBool(const Json& obj, std::string_view key, std::string_view path) {
  const Json* v = Find(obj, key);
  if (v == nullptr) return std::optional<bool>();
  if (!v->is_boolean()) return WrongType(path, key, "boolean", *v);
  return std::optional<bool>(v->get<bool>());
}

Result<std::optional<Time>> OptTime(const Json& obj, std::string_view key, std::string_view path) {
  CL_ASSIGN_OR_RETURN(auto s, OptString(obj, key, path));
  if (!s.has_value()) return std::optional<Time>();
  auto t = ParseRfc3339(*s);
  if (!t.ok()) return t.status().WithContext(FieldPath(path, key));
  return std::optional<Time>(*t);
}

Result<std::map<std::string, std::string>> StringMap(const Json& obj, std::string_view key,
                                                     std::string_view path) {
  std::map<std::string, std::string> out;
  const Json* v = Find(obj, key);
  if (v == nullptr) return out;
  if (!v->is_object()) return WrongType(path, key, "object", *v);
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it->is_string()) return WrongType(FieldPath(path, key), it.key(), "string", *it);
    out.emplace(it.key(), it->get<std::string>());
  }
  return out;
}

Result<Json> OptObject(const Json& obj, std::string_view key, std::string_view path) {
  const Json* v = Find(obj, key);
  if (v == nullptr) return Json::object();
  if (!v->is_object()) return WrongType(path, key, "object", *v);
  return *v;
}

void PutOptString(Json* obj, std::string_view key, const std::optional<std::string>& v) {
  if (v.has_value()) {
    (*obj)[std::string(key)] = *v;
  } else {
    obj->erase(std::string(key));
  }
}

void PutString(Json* obj, std::string_view key, const std::string& v) {
  // PutOptString(obj, key, v or nullopt when empty), without copying `v` into an optional first.
  if (v.empty()) {
    obj->erase(std::string(key));
  } else {
    (*obj)[std::string(key)] = v;
  }
}

void PutOptInt(Json* obj, std::string_view key, const std::optional<int64_t>& v) {
  if (v.has_value()) {
    (*obj)[std::string(key)] = *v;
  } else {
    obj->erase(std::string(key));
  }
}

void PutOptBool(Json* obj, std::string_view key, const std::optional<bool>& v) {
  if (v.has_value()) {
    (*obj)[std::string(key)] = *v;
  } else {
    obj->erase(std::string(key));
  }
}

void PutOptTime(Json* obj, std::string_view key, const std::optional<Time>& v) {
  if (v.has_value()) {
    (*obj)[std::string(key)] = FormatRfc3339(*v);
  } else {
    obj->erase(std::string(key));
  }
}

void PutStringMap(Json* obj, std::string_view key, const std::map<std::string, std::string>& m) {
  if (m.empty()) {
    obj->erase(std::string(key));
    return;
  }
  Json out = Json::object();
  for (const auto& [k, v] : m) out[k] = v;
  (*obj)[std::string(key)] = std::move(out);
}

}  // namespace cronledger::model
