#include "model/objects.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace cronledger::model {
namespace {

// Shaped like `kubectl get cronjob hello -o json` on Kubernetes 1.30.
constexpr const char* kCronJob = R"({
  "apiVersion": "batch/v1", "kind": "CronJob",
  "metadata": {"creationTimestamp": "2024-05-19T09:58:12Z", "generation": 2, "name": "hello",
    "namespace": "default", "resourceVersion": "4711", "uid": "0b9c8f1e-2f0c-4d3e-9a53-1c2e7f7e9f10",
    "labels": {"app": "hello"},
    "managedFields": [{"apiVersion": "batch/v1", "fieldsType": "FieldsV1",
      "fieldsV1": {"f:spec": {"f:schedule": {}}}, "manager": "kubectl-client-side-apply",
      "operation": "Update", "time": "2024-05-19T09:58:12Z"}]},
  "spec": {"concurrencyPolicy": "Forbid", "failedJobsHistoryLimit": 1,
    "jobTemplate": {"metadata": {"creationTimestamp": null, "labels": {"team": "a"}},
      "spec": {"template": {"spec": {"containers": [{"name": "hello", "image": "busybox:1.28",
        "command": ["/bin/sh", "-c", "date"]}], "restartPolicy": "OnFailure"}}}},
    "schedule": "*/5 * * * *", "startingDeadlineSeconds": 200, "successfulJobsHistoryLimit": 3,
    "suspend": false, "timeZone": "Europe/Rome"},
  "status": {"active": [{"apiVersion": "batch/v1", "kind": "Job", "name": "hello-28604520",
    "namespace": "default", "resourceVersion": "4800", "uid": "6f1d"}],
    "lastScheduleTime": "2024-05-19T10:00:00Z", "lastSuccessfulTime": "2024-05-19T09:55:04Z"}
})";

constexpr const char* kJob = R"({
  "apiVersion": "batch/v1", "kind": "Job",
  "metadata": {"name": "hello-28604520", "namespace": "default", "uid": "6f1d",
    "resourceVersion": "4900", "creationTimestamp": "2024-05-19T10:00:00Z",
    "annotations": {"batch.kubernetes.io/cronjob-scheduled-timestamp": "2024-05-19T12:00:00+02:00"},
    "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob", "name": "hello",
      "uid": "0b9c8f1e-2f0c-4d3e-9a53-1c2e7f7e9f10", "controller": true, "blockOwnerDeletion": true}]},
  "spec": {"backoffLimit": 6, "completions": 1},
  "status": {"startTime": "2024-05-19T10:00:00Z", "completionTime": "2024-05-19T10:00:07Z",
    "succeeded": 1, "conditions": [{"type": "Complete", "status": "True",
      "lastTransitionTime": "2024-05-19T10:00:07Z"}]}
})";

TEST(CronJobCodec, DecodesTypedFields) {
  auto cj = DecodeCronJob(*ParseJson(kCronJob));
  ASSERT_TRUE(cj.ok()) << cj.status().ToString();
  EXPECT_EQ(cj->metadata.Key(), "default/hello");
  EXPECT_EQ(cj->spec.schedule, "*/5 * * * *");
  EXPECT_EQ(cj->spec.time_zone, "Europe/Rome");
  EXPECT_EQ(cj->spec.starting_deadline_seconds, 200);
  EXPECT_EQ(cj->spec.concurrency_policy, "Forbid");
  EXPECT_EQ(cj->spec.suspend, false);
  EXPECT_EQ(cj->spec.successful_jobs_history_limit, 3);
  EXPECT_EQ(cj->spec.job_template.labels.at("team"), "a");
  ASSERT_EQ(cj->status.active.size(), 1u);
  EXPECT_EQ(cj->status.active[0].uid, "6f1d");
  EXPECT_EQ(FormatRfc3339(*cj->status.last_schedule_time), "2024-05-19T10:00:00Z");
}

