// The fixture API server writes objects as kube-apiserver does: compact JSON in Go's field order
// (struct fields in declaration order, map keys sorted).

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "kube/resource.h"
#include "kube/testing/fake_api_server.h"
#include "kube/testing/raw_http_client.h"
#include "kube/testing/wire_json.h"
#include "model/json.h"

namespace cronledger::kube::testing {
namespace {

Json Parse(const std::string& text) {
  auto parsed = model::ParseJson(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status().ToString() << " in " << text;
  return parsed.ok() ? std::move(parsed).value() : Json();
}

TEST(KubeWireOrderTest, JobInGoFieldOrder) {
  // Keys deliberately out of order; "aUnknown" is no ObjectMeta field, so it follows the known
  // ones even though it sorts first.
  const Json job = Parse(R"({
    "status": {"succeeded": 1, "ready": 0, "uncountedTerminatedPods": {},
               "completionTime": "2024-01-01T00:01:00Z", "startTime": "2024-01-01T00:00:00Z",
               "conditions": [{"message": "done", "reason": "CompletionsReached",
                               "status": "True", "type": "Complete",
                               "lastTransitionTime": "2024-01-01T00:01:00Z",
                               "lastProbeTime": "2024-01-01T00:01:00Z"}]},
    "spec": {"suspend": false, "completionMode": "NonIndexed", "backoffLimit": 6,
             "template": {"spec": {"restartPolicy": "Never",
                                   "containers": [{"name": "c", "image": "busybox:1.36"}]},
                          "metadata": {"labels": {"job-name": "j", "app": "demo"}}},
             "manualSelector": false, "selector": {"matchLabels": {"job-name": "j"}},
             "completions": 1, "parallelism": 1},
    "metadata": {"aUnknown": true, "annotations": {"b": "2", "a": "1"},
                 "ownerReferences": [{"blockOwnerDeletion": true, "controller": true,
                                      "uid": "u-1", "name": "cj", "kind": "CronJob",
                                      "apiVersion": "batch/v1"}],
                 "labels": {"zeta": "z", "app": "demo"},
                 "creationTimestamp": "2024-01-01T00:00:00Z", "generation": 1,
                 "resourceVersion": "1001", "uid": "u-2", "namespace": "ns", "name": "j"},
    "apiVersion": "batch/v1", "kind": "Job"})");
  EXPECT_EQ(
      WireJson(job),
      R"({"kind":"Job","apiVersion":"batch/v1",)"
      R"("metadata":{"name":"j","namespace":"ns","uid":"u-2","resourceVersion":"1001",)"
      R"("generation":1,"creationTimestamp":"2024-01-01T00:00:00Z",)"
      R"("labels":{"app":"demo","zeta":"z"},"annotations":{"a":"1","b":"2"},)"
      R"("ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":"cj","uid":"u-1",)"
      R"("controller":true,"blockOwnerDeletion":true}],"aUnknown":true},)"
      R"("spec":{"parallelism":1,"completions":1,"backoffLimit":6,)"
      R"("selector":{"matchLabels":{"job-name":"j"}},"manualSelector":false,)"
      R"("template":{"metadata":{"labels":{"app":"demo","job-name":"j"}},)"
      R"("spec":{"containers":[{"image":"busybox:1.36","name":"c"}],"restartPolicy":"Never"}},)"
      R"("completionMode":"NonIndexed","suspend":false},)"
      R"("status":{"conditions":[{"type":"Complete","status":"True",)"
      R"("lastProbeTime":"2024-01-01T00:01:00Z","lastTransitionTime":"2024-01-01T00:01:00Z",)"
      R"("reason":"CompletionsReached","message":"done"}],)"
      R"("startTime":"2024-01-01T00:00:00Z","completionTime":"2024-01-01T00:01:00Z",)"
      R"("succeeded":1,"uncountedTerminatedPods":{},"ready":0}})");
}

TEST(KubeWireOrderTest, WatchEventListStatusAndCustomResource) {
  const Json event = Parse(R"({"object": {
      "status": {"lastScheduleTime": "T1",
                 "active": [{"uid": "u", "name": "j", "namespace": "ns", "kind": "Job",
                             "apiVersion": "batch/v1"}]},
      "spec": {"jobTemplate": {"spec": {"template": {"spec": {}}},
                               "metadata": {"creationTimestamp": null}},
               "suspend": false, "schedule": "* * * * *", "concurrencyPolicy": "Forbid",
               "timeZone": "UTC"},
      "metadata": {"namespace": "ns", "name": "cj"},
      "kind": "CronJob", "apiVersion": "batch/v1"},
    "type": "MODIFIED"})");
  EXPECT_EQ(WireJson(event),
            R"({"type":"MODIFIED","object":{"kind":"CronJob","apiVersion":"batch/v1",)"
            R"("metadata":{"name":"cj","namespace":"ns"},)"
            R"("spec":{"schedule":"* * * * *","timeZone":"UTC","concurrencyPolicy":"Forbid",)"
            R"("suspend":false,"jobTemplate":{"metadata":{"creationTimestamp":null},)"
            R"("spec":{"template":{"spec":{}}}}},)"
            R"("status":{"active":[{"kind":"Job","namespace":"ns","name":"j","uid":"u",)"
            R"("apiVersion":"batch/v1"}],"lastScheduleTime":"T1"}}})");

