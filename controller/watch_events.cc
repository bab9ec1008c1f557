#include "controller/watch_events.h"

#include <string>

#include "model/objects.h"

namespace cronledger::controller {

Result<model::WatchEvent> MakeWatchEvent(model::WatchEventType type, const model::Json& object) {
  if (!object.is_object() || !object.contains("kind") || !object["kind"].is_string()) {
    return Status::InvalidArgument("watch object: kind required");
  }
  CL_ASSIGN_OR_RETURN(model::ObjectKind kind,
                      model::ParseObjectKind(object["kind"].get<std::string>()));
  CL_ASSIGN_OR_RETURN(model::ObjectMeta meta,
                      model::DecodeObjectMeta(object.value("metadata", model::Json::object())));
  if (meta.name.empty()) return Status::InvalidArgument("watch object: metadata.name required");
  model::WatchEvent ev;
  ev.type = type;
  ev.kind = kind;
  if (object.contains("apiVersion") && object["apiVersion"].is_string()) {
    ev.api_version = object["apiVersion"].get<std::string>();
  }
  ev.namespace_ = meta.namespace_;
  ev.name = meta.name;
  ev.uid = meta.uid;
  ev.resource_version = meta.resource_version;
  // Jobs are indexed by their controlling CronJob (metav1.GetControllerOf + kind check).
  if (const model::OwnerReference* ref = meta.ControllerRef(); ref && ref->kind == "CronJob") {
    ev.owner_name = ref->name;
    ev.owner_uid = ref->uid;
  }
  ev.raw = model::DumpJson(object);
  return ev;
}

}  // namespace cronledger::controller