TEST(CronJobCodec, KeepsTheJobTemplatesSpecAsItsBytes) {
  auto cj = DecodeCronJob(*ParseJson(kCronJob));
  ASSERT_TRUE(cj.ok()) << cj.status().ToString();
  const Json want = (*ParseJson(kCronJob))["spec"]["jobTemplate"]["spec"];
  // DumpJson's bytes: keys in order, no spaces; the tree they give back is the one parsed.
  EXPECT_EQ(cj->spec.job_template.spec.bytes(), DumpJson(want));
  EXPECT_EQ(cj->spec.job_template.spec.Tree(), want);
  EXPECT_EQ(EncodeCronJob(*cj)["spec"]["jobTemplate"]["spec"], want);
  // Equal exactly when the trees are, however the value was written.
  EXPECT_EQ(JsonText(*ParseJson(R"({"b": [1, 2.5, "x"], "a": {}})")),
            JsonText(*ParseJson(R"({"a":{},"b":[1,2.5,"x"]})")));
  EXPECT_NE(JsonText(Json{{"a", 1}}), JsonText(Json{{"a", 1.0}}));
  EXPECT_EQ(JsonText().Tree(), Json::object());
  // A template without a spec holds {}, as the tree did.
  Json no_spec = *ParseJson(kCronJob);
  no_spec["spec"]["jobTemplate"].erase("spec");
  auto bare = DecodeCronJob(no_spec);
  ASSERT_TRUE(bare.ok()) << bare.status().ToString();
  EXPECT_EQ(bare->spec.job_template.spec.bytes(), "{}");
}

TEST(JsonReaders, StringAtReadsAStringTwoLevelsDown) {
  const Json answer = *ParseJson(R"({"metadata": {"uid": "u1", "generation": 2}, "spec": null})");
  EXPECT_EQ(StringAt(answer, "metadata", "uid"), "u1");
  EXPECT_EQ(StringAt(answer, "metadata", "generation"), "");  // not a string
  EXPECT_EQ(StringAt(answer, "metadata", "name"), "");        // absent
  EXPECT_EQ(StringAt(answer, "spec", "x"), "");               // null
  EXPECT_EQ(StringAt(Json::array(), "metadata", "uid"), "");  // not an object
  EXPECT_EQ(StringAt(*ParseJson(R"({"metadata": "u1"})"), "metadata", "uid"), "");
}

TEST(CronJobCodec, RoundTripKeepsUnknownFields) {
  const Json in = *ParseJson(kCronJob);
  auto cj = DecodeCronJob(in);
  ASSERT_TRUE(cj.ok());
  const Json out = EncodeCronJob(*cj);
  EXPECT_EQ(out["metadata"]["managedFields"], in["metadata"]["managedFields"]);
  EXPECT_EQ(out["metadata"]["generation"], 2);
  EXPECT_EQ(out["spec"]["jobTemplate"]["spec"], in["spec"]["jobTemplate"]["spec"]);
  // encode -> decode -> encode is a fixed point.
  auto again = DecodeCronJob(out);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(DumpJson(EncodeCronJob(*again)), DumpJson(out));
}

TEST(CronJobCodec, TypedChangesAreWritten) {
  auto cj = DecodeCronJob(*ParseJson(kCronJob));
  ASSERT_TRUE(cj.ok());
  cj->status.active.clear();
  cj->status.last_schedule_time = ParseRfc3339("2024-05-19T10:05:00Z").value();
  cj->spec.time_zone.reset();
  const Json out = EncodeCronJob(*cj);
  EXPECT_FALSE(out["status"].contains("active"));
  EXPECT_EQ(out["status"]["lastScheduleTime"], "2024-05-19T10:05:00Z");
  EXPECT_FALSE(out["spec"].contains("timeZone"));
}

TEST(JobCodec, RoundTripAndFinished) {
  const Json in = *ParseJson(kJob);
  auto job = DecodeJob(in);
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  ASSERT_NE(job->metadata.ControllerRef(), nullptr);
  EXPECT_EQ(job->metadata.ControllerRef()->name, "hello");
  EXPECT_TRUE(IsFinished(*job));
  EXPECT_TRUE(IsSucceeded(*job));
  const Json out = EncodeJob(*job);
  EXPECT_EQ(out, in);
  EXPECT_EQ(out["status"]["conditions"][0]["lastTransitionTime"], "2024-05-19T10:00:07Z");
}

TEST(JobCodec, FirstFinishedConditionDecides) {
  Job job;
  job.status.conditions = {{"Suspended", "True", Json::object()},
                           {"Failed", "True", Json::object()},
                           {"Complete", "True", Json::object()}};
  EXPECT_EQ(FinishedCondition(job), "Failed");
  job.status.conditions[1].status = "False";
  EXPECT_EQ(FinishedCondition(job), "Complete");
  job.status.conditions.clear();
  EXPECT_FALSE(IsFinished(job));
}

