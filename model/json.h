#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "model/result.h"
#include "model/time.h"

namespace cronledger::model {

using Json = nlohmann::json;

// Parses untrusted JSON text; never throws. The error names the byte offset.
Result<Json> ParseJson(std::string_view text);

// Compact serialization that never throws: invalid UTF-8 in strings is replaced (U+FFFD) rather
// than aborting, so raw objects from the wire can always be written back out.
std::string DumpJson(const Json& j);

// A JSON value kept as DumpJson's bytes of it, for a value held long and read rarely (a CronJob's
// job template, which only a Job created from it reads): its bytes take a fraction of the memory
// of its tree. Tree() gives back the tree DumpJson wrote, so two JsonTexts are equal exactly when
// their trees are (DumpJson orders object keys and writes no spaces). Strings that are not valid
// UTF-8 are kept as DumpJson replaces them (U+FFFD); ParseJson never makes such a tree.
class JsonText {
 public:
  JsonText() : bytes_("{}") {}
  // Implicit, as a Json converts from its values: `t.spec = Json{...}` reads as it would for a
  // Json member.
  JsonText(const Json& j) : bytes_(DumpJson(j)) {}  // NOLINT(google-explicit-constructor)

  // The value as a tree. The bytes are DumpJson's, so they always parse.
  Json Tree() const;
  const std::string& bytes() const { return bytes_; }

  friend bool operator==(const JsonText&, const JsonText&) = default;

 private:
  std::string bytes_;
};

// Typed field readers over untrusted objects. Each returns InvalidArgument naming `path` when the
// field is present with the wrong type; an absent field (or JSON null, which Kubernetes treats as
// absent) yields std::nullopt / the default.
Result<std::optional<std::string>> OptString(const Json& obj, std::string_view key,
                                             std::string_view path);
Result<std::optional<int64_t>> OptInt(const Json& obj, std::string_view key, std::string_view path);
Result<std::optional<bool>> OptBool(const Json& obj, std::string_view key, std::string_view path);
Result<std::optional<Time>> OptTime(const Json& obj, std::string_view key, std::string_view path);
Result<std::map<std::string, std::string>> StringMap(const Json& obj, std::string_view key,
                                                     std::string_view path);
// The object at obj[key], or an empty object when absent/null; InvalidArgument if not an object.
Result<Json> OptObject(const Json& obj, std::string_view key, std::string_view path);

// Members of documents a later check validates anyway (bundles, checkpoints, answers of
// cronledger's own admin socket): obj[key] when `obj` is an object holding it with the wanted type,
// else `fallback` (absent, null, another type, or `obj` not an object). Never throws, where
// nlohmann's value() throws on a wrong type and on a non-object.
std::string StringOr(const Json& obj, std::string_view key, std::string fallback = "");
uint64_t UintOr(const Json& obj, std::string_view key, uint64_t fallback = 0);
int64_t IntOr(const Json& obj, std::string_view key, int64_t fallback = 0);
bool BoolOr(const Json& obj, std::string_view key, bool fallback = false);
// obj[key][member] when both levels are objects and it is a string, else "" (an API answer's
// metadata.uid, for one).
std::string StringAt(const Json& obj, std::string_view key, std::string_view member);
// obj[key] of any type, or `fallback` when absent or `obj` is not an object.
Json MemberOr(const Json& obj, std::string_view key, Json fallback = Json());

// Writers that follow Go's `omitempty`: absent optionals and empty maps erase the key.
void PutOptString(Json* obj, std::string_view key, const std::optional<std::string>& v);
void PutString(Json* obj, std::string_view key, const std::string& v);  // erased when empty
void PutOptInt(Json* obj, std::string_view key, const std::optional<int64_t>& v);
void PutOptBool(Json* obj, std::string_view key, const std::optional<bool>& v);
void PutOptTime(Json* obj, std::string_view key, const std::optional<Time>& v);
void PutStringMap(Json* obj, std::string_view key, const std::map<std::string, std::string>& m);

}  // namespace cronledger::model
