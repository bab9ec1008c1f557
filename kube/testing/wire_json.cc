#include "kube/testing/wire_json.h"

#include <span>
#include <string_view>

namespace cronledger::kube::testing {
namespace {

using model::Json;

// The Go type a JSON object is the encoding of.
enum class Shape {
  kSorted,    // a Go map, a custom resource's unstructured content, or a type not modelled here
  kResource,  // a whole API object: its kind (or its list's) picks one of the shapes below
  kWatchEvent,
  kObject,  // a built-in kind whose spec and status are not modelled
  kList,
  kStatus,
  kCronJob,
  kJob,
  kLease,
  kEvent,  // events.k8s.io/v1
  kObjectMeta,
  kListMeta,
  kOwnerReference,
  kManagedFieldsEntry,
  kStatusDetails,
  kStatusCause,
  kObjectReference,
  kLabelSelector,
  kLabelSelectorRequirement,
  kCronJobSpec,
  kCronJobStatus,
  kJobTemplateSpec,
  kPodTemplateSpec,
  kJobSpec,
  kJobStatus,
  kJobCondition,
  kUncountedTerminatedPods,
  kLeaseSpec,
  kEventSeries,
};

// A struct field: its JSON name and the shape of its value (of each element, for a slice).
struct Field {
  std::string_view name;
  Shape shape = Shape::kSorted;
};

// The JSON fields of each struct in Go declaration order, as in k8s.io/api and
// k8s.io/apimachinery's meta/v1 (TypeMeta and ObjectMeta are embedded first).
std::span<const Field> Fields(Shape shape) {
  using enum Shape;
  switch (shape) {
    case kSorted:
    case kResource:
      return {};
    case kWatchEvent: {
      static constexpr Field f[] = {{"type"}, {"object", kResource}};
      return f;
    }
    case kObject: {
      static constexpr Field f[] = {
          {"kind"}, {"apiVersion"}, {"metadata", kObjectMeta}, {"spec"}, {"status"}};
      return f;
    }
    case kList: {
      static constexpr Field f[] = {
          {"kind"}, {"apiVersion"}, {"metadata", kListMeta}, {"items", kResource}};
      return f;
    }
    case kStatus: {
      static constexpr Field f[] = {
          {"kind"},    {"apiVersion"}, {"metadata", kListMeta},     {"status"},
          {"message"}, {"reason"},     {"details", kStatusDetails}, {"code"}};
      return f;
    }
    case kCronJob: {
      static constexpr Field f[] = {{"kind"},
                                    {"apiVersion"},
                                    {"metadata", kObjectMeta},
                                    {"spec", kCronJobSpec},
                                    {"status", kCronJobStatus}};
      return f;
    }
    case kJob: {
      static constexpr Field f[] = {{"kind"},
                                    {"apiVersion"},
                                    {"metadata", kObjectMeta},
                                    {"spec", kJobSpec},
                                    {"status", kJobStatus}};
      return f;
    }
    case kLease: {
      static constexpr Field f[] = {
          {"kind"}, {"apiVersion"}, {"metadata", kObjectMeta}, {"spec", kLeaseSpec}};
      return f;
    }
    case kEvent: {
      static constexpr Field f[] = {{"kind"},
                                    {"apiVersion"},
                                    {"metadata", kObjectMeta},
                                    {"eventTime"},
                                    {"series", kEventSeries},
                                    {"reportingController"},
                                    {"reportingInstance"},
                                    {"action"},
                                    {"reason"},
                                    {"regarding", kObjectReference},
                                    {"related", kObjectReference},
                                    {"note"},
                                    {"type"},
                                    {"deprecatedSource"},
                                    {"deprecatedFirstTimestamp"},
                                    {"deprecatedLastTimestamp"},
                                    {"deprecatedCount"}};
      return f;
    }
    case kObjectMeta: {
      static constexpr Field f[] = {{"name"},
                                    {"generateName"},
                                    {"namespace"},
                                    {"selfLink"},
                                    {"uid"},
                                    {"resourceVersion"},
                                    {"generation"},
                                    {"creationTimestamp"},
                                    {"deletionTimestamp"},
                                    {"deletionGracePeriodSeconds"},
                                    {"labels"},
                                    {"annotations"},
                                    {"ownerReferences", kOwnerReference},
                                    {"finalizers"},
                                    {"managedFields", kManagedFieldsEntry}};
      return f;
    }
    case kListMeta: {
      static constexpr Field f[] = {
          {"selfLink"}, {"resourceVersion"}, {"continue"}, {"remainingItemCount"}};
      return f;
    }
    case kOwnerReference: {
      static constexpr Field f[] = {{"apiVersion"}, {"kind"},       {"name"},
                                    {"uid"},        {"controller"}, {"blockOwnerDeletion"}};
      return f;
    }
    case kManagedFieldsEntry: {
      static constexpr Field f[] = {{"manager"},    {"operation"}, {"apiVersion"}, {"time"},
                                    {"fieldsType"}, {"fieldsV1"},  {"subresource"}};
      return f;
    }
    case kStatusDetails: {
      static constexpr Field f[] = {
          {"name"}, {"group"}, {"kind"}, {"uid"}, {"causes", kStatusCause}, {"retryAfterSeconds"}};
      return f;
    }
    case kStatusCause: {
      static constexpr Field f[] = {{"reason"}, {"message"}, {"field"}};
      return f;
    }
    case kObjectReference: {
      static constexpr Field f[] = {{"kind"},       {"namespace"},       {"name"},     {"uid"},
                                    {"apiVersion"}, {"resourceVersion"}, {"fieldPath"}};
      return f;
    }
    case kLabelSelector: {
      static constexpr Field f[] = {{"matchLabels"},
                                    {"matchExpressions", kLabelSelectorRequirement}};
      return f;
    }
    case kLabelSelectorRequirement: {
      static constexpr Field f[] = {{"key"}, {"operator"}, {"values"}};
      return f;
    }
    case kCronJobSpec: {
      static constexpr Field f[] = {{"schedule"},
                                    {"timeZone"},
                                    {"startingDeadlineSeconds"},
                                    {"concurrencyPolicy"},
                                    {"suspend"},
                                    {"jobTemplate", kJobTemplateSpec},
                                    {"successfulJobsHistoryLimit"},
                                    {"failedJobsHistoryLimit"}};
      return f;
    }
    case kCronJobStatus: {
      static constexpr Field f[] = {
          {"active", kObjectReference}, {"lastScheduleTime"}, {"lastSuccessfulTime"}};
      return f;
    }
    case kJobTemplateSpec: {
      static constexpr Field f[] = {{"metadata", kObjectMeta}, {"spec", kJobSpec}};
      return f;
    }
    case kPodTemplateSpec: {
      // The PodSpec under "spec" is not modelled: its fields come out sorted.
      static constexpr Field f[] = {{"metadata", kObjectMeta}, {"spec"}};
      return f;
    }
    case kJobSpec: {
      static constexpr Field f[] = {{"parallelism"},
                                    {"completions"},
                                    {"activeDeadlineSeconds"},
                                    {"podFailurePolicy"},
                                    {"successPolicy"},
                                    {"backoffLimit"},
                                    {"backoffLimitPerIndex"},
                                    {"maxFailedIndexes"},
                                    {"selector", kLabelSelector},
                                    {"manualSelector"},
                                    {"template", kPodTemplateSpec},
                                    {"ttlSecondsAfterFinished"},
                                    {"completionMode"},
                                    {"suspend"},
                                    {"podReplacementPolicy"},
                                    {"managedBy"}};
      return f;
    }
    case kJobStatus: {
      static constexpr Field f[] = {{"conditions", kJobCondition},
                                    {"startTime"},
                                    {"completionTime"},
                                    {"active"},
                                    {"succeeded"},
                                    {"failed"},
                                    {"terminating"},
                                    {"completedIndexes"},
                                    {"failedIndexes"},
                                    {"uncountedTerminatedPods", kUncountedTerminatedPods},
                                    {"ready"}};
      return f;
    }
    case kJobCondition: {
      static constexpr Field f[] = {
          {"type"}, {"status"}, {"lastProbeTime"}, {"lastTransitionTime"}, {"reason"}, {"message"}};
      return f;
    }
    case kUncountedTerminatedPods: {
      static constexpr Field f[] = {{"succeeded"}, {"failed"}};
      return f;
    }
    case kLeaseSpec: {
      static constexpr Field f[] = {{"holderIdentity"}, {"leaseDurationSeconds"}, {"acquireTime"},
                                    {"renewTime"},      {"leaseTransitions"},     {"strategy"},
                                    {"preferredHolder"}};
      return f;
    }
    case kEventSeries: {
      static constexpr Field f[] = {{"count"}, {"lastObservedTime"}};
      return f;
    }
  }
  return {};
}

// An object's apiVersion and kind; list items of built-in kinds carry neither and take their
// list's.
struct TypeMeta {
  std::string api_version;
  std::string kind;
};

// The shape of a whole API object.
Shape ResourceShape(const TypeMeta& type) {
  using enum Shape;
  // Built-in groups are the core group ("v1"), dotless ones ("batch") and *.k8s.io; any other
  // group is a custom resource's, which the server holds and writes as an unstructured map.
  const size_t slash = type.api_version.find('/');
  const std::string_view group = slash == std::string::npos
                                     ? std::string_view()
                                     : std::string_view(type.api_version).substr(0, slash);
  if (group.find('.') != std::string_view::npos && !group.ends_with(".k8s.io")) return kSorted;
  const std::string_view kind = type.kind;
  if (kind == "Status") return kStatus;
  if (kind.ends_with("List")) return kList;
  if (kind == "CronJob" && group == "batch") return kCronJob;
  if (kind == "Job" && group == "batch") return kJob;
  if (kind == "Lease" && group == "coordination.k8s.io") return kLease;
  if (kind == "Event" && group == "events.k8s.io") return kEvent;
  return kObject;
}

void Write(const Json& j, Shape shape, const TypeMeta& outer, std::string* out) {
  if (j.is_array()) {
    out->push_back('[');
    for (size_t i = 0; i < j.size(); ++i) {
      if (i > 0) out->push_back(',');
      Write(j[i], shape, outer, out);
    }
    out->push_back(']');
    return;
  }
  if (!j.is_object()) {
    *out += j.dump();  // scalars and strings: nlohmann's own formatting and escaping
    return;
  }
  TypeMeta items;  // what a list's items are, when `j` is a list
  if (shape == Shape::kResource) {
    TypeMeta type{model::StringOr(j, "apiVersion"), model::StringOr(j, "kind")};
    if (type.api_version.empty()) type.api_version = outer.api_version;
    if (type.kind.empty()) type.kind = outer.kind;
    shape = ResourceShape(type);
    if (shape == Shape::kList) {
      items = {type.api_version, type.kind.substr(0, type.kind.size() - 4)};
    }
  }
  const std::span<const Field> fields = Fields(shape);
  bool first = true;
  auto member = [&](const std::string& key, const Json& value, Shape value_shape) {
    if (!first) out->push_back(',');
    first = false;
    *out += Json(key).dump();
    out->push_back(':');
    Write(value, value_shape, items, out);
  };
  out->push_back('{');
  // The struct's fields in declaration order...
  for (const Field& f : fields) {
    const auto it = j.find(std::string(f.name));
    if (it != j.end()) member(it.key(), *it, f.shape);
  }
  // ...then the rest in key order (Json's objects iterate sorted by key, as Go sorts map keys).
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool listed = false;
    for (const Field& f : fields) listed = listed || f.name == it.key();
    if (!listed) member(it.key(), *it, Shape::kSorted);
  }
  out->push_back('}');
}

}  // namespace

std::string WireJson(const model::Json& j) {
  // A watch event is the only top-level object with "object" and "type" but no kind.
  const bool event =
      j.is_object() && j.contains("type") && j.contains("object") && !j.contains("kind");
  std::string out;
  Write(j, event ? Shape::kWatchEvent : Shape::kResource, TypeMeta{}, &out);
  return out;
}

}  // namespace cronledger::kube::testing
