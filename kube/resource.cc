#include "kube/resource.h"

namespace cronledger::kube {

std::string ResourceType::ApiVersion() const {
  return group.empty() ? version : group + "/" + version;
}

std::string ResourceType::GroupResource() const {
  return group.empty() ? resource : resource + "." + group;
}

std::string ResourceType::FullyQualified() const {
  return group.empty() ? resource + "." + version : resource + "." + version + "." + group;
}

bool operator==(const ResourceType& a, const ResourceType& b) {
  return a.group == b.group && a.version == b.version && a.resource == b.resource;
}

const ResourceType& BatchJobs() {
  static const ResourceType kType{"batch", "v1", "jobs", "Job", true, true};
  return kType;
}

const ResourceType& BatchCronJobs() {
  static const ResourceType kType{"batch", "v1", "cronjobs", "CronJob", true, true};
  return kType;
}

const ResourceType& CronledgerCronJobs() {
  static const ResourceType kType{"cronledger.io", "v1", "cronjobs", "CronJob", true, true};
  return kType;
}

const ResourceType& Events() {
  static const ResourceType kType{"events.k8s.io", "v1", "events", "Event", true, false};
  return kType;
}

const ResourceType& Leases() {
  static const ResourceType kType{"coordination.k8s.io", "v1", "leases", "Lease", true, false};
  return kType;
}

const std::vector<ResourceType>& KnownResources() {
  static const std::vector<ResourceType> kAll = {BatchJobs(), BatchCronJobs(), CronledgerCronJobs(),
                                                 Events(), Leases()};
  return kAll;
}

Result<ResourceType> LookupResource(std::string_view fully_qualified) {
  for (const ResourceType& t : KnownResources()) {
    if (t.FullyQualified() == fully_qualified) return t;
  }
  return Status::InvalidArgument("unknown resource \"" + std::string(fully_qualified) + "\"");
}

std::string CollectionPath(const ResourceType& type, std::string_view ns) {
  std::string path =
      type.group.empty() ? "/api/" + type.version : "/apis/" + type.group + "/" + type.version;
  if (type.namespaced && !ns.empty()) {
    path += "/namespaces/";
    path += ns;
  }
  path += "/";
  path += type.resource;
  return path;
}

std::string ObjectPath(const ResourceType& type, std::string_view ns, std::string_view name,
                       std::string_view subresource) {
  std::string path = CollectionPath(type, ns);
  path += "/";
  path += name;
  if (!subresource.empty()) {
    path += "/";
    path += subresource;
  }
  return path;
}

}  // namespace cronledger::kube