// DecodeJobMetadata is DecodeJob(j)->metadata with DecodeJob's errors: compared on the sample Job
// with every member (at any depth) replaced by each kind of value or removed, and on non-objects.
TEST(JobCodec, MetadataAloneDecodesAsTheWholeJob) {
  const Json job = *ParseJson(kJob);
  const Json values[] = {Json(),
                         Json(true),
                         Json(7),
                         Json(-1.5),
                         Json("s"),
                         Json::array(),
                         Json::array({1, "x"}),
                         Json::object(),
                         Json::object({{"name", 1}})};
  std::vector<Json> docs = {Json(), Json(3), Json::array(), Json::object(), job};
  // Every path to a member of the sample, depth first.
  std::vector<Json::json_pointer> paths;
  std::function<void(const Json&, const Json::json_pointer&)> walk =
      [&](const Json& j, const Json::json_pointer& at) {
        if (j.is_object()) {
          for (const auto& [k, v] : j.items()) {
            paths.push_back(at / k);
            walk(v, at / k);
          }
        } else if (j.is_array()) {
          for (size_t i = 0; i < j.size(); ++i) {
            paths.push_back(at / i);
            walk(j[i], at / i);
          }
        }
      };
  walk(job, Json::json_pointer());
  for (const auto& path : paths) {
    for (const Json& v : values) {
      Json d = job;
      d[path] = v;
      docs.push_back(std::move(d));
    }
    Json d = job;
    if (d[path.parent_pointer()].is_object()) {
      d[path.parent_pointer()].erase(path.back());
      docs.push_back(std::move(d));
    }
  }
  size_t failed = 0;
  for (const Json& d : docs) {
    SCOPED_TRACE(DumpJson(d));
    const auto whole = DecodeJob(d);
    const auto meta = DecodeJobMetadata(d);
    ASSERT_EQ(meta.ok(), whole.ok());
    if (!whole.ok()) {
      ++failed;
      EXPECT_EQ(meta.status().ToString(), whole.status().ToString());
    } else {
      EXPECT_EQ(DumpJson(EncodeObjectMeta(*meta)), DumpJson(EncodeObjectMeta(whole->metadata)));
      EXPECT_EQ(meta->uid, whole->metadata.uid);
      EXPECT_EQ(meta->resource_version, whole->metadata.resource_version);
    }
  }
  EXPECT_GT(paths.size(), 20u);
  EXPECT_GT(failed, 50u);  // the mutations reach the errors of every part
}

TEST(Codec, WrongTypesAreClearErrors) {
  struct Case {
    const char* json;
    const char* want;
  };
  const Case cases[] = {
      {R"([1,2])", "CronJob: expected a JSON object"},
      {R"({"spec": {"schedule": 5}})", "spec.schedule: expected string, got number"},
      {R"({"spec": {"suspend": "yes"}})", "spec.suspend: expected boolean, got string"},
      {R"({"spec": {"startingDeadlineSeconds": 1.5}})",
       "spec.startingDeadlineSeconds: expected integer"},
      {R"({"metadata": {"creationTimestamp": "yesterday"}})",
       "metadata.creationTimestamp: invalid RFC 3339 time"},
      {R"({"metadata": {"labels": {"a": 1}}})", "metadata.labels.a: expected string"},
      {R"({"status": {"active": {}}})", "status.active: expected array"},
      {R"({"metadata": "x"})", "metadata: expected object"},
      // Above int64 (nlohmann holds it unsigned): out of range, never wrapped to a negative.
      {R"({"spec": {"failedJobsHistoryLimit": 9223372036854775808}})",
       "spec.failedJobsHistoryLimit: integer out of range"},
      {R"({"spec": {"startingDeadlineSeconds": 18446744073709551615}})",
       "spec.startingDeadlineSeconds: integer out of range"},
  };
  for (const auto& c : cases) {
    auto cj = DecodeCronJob(*ParseJson(c.json));
    ASSERT_FALSE(cj.ok()) << c.json;
    EXPECT_NE(cj.status().message().find(c.want), std::string::npos)
        << c.json << " -> " << cj.status().message();
  }
}

TEST(Codec, IntegersAtTheEdgesOfInt64Decode) {
  auto cj = DecodeCronJob(*ParseJson(
      R"({"spec": {"startingDeadlineSeconds": 9223372036854775807, "failedJobsHistoryLimit": -9223372036854775808}})"));
  ASSERT_TRUE(cj.ok()) << cj.status().ToString();
  EXPECT_EQ(cj->spec.starting_deadline_seconds, INT64_MAX);
  EXPECT_EQ(cj->spec.failed_jobs_history_limit, INT64_MIN);
}

TEST(Codec, MalformedJsonIsAnErrorNotAnException) {
  auto j = ParseJson("{\"a\": ");
  ASSERT_FALSE(j.ok());
  EXPECT_NE(j.status().message().find("malformed JSON"), std::string::npos);
  // Invalid UTF-8 survives a dump instead of throwing.
  Json s = std::string("\xff\xfe");
  EXPECT_FALSE(DumpJson(s).empty());
}

}  // namespace
}  // namespace cronledger::model
