#include "ingest/decoder.h"

#include <simdjson.h>

#include <utility>

#include "model/json.h"
#include "model/json_limits.h"
#include "model/objects.h"

namespace cronledger::ingest {
namespace od = simdjson::ondemand;

static_assert(kDecoderPadding >= simdjson::SIMDJSON_PADDING, "decoder padding below simdjson's");

namespace {

// The fields of a Kubernetes object the ledger needs. Views point into the parser's buffers and
// live until the next iterate().
struct ObjectInfo {
  std::string_view kind, api_version, name, ns, uid, resource_version, message;
  std::string_view owner_name, owner_uid;
  bool has_metadata = false;
};

std::string Err(std::string_view what, simdjson::error_code e) {
  return std::string(what) + ": " + simdjson::error_message(e);
}

// Reads an optional string field (null = absent). Returns "" or the error reason. A key given
// twice takes its last value, as every JSON reader of the object does (a null one included).
std::string ReadString(od::value v, std::string_view path, std::string_view* out) {
  od::json_type type;
  if (auto e = v.type().get(type)) return Err(path, e);
  if (type == od::json_type::null) {
    *out = {};
    return "";
  }
  if (type != od::json_type::string) return std::string(path) + ": not a string";
  if (auto e = v.get_string().get(*out)) return Err(path, e);
  return "";
}

std::string ReadOwnerReferences(od::value v, ObjectInfo* info) {
  od::json_type type;
  if (auto e = v.type().get(type)) return Err("metadata.ownerReferences", e);
  if (type == od::json_type::null) return "";
  od::array refs;
  if (v.get_array().get(refs)) return "metadata.ownerReferences: not an array";
  for (auto el : refs) {
    od::object ref;
    if (el.get_object().get(ref)) return "metadata.ownerReferences[]: not an object";
    std::string_view kind, name, uid;
    bool controller = false;
    for (auto field : ref) {
      std::string_view key;
      if (auto e = field.unescaped_key().get(key)) return Err("metadata.ownerReferences", e);
      std::string err;
      if (key == "kind") {
        err = ReadString(field.value(), "ownerReferences[].kind", &kind);
      } else if (key == "name") {
        err = ReadString(field.value(), "ownerReferences[].name", &name);
      } else if (key == "uid") {
        err = ReadString(field.value(), "ownerReferences[].uid", &uid);
      } else if (key == "controller") {
        od::value cv = field.value();
        od::json_type ct;
        if (auto e = cv.type().get(ct)) return Err("ownerReferences[].controller", e);
        if (ct == od::json_type::boolean && cv.get_bool().get(controller)) {
          return "ownerReferences[].controller: not a boolean";
        }
        if (ct != od::json_type::boolean && ct != od::json_type::null) {
          return "ownerReferences[].controller: not a boolean";
        }
      }
      if (!err.empty()) return err;
    }
    // Jobs are indexed by their controlling CronJob (metav1.GetControllerOf + kind check).
    if (controller && kind == "CronJob" && info->owner_name.empty()) {
      info->owner_name = name;
      info->owner_uid = uid;
    }
  }
  return "";
}

std::string ReadMetadata(od::value v, ObjectInfo* info) {
  od::object md;
  if (v.get_object().get(md)) return "metadata: not an object";
  info->has_metadata = true;
  for (auto field : md) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return Err("metadata", e);
    std::string err;
    if (key == "name") {
      err = ReadString(field.value(), "metadata.name", &info->name);
    } else if (key == "namespace") {
      err = ReadString(field.value(), "metadata.namespace", &info->ns);
    } else if (key == "uid") {
      err = ReadString(field.value(), "metadata.uid", &info->uid);
    } else if (key == "resourceVersion") {
      err = ReadString(field.value(), "metadata.resourceVersion", &info->resource_version);
    } else if (key == "ownerReferences") {
      err = ReadOwnerReferences(field.value(), info);
    }
    if (!err.empty()) return err;
  }
  return "";
}

// Reads the top-level fields of an object; unknown fields are skipped.
std::string ReadObject(od::object obj, ObjectInfo* info) {
  for (auto field : obj) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return Err("object", e);
    std::string err;
    if (key == "kind") {
      err = ReadString(field.value(), "kind", &info->kind);
    } else if (key == "apiVersion") {
      err = ReadString(field.value(), "apiVersion", &info->api_version);
    } else if (key == "metadata") {
      err = ReadMetadata(field.value(), info);
    } else if (key == "message") {
      err = ReadString(field.value(), "message", &info->message);
    }
    if (!err.empty()) return err;
  }
  return "";
}

