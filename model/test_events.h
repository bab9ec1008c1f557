#pragma once

// Realistic Kubernetes watch events for tests and benchmarks: CronJob and Job objects shaped as
// the API server serves them, with managedFields, labels, annotations and owner references
// (≈2.7 KB each). Deterministic in their arguments. Test and benchmark code only.

#include <cstdint>
#include <string>

namespace cronledger::model::testing {

inline std::string ManagedFields(const std::string& manager) {
  return R"([{"manager":")" + manager +
         R"(","operation":"Update","apiVersion":"batch/v1","time":"2024-05-19T10:00:00Z","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:batch.kubernetes.io/cronjob-scheduled-timestamp":{}},"f:labels":{".":{},"f:app":{},"f:team":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"x\"}":{}}},"f:spec":{"f:backoffLimit":{},"f:completionMode":{},"f:completions":{},"f:parallelism":{},"f:suspend":{},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"main\"}":{".":{},"f:command":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:resources":{".":{},"f:limits":{".":{},"f:cpu":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{}}},"f:dnsPolicy":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:terminationGracePeriodSeconds":{}}}}}},{"manager":"kube-controller-manager","operation":"Update","apiVersion":"batch/v1","time":"2024-05-19T10:00:07Z","fieldsType":"FieldsV1","fieldsV1":{"f:status":{"f:active":{},"f:ready":{},"f:startTime":{},"f:uncountedTerminatedPods":{}}},"subresource":"status"}])";
}

inline std::string PodTemplate(const std::string& app) {
  return R"({"metadata":{"labels":{"app":")" + app +
         R"("}},"spec":{"containers":[{"name":"main","image":"registry.example.com/tools/)" + app +
         R"(:1.4.2","command":["/bin/sh","-c","run-task --verbose"],"resources":{"limits":{"cpu":"500m","memory":"256Mi"},"requests":{"cpu":"100m","memory":"64Mi"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"IfNotPresent"}],"restartPolicy":"OnFailure","terminationGracePeriodSeconds":30,"dnsPolicy":"ClusterFirst","securityContext":{},"schedulerName":"default-scheduler"}})";
}

inline std::string CronJobObject(const std::string& ns, const std::string& name,
                                 const std::string& uid, uint64_t rv) {
  return R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":")" + name +
         R"(","namespace":")" + ns + R"(","uid":")" + uid + R"(","resourceVersion":")" +
         std::to_string(rv) +
         R"(","generation":3,"creationTimestamp":"2024-05-01T08:00:00Z","labels":{"app":")" + name +
         R"(","team":"platform"},"annotations":{"kubectl.kubernetes.io/last-applied-configuration":"{}"},"managedFields":)" +
         ManagedFields("kubectl-client-side-apply") +
         R"(},"spec":{"schedule":"*/5 * * * *","concurrencyPolicy":"Forbid","suspend":false,"successfulJobsHistoryLimit":3,"failedJobsHistoryLimit":1,"jobTemplate":{"metadata":{"creationTimestamp":null},"spec":{"backoffLimit":2,"template":)" +
         PodTemplate(name) +
         R"(}}},"status":{"lastScheduleTime":"2024-05-19T10:00:00Z","lastSuccessfulTime":"2024-05-19T09:55:10Z"}})";
}

inline std::string JobObject(const std::string& ns, const std::string& name, const std::string& uid,
                             uint64_t rv, const std::string& owner, const std::string& owner_uid) {
  return R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":")" + name +
         R"(","namespace":")" + ns + R"(","uid":")" + uid + R"(","resourceVersion":")" +
         std::to_string(rv) +
         R"(","generation":1,"creationTimestamp":"2024-05-19T10:00:00Z","labels":{"app":")" +
         owner +
         R"(","team":"platform"},"annotations":{"batch.kubernetes.io/cronjob-scheduled-timestamp":"2024-05-19T10:00:00Z"},"ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":")" +
         owner + R"(","uid":")" + owner_uid +
         R"(","controller":true,"blockOwnerDeletion":true}],"managedFields":)" +
         ManagedFields("kube-controller-manager") +
         R"(},"spec":{"parallelism":1,"completions":1,"backoffLimit":2,"completionMode":"NonIndexed","suspend":false,"template":)" +
         PodTemplate(owner) +
         R"(},"status":{"startTime":"2024-05-19T10:00:01Z","active":1,"ready":0,"uncountedTerminatedPods":{}}})";
}

inline std::string WatchLine(const std::string& type, const std::string& object) {
  return R"({"type":")" + type + R"(","object":)" + object + "}\n";
}

// Line i of a deterministic stream over `cronjobs` CronJobs: CronJob updates and Job
// creations/updates/deletions (lines 4k..4k+3 are about one CronJob), every line with a unique
// resourceVersion (= i + 1).
inline std::string StreamLine(uint64_t i, uint64_t cronjobs) {
  const uint64_t c = ((i / 4) * 7919) % cronjobs;
  const std::string ns = "team-" + std::to_string(c % 10);
  const std::string cj = "cron-" + std::to_string(c);
  const std::string cj_uid = "uid-cron-" + std::to_string(c);
  const uint64_t rv = i + 1;
  switch (i % 4) {
    case 0:
      return WatchLine(i < cronjobs * 4 ? "ADDED" : "MODIFIED", CronJobObject(ns, cj, cj_uid, rv));
    case 1:
    case 2: {
      const std::string job = cj + "-" + std::to_string(i / 4);
      return WatchLine(i % 4 == 1 ? "ADDED" : "MODIFIED",
                       JobObject(ns, job, "uid-job-" + std::to_string(i / 4), rv, cj, cj_uid));
    }
    default: {
      // Every other Job is deleted again, so the view keeps some.
      const std::string job = cj + "-" + std::to_string(i / 4);
      return WatchLine(i % 8 == 3 ? "DELETED" : "MODIFIED",
                       JobObject(ns, job, "uid-job-" + std::to_string(i / 4), rv, cj, cj_uid));
    }
  }
}

}  // namespace cronledger::model::testing
