#pragma once

// The API resources cronledger talks to, identified the way the REST API addresses them: group,
// version and (plural) resource. Paths follow the API server's layout: the core group lives under
// /api/v1, every other group under /apis/<group>/<version>.

#include <string>
#include <string_view>
#include <vector>

#include "model/result.h"

namespace cronledger::kube {

struct ResourceType {
  std::string group;     // "" for the core group
  std::string version;   // "v1"
  std::string resource;  // plural, lower case: "jobs"
  std::string kind;      // "Job"
  bool namespaced = true;
  // Whether the resource has a status subresource: a main-resource PUT then ignores status and a
  // PUT to .../status changes only status (the API server's strategy for Jobs and CronJobs).
  bool has_status_subresource = false;

  // "batch/v1", or "v1" for the core group.
  std::string ApiVersion() const;
  // "jobs.batch", or "pods" for the core group, as API error messages name it.
  std::string GroupResource() const;
  // "cronjobs.v1.batch": kubectl's fully qualified form (the `--resource` flag).
  std::string FullyQualified() const;
};

bool operator==(const ResourceType& a, const ResourceType& b);

// The resources cronledger uses.
const ResourceType& BatchJobs();           // batch/v1 jobs
const ResourceType& BatchCronJobs();       // batch/v1 cronjobs
const ResourceType& CronledgerCronJobs();  // cronledger.io/v1 cronjobs (the project's CRD)
const ResourceType& Events();              // events.k8s.io/v1 events
const ResourceType& Leases();              // coordination.k8s.io/v1 leases
const std::vector<ResourceType>& KnownResources();

// Looks a resource up by kubectl's fully qualified name ("cronjobs.v1.batch"); InvalidArgument for
// names outside KnownResources().
Result<ResourceType> LookupResource(std::string_view fully_qualified);

// "/apis/batch/v1/namespaces/<ns>/jobs", or "/apis/batch/v1/jobs" when `ns` is empty (all
// namespaces) or the resource is cluster-scoped.
std::string CollectionPath(const ResourceType& type, std::string_view ns);
// CollectionPath + "/<name>" [+ "/<subresource>"].
std::string ObjectPath(const ResourceType& type, std::string_view ns, std::string_view name,
                       std::string_view subresource = "");

}  // namespace cronledger::kube
