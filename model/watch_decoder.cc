#include "model/watch_decoder.h"

#include <simdjson.h>

#include <utility>

#include "model/job_fields.h"
#include "model/json.h"
#include "model/json_limits.h"
#include "model/objects.h"

namespace cronledger::model {
namespace od = simdjson::ondemand;

static_assert(kDecoderPadding >= simdjson::SIMDJSON_PADDING, "decoder padding below simdjson's");

namespace {

// The fields of a Kubernetes object the ledger needs. Views point into the parser's buffers and
// live until the next iterate().
struct ObjectInfo {
  std::string_view kind, api_version, name, ns, uid, resource_version, message;
  std::string_view continue_token;  // a List's metadata.continue
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
    } else if (key == "continue") {
      err = ReadString(field.value(), "metadata.continue", &info->continue_token);
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
// refused here too and the view keeps the version before it, as an informer's cache would. The
// check is the passes' own decoder (job_fields.h), which fails exactly when DecodeCronJob does.
// The decoded object goes with the event when `keep` (WatchEvent::decoded).
std::string ValidateCronJob(std::string_view raw, bool keep, WatchEvent* ev) {
  auto cj = DecodeCronJobFields(raw);
  if (!cj.ok()) return "invalid CronJob: " + cj.status().message();
  if (keep) ev->decoded.cron_job = std::make_shared<const CronJob>(std::move(*cj));
  return "";
}

// The same for a Job: every pass of its CronJob reads it, so one the model cannot hold (a status
// field of the wrong type, a malformed time) is refused at the door like a CronJob.
std::string ValidateJob(std::string_view raw, bool keep, WatchEvent* ev) {
  auto job = DecodeJobFields(raw);
  if (!job.ok()) return "invalid Job: " + job.status().message();
  if (keep) ev->decoded.job = std::make_shared<const Job>(std::move(*job));
  return "";
}

// An item of a typed list (`CronJobList`) as the API server sends it has no kind or apiVersion:
// they are the list's. The item's bytes get them in front, so that every stored object names its
// type as a watch event's object does; the rest of the item is kept as it came.
std::string WithTypeMeta(std::string_view raw, std::string_view kind,
                         std::string_view api_version) {
  std::string fields;
  if (!kind.empty()) fields += "\"kind\":" + Json(std::string(kind)).dump();
  if (!api_version.empty()) {
    if (!fields.empty()) fields += ',';
    fields += "\"apiVersion\":" + Json(std::string(api_version)).dump();
  }
  std::string_view rest = raw.substr(1);  // after the item's '{'
  size_t first = rest.find_first_not_of(" \t\r\n");
  const bool empty = first != std::string_view::npos && rest[first] == '}';
  return "{" + fields + (empty ? "" : ",") + std::string(empty ? rest.substr(first) : rest);
}

// Validates an object and makes the event, or returns the rejection reason.
std::string MakeEvent(WatchEventType type, const ObjectInfo& info, std::string_view raw,
                      DecodedObjects decoded, WatchEvent* ev) {
  if (Status s = CheckObjectLimits(raw); !s.ok()) return s.message();
  if (info.kind.empty()) return "missing kind";
  auto kind = ParseObjectKind(info.kind);
  if (!kind.ok()) return "unknown kind \"" + std::string(info.kind) + "\"";
  if (info.api_version.empty()) return "missing apiVersion";
  if (type == WatchEventType::kBookmark) {
    if (info.resource_version.empty()) return "BOOKMARK without metadata.resourceVersion";
  } else {
    if (info.name.empty()) return "missing metadata.name";
    if (info.ns.empty()) return "missing metadata.namespace";
    if (info.uid.empty()) return "missing metadata.uid";
    if (!ValidName(info.name) || !ValidName(info.ns)) return "invalid metadata.name or namespace";
  }
  if (type != WatchEventType::kBookmark && type != WatchEventType::kDeleted) {
    const bool keep = decoded == DecodedObjects::kKeep;
    std::string invalid =
        *kind == ObjectKind::kCronJob ? ValidateCronJob(raw, keep, ev) : ValidateJob(raw, keep, ev);
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
  explicit Impl(DecodedObjects d) : decoded(d) {}
  const DecodedObjects decoded;
  od::parser parser;
  std::string scratch;  // DecodeCopy's padded buffer
  // Set by DecodeDocument for a watch event whose type was read and whose object was refused.
  std::optional<WatchEventType> refused_type;
  ObjectInfo refused;  // what was read of that object

  // Returns "" on success (out filled) or the reason the whole document is rejected.
  std::string DecodeDocument(std::string_view doc, DecodedDocument* out);
};

std::string WatchDecoder::Impl::DecodeDocument(std::string_view doc, DecodedDocument* out) {
  refused_type.reset();
  refused = {};
  od::document d;
  if (auto e = parser.iterate(doc.data(), doc.size(), doc.size() + kDecoderPadding).get(d)) {
    return Err("malformed JSON", e);
  }
  od::object top;
  if (auto e = d.get_object().get(top)) return Err("malformed JSON (expected an object)", e);
  ObjectInfo self;   // the document as a bare object
  ObjectInfo inner;  // a watch event's object
  std::string_view type, object_raw;
  std::string object_err;  // why the watch event's object was refused
  bool is_event = false;
  bool has_items = false;
  // A List's items, read here and made events once the List's own kind is known (it may follow).
  struct Item {
    std::string_view raw;
    ObjectInfo info;
    std::string err;
  };
  std::vector<Item> items;
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
      object_err = ReadObject(obj, &inner);
      // The rest of the object is skipped unread after a refusal; simdjson still checks the
      // document's structure to its end.
    } else if (key == "items") {
      has_items = true;
      od::array arr;
      if (field.value().get_array().get(arr)) return "items: not an array";
      int index = 0;
      for (auto el : arr) {
        od::object obj;
        Item item;
        if (el.get_object().get(obj)) return "items[" + std::to_string(index) + "]: not an object";
        if (auto e = obj.raw_json().get(item.raw)) return Err("malformed JSON", e);
        if (auto e = obj.reset().error()) return Err("malformed JSON", e);
        item.err = ReadObject(obj, &item.info);
        items.push_back(std::move(item));
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

  WatchEvent ev;
  std::string err;
  if (is_event) {
    if (type.empty()) return "watch event without type";
    if (object_raw.empty()) return "watch event without object";
    if (type == "ERROR") {
      out->error_status.assign(object_raw);
      return "watch ERROR event" +
             (inner.message.empty() ? std::string() : ": " + std::string(inner.message));
    }
    auto t = ParseWatchEventType(type);
    if (!t.ok()) return "unknown watch event type \"" + std::string(type) + "\"";
    err = object_err.empty() ? MakeEvent(*t, inner, object_raw, decoded, &ev) : object_err;
    if (!err.empty()) {
      refused_type = *t;
      refused = inner;
    }
  } else if (has_items && self.kind.size() >= 4 &&
             self.kind.substr(self.kind.size() - 4) == "List") {
    // The fields read above are checked as they are read, the others only skipped; a List that
    // yields nothing is checked whole, so a malformed one is rejected rather than taken as empty.
    if (items.empty()) {
      if (Result<Json> whole = ParseJson(doc); !whole.ok()) {
        return "malformed JSON: " + whole.status().message();
      }
    }
    out->list_resource_version.assign(self.resource_version);
    out->list_continue.assign(self.continue_token);
    // A typed list (`CronJobList`) names its items' type; a plain `List` does not.
    const std::string_view item_kind = self.kind.substr(0, self.kind.size() - 4);
    int index = 0;
    for (Item& item : items) {
      std::string typed;
      std::string_view raw = item.raw;
      if (item.err.empty() && !item_kind.empty() &&
          (item.info.kind.empty() || item.info.api_version.empty())) {
        typed = WithTypeMeta(raw, item.info.kind.empty() ? item_kind : "",
                             item.info.api_version.empty() ? self.api_version : "");
        raw = typed;
        if (item.info.kind.empty()) item.info.kind = item_kind;
        if (item.info.api_version.empty()) item.info.api_version = self.api_version;
      }
      WatchEvent item_ev;
      std::string item_err = item.err;
      if (item_err.empty())
        item_err = MakeEvent(WatchEventType::kAdded, item.info, raw, decoded, &item_ev);
      if (item_err.empty()) {
        out->events.push_back(std::move(item_ev));
      } else {
        // A refused item is kept as it would have been stored: with the list's type in front
        // when its own fields were read, so that it names its type wherever it goes next.
        out->rejections.push_back({item_err,
                                   std::string(raw),
                                   index,
                                   {},
                                   {},
                                   std::string(item.info.ns),
                                   std::string(item.info.name)});
      }
      ++index;
    }
    return "";
  } else {
    err = MakeEvent(WatchEventType::kAdded, self, Trim(doc), decoded, &ev);
  }
  if (!err.empty()) return err;
  out->events.push_back(std::move(ev));
  return "";
}

WatchDecoder::WatchDecoder(DecodedObjects decoded) : impl_(std::make_unique<Impl>(decoded)) {}
WatchDecoder::~WatchDecoder() = default;

void WatchDecoder::Decode(std::string_view doc, DecodedDocument* out) {
  const size_t events_before = out->events.size();
  const size_t rejections_before = out->rejections.size();
  std::string reason = impl_->DecodeDocument(doc, out);
  if (!reason.empty()) {
    out->events.resize(events_before);
    out->rejections.resize(rejections_before);
    const ObjectInfo& read = impl_->refused;
    out->rejections.push_back({std::move(reason), std::string(Trim(doc)), -1, impl_->refused_type,
                               std::string(read.resource_version), std::string(read.ns),
                               std::string(read.name)});
  }
}

DecodedDocument WatchDecoder::DecodeCopy(std::string_view doc) {
  impl_->scratch.assign(doc);
  impl_->scratch.append(kDecoderPadding, '\0');
  DecodedDocument out;
  Decode(std::string_view(impl_->scratch.data(), doc.size()), &out);
  return out;
}

}  // namespace cronledger::model