  // Built-in list items carry no kind: they are Jobs because the list is a JobList.
  const Json list = Parse(R"({
    "items": [{"status": {"active": 1, "startTime": "T"}, "metadata": {"uid": "u", "name": "a"}}],
    "metadata": {"remainingItemCount": 2, "continue": "c", "resourceVersion": "7"},
    "apiVersion": "batch/v1", "kind": "JobList"})");
  EXPECT_EQ(
      WireJson(list),
      R"({"kind":"JobList","apiVersion":"batch/v1",)"
      R"("metadata":{"resourceVersion":"7","continue":"c","remainingItemCount":2},)"
      R"("items":[{"metadata":{"name":"a","uid":"u"},"status":{"startTime":"T","active":1}}]})");

  const Json status = Parse(R"({"code": 404, "details": {"kind": "jobs", "name": "x",
    "group": "batch"}, "reason": "NotFound", "message": "jobs.batch \"x\" not found",
    "status": "Failure", "metadata": {}, "apiVersion": "v1", "kind": "Status"})");
  EXPECT_EQ(WireJson(status),
            R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
            R"("message":"jobs.batch \"x\" not found","reason":"NotFound",)"
            R"("details":{"name":"x","group":"batch","kind":"jobs"},"code":404})");

  // A custom resource is an unstructured map on the server: sorted at every level.
  const Json custom = Parse(R"({"spec": {"suspend": true, "schedule": "s"},
    "metadata": {"uid": "u", "name": "n"}, "kind": "CronJob", "apiVersion": "cronledger.io/v1"})");
  EXPECT_EQ(WireJson(custom),
            R"({"apiVersion":"cronledger.io/v1","kind":"CronJob",)"
            R"("metadata":{"name":"n","uid":"u"},"spec":{"schedule":"s","suspend":true}})");
}