bool ValidName(std::string_view s) {
  return !s.empty() && s.size() <= 253 && s.find('/') == std::string_view::npos &&
         s.find('\0') == std::string_view::npos;
}

// A CronJob the typed model cannot hold (a field of the wrong type or out of range) would fail
// every later read of it; the API server's decoder refuses such an object outright, so it is
// refused here too and the view keeps the version before it, as an informer's cache would.
std::string ValidateCronJob(std::string_view raw) {
  Result<model::Json> json = model::ParseJson(raw);
  Status s = json.ok() ? model::DecodeCronJob(*json).status() : json.status();
  return s.ok() ? "" : "invalid CronJob: " + s.message();
}

// The same for a Job: every pass of its CronJob reads it, so one the model cannot hold (a status
// field of the wrong type, a malformed time) is refused at the door like a CronJob.
std::string ValidateJob(std::string_view raw) {
  Result<model::Json> json = model::ParseJson(raw);
  Status s = json.ok() ? model::DecodeJob(*json).status() : json.status();
  return s.ok() ? "" : "invalid Job: " + s.message();
}

// Validates an object and makes the event, or returns the rejection reason.
std::string MakeEvent(model::WatchEventType type, const ObjectInfo& info, std::string_view raw,
                      model::WatchEvent* ev) {
  if (Status s = model::CheckObjectLimits(raw); !s.ok()) return s.message();
  if (info.kind.empty()) return "missing kind";
  auto kind = model::ParseObjectKind(info.kind);
  if (!kind.ok()) return "unknown kind \"" + std::string(info.kind) + "\"";
  if (info.api_version.empty()) return "missing apiVersion";
  if (type == model::WatchEventType::kBookmark) {
    if (info.resource_version.empty()) return "BOOKMARK without metadata.resourceVersion";
  } else {
    if (info.name.empty()) return "missing metadata.name";
    if (info.ns.empty()) return "missing metadata.namespace";
    if (info.uid.empty()) return "missing metadata.uid";
    if (!ValidName(info.name) || !ValidName(info.ns)) return "invalid metadata.name or namespace";
  }
  if (type != model::WatchEventType::kBookmark && type != model::WatchEventType::kDeleted) {
    std::string invalid =
        *kind == model::ObjectKind::kCronJob ? ValidateCronJob(raw) : ValidateJob(raw);
    if (!invalid.empty()) return invalid;
  }
  ev->type = type;
  ev->kind = *kind;
  ev->api_version.assign(info.api_version);
  ev->namespace_.assign(info.ns);
  ev->name.assign(info.name);
  ev->uid.assign(info.uid);
  ev->resource_version.assign(info.resource_version);
  ev->owner_name.assign(info.owner_name);
  ev->owner_uid.assign(info.owner_uid);
  ev->raw.assign(raw);
  return "";
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n')) {
    s.remove_suffix(1);
  }
  return s;
}

}  // namespace

struct WatchDecoder::Impl {
  od::parser parser;
  std::string scratch;  // DecodeCopy's padded buffer

  // Returns "" on success (out filled) or the reason the whole document is rejected.
  std::string DecodeDocument(std::string_view doc, DecodedDocument* out);
};

std::string WatchDecoder::Impl::DecodeDocument(std::string_view doc, DecodedDocument* out) {
  od::document d;
  if (auto e = parser.iterate(doc.data(), doc.size(), doc.size() + kDecoderPadding).get(d)) {
    return Err("malformed JSON", e);
  }
  od::object top;
  if (auto e = d.get_object().get(top)) return Err("malformed JSON (expected an object)", e);
  ObjectInfo self;   // the document as a bare object
  ObjectInfo inner;  // a watch event's object
  std::string_view type, object_raw;
  bool is_event = false;
  bool has_items = false;
  std::vector<model::WatchEvent> items;
  std::vector<Rejection> item_rejections;
  for (auto field : top) {
    std::string_view key;
    if (auto e = field.unescaped_key().get(key)) return Err("malformed JSON", e);
    std::string err;
    if (key == "type") {
      is_event = true;
      err = ReadString(field.value(), "type", &type);
    } else if (key == "object") {
      is_event = true;
      od::object obj;
      if (field.value().get_object().get(obj)) return "object: not a JSON object";
      if (auto e = obj.raw_json().get(object_raw)) return Err("malformed JSON", e);
      if (auto e = obj.reset().error()) return Err("malformed JSON", e);
      err = ReadObject(obj, &inner);
    } else if (key == "items") {
      has_items = true;
      od::array arr;
      if (field.value().get_array().get(arr)) return "items: not an array";
      int index = 0;
      for (auto el : arr) {
        od::object obj;
        std::string_view raw;
        ObjectInfo info;
        if (el.get_object().get(obj)) return "items[" + std::to_string(index) + "]: not an object";
        if (auto e = obj.raw_json().get(raw)) return Err("malformed JSON", e);
        if (auto e = obj.reset().error()) return Err("malformed JSON", e);
        std::string item_err = ReadObject(obj, &info);
        model::WatchEvent ev;
        if (item_err.empty()) item_err = MakeEvent(model::WatchEventType::kAdded, info, raw, &ev);
        if (item_err.empty()) {
          items.push_back(std::move(ev));
        } else {
          item_rejections.push_back({item_err, std::string(raw), index});
        }
        ++index;
      }
    } else if (key == "kind") {
      err = ReadString(field.value(), "kind", &self.kind);
    } else if (key == "apiVersion") {
      err = ReadString(field.value(), "apiVersion", &self.api_version);
    } else if (key == "metadata") {
      err = ReadMetadata(field.value(), &self);
    }
    if (!err.empty()) return err;
  }
  // After the top-level object, any further token is trailing garbage.
  const char* trailing = nullptr;
  if (d.current_location().get(trailing) == simdjson::SUCCESS) {
    return "malformed JSON: trailing bytes after the document";
  }

  model::WatchEvent ev;
  std::string err;
  if (is_event) {
    if (type.empty()) return "watch event without type";
    if (object_raw.empty()) return "watch event without object";
    if (type == "ERROR") {
      return "watch ERROR event" +
             (inner.message.empty() ? std::string() : ": " + std::string(inner.message));
    }
    auto t = model::ParseWatchEventType(type);
    if (!t.ok()) return "unknown watch event type \"" + std::string(type) + "\"";
    err = MakeEvent(*t, inner, object_raw, &ev);
  } else if (has_items && self.kind.size() >= 4 &&
             self.kind.substr(self.kind.size() - 4) == "List") {
    // The fields read above are checked as they are read, the others only skipped; a List that
    // yields nothing is checked whole, so a malformed one is rejected rather than taken as empty.
    if (items.empty() && item_rejections.empty()) {
      if (Result<model::Json> whole = model::ParseJson(doc); !whole.ok()) {
        return "malformed JSON: " + whole.status().message();
      }
    }
    for (auto& item : items) out->events.push_back(std::move(item));
    for (auto& r : item_rejections) out->rejections.push_back(std::move(r));
    return "";
  } else {
    err = MakeEvent(model::WatchEventType::kAdded, self, Trim(doc), &ev);
  }
  if (!err.empty()) return err;
  out->events.push_back(std::move(ev));
  return "";
}

WatchDecoder::WatchDecoder() : impl_(std::make_unique<Impl>()) {}
WatchDecoder::~WatchDecoder() = default;

void WatchDecoder::Decode(std::string_view doc, DecodedDocument* out) {
  const size_t events_before = out->events.size();
  const size_t rejections_before = out->rejections.size();
  std::string reason = impl_->DecodeDocument(doc, out);
  if (!reason.empty()) {
    out->events.resize(events_before);
    out->rejections.resize(rejections_before);
    out->rejections.push_back({std::move(reason), std::string(Trim(doc)), -1});
  }
}

DecodedDocument WatchDecoder::DecodeCopy(std::string_view doc) {
  impl_->scratch.assign(doc);
  impl_->scratch.append(kDecoderPadding, '\0');
  DecodedDocument out;
  Decode(std::string_view(impl_->scratch.data(), doc.size()), &out);
  return out;
}

}  // namespace cronledger::ingest