TEST(KubeWireOrderTest, ParsesBackToTheSameValue) {
  const std::string tricky =
      "quote \" backslash \\ slash / newline \n tab \t bell \x07 "
      "del \x7f e-acute \xc3\xa9 CJK \xe6\x97\xa5\xe6\x9c\xac "
      "emoji \xf0\x9f\x98\x80 line-separator \xe2\x80\xa8";
  Json job = Parse(R"({"kind": "Job", "apiVersion": "batch/v1",
    "metadata": {"name": "j", "labels": {"z": "1", "a": ""}, "annotations": {}},
    "spec": {"template": {"spec": {"containers": [{"name": "c", "args": []}]}}},
    "status": {"conditions": [], "active": 0}})");
  job["metadata"]["annotations"][tricky] = tricky;
  job["spec"]["template"]["spec"]["containers"][0]["args"] = Json::array({tricky, "", "\u00ff"});

  Json list = {{"kind", "JobList"}, {"apiVersion", "batch/v1"}, {"metadata", Json::object()}};
  list["items"] = Json::array({job, job});
  list["items"][1]["metadata"]["name"] = "k";

  const Json numbers = {{"kind", "Thing"},
                        {"apiVersion", "example.com/v1"},
                        {"spec",
                         {{"negative", -42},
                          {"big", 18446744073709551615ULL},
                          {"min", INT64_MIN},
                          {"float", 0.1},
                          {"exp", 1e300},
                          {"null", nullptr},
                          {"nested", Json::array({Json::array(), Json::object(), true, false})}}}};

  const Json event = {{"type", "ADDED"}, {"object", job}};
  for (const Json& j : {job, list, numbers, event}) {
    const std::string wire = WireJson(j);
    EXPECT_EQ(Parse(wire), j) << wire;
    EXPECT_EQ(wire.find(": "), std::string::npos) << wire;
  }
  // Same bytes as nlohmann's compact dump, escaping included, where the order agrees (a custom
  // resource is sorted throughout).
  Json custom = numbers;
  custom["spec"][tricky] = tricky;
  EXPECT_EQ(WireJson(custom), custom.dump());
  EXPECT_EQ(WireJson(Json(tricky)), Json(tricky).dump());
  EXPECT_EQ(WireJson(Json()), "null");
}

// The body after a raw HTTP response's headers.
std::string BodyOf(const std::string& response) {
  const size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? std::string() : response.substr(end + 4);
}

TEST(KubeWireOrderTest, FixtureServesObjectsInWireOrder) {
  auto started = FakeApiServer::Start({});
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::unique_ptr<FakeApiServer> server = std::move(started).value();
  const Json job = Parse(R"({"spec": {"template": {"spec": {"restartPolicy": "Never",
      "containers": [{"name": "c", "image": "busybox:1.36"}]}}},
    "metadata": {"labels": {"app": "demo"}, "namespace": "ns", "name": "j"},
    "kind": "Job", "apiVersion": "batch/v1"})");
  ASSERT_TRUE(server->Create(BatchJobs(), job).ok());
  const Duration deadline = std::chrono::seconds(10);

  auto get = GetWithin(server->port(), "/apis/batch/v1/namespaces/ns/jobs/j", deadline);
  ASSERT_TRUE(get.has_value());
  EXPECT_EQ(StatusOf(*get), 200);
  const std::string body = BodyOf(*get);
  EXPECT_EQ(body.rfind(R"({"kind":"Job","apiVersion":"batch/v1","metadata":{"name":)", 0), 0u)
      << body;
  EXPECT_NE(body.find(R"("name":"j","namespace":"ns","uid":)"), std::string::npos) << body;
  EXPECT_EQ(Parse(body), server->Get(BatchJobs(), "ns", "j").value_or(Json()));

  auto list = GetWithin(server->port(), "/apis/batch/v1/namespaces/ns/jobs", deadline);
  ASSERT_TRUE(list.has_value());
  EXPECT_EQ(BodyOf(*list).rfind(R"({"kind":"JobList","apiVersion":"batch/v1","metadata":{)"
                                R"("resourceVersion":)",
                                0),
            0u)
      << *list;
  EXPECT_NE(BodyOf(*list).find(R"("items":[{"metadata":{"name":"j",)"), std::string::npos) << *list;

  auto missing = GetWithin(server->port(), "/apis/batch/v1/namespaces/ns/jobs/nope", deadline);
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(StatusOf(*missing), 404);
  EXPECT_EQ(BodyOf(*missing).rfind(R"({"kind":"Status","apiVersion":"v1","metadata":{},)"
                                   R"("status":"Failure","message":)",
                                   0),
            0u)
      << *missing;

  // The watch ends by itself after timeoutSeconds; each event is one chunk.
  auto watch = GetWithin(server->port(),
                         "/apis/batch/v1/namespaces/ns/jobs?watch=1&timeoutSeconds=1", deadline);
  ASSERT_TRUE(watch.has_value());
  EXPECT_NE(watch->find(R"({"type":"ADDED","object":{"kind":"Job","apiVersion":"batch/v1",)"
                        R"("metadata":{"name":"j",)"),
            std::string::npos)
      << *watch;
}

}  // namespace
}  // namespace cronledger::kube::testing
