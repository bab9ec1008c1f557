#include "model/job_fields.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "model/api_call.h"
#include "model/json.h"
#include "reconciler/decide.h"

namespace cronledger::replay {
namespace {

using model::DecodeCronJobFields;
using model::DecodeCronJobFieldsFast;
using model::DecodeJobFields;
using model::DecodeJobFieldsFast;
using model::DecodeOutcomeFields;
using model::DecodeOutcomeFieldsFast;

// What the nlohmann path decides: DecodeJob(ParseJson(bytes)) without the JSON members.
Result<model::Job> Reference(std::string_view bytes) {
  CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(bytes));
  CL_ASSIGN_OR_RETURN(model::Job job, model::DecodeJob(j));
  StripJobJson(&job);
  return job;
}

// Picks a path of up to `max_depth` object levels (stopping early one time in `stop_one_in`, and
// into a random element of an array on the way) and there drops a random member (one time in
// three) or sets it to one of `values`.
void MutateOneMember(model::Json* doc, const std::vector<model::Json>& values, int max_depth,
                     unsigned stop_one_in, std::mt19937& rng) {
  model::Json* at = doc;
  for (int depth = 0; depth < max_depth && at->is_object() && !at->empty(); ++depth) {
    auto it = at->begin();
    std::advance(it, rng() % at->size());
    if (rng() % stop_one_in == 0) break;
    at = &*it;
    if (at->is_array() && !at->empty()) at = &(*at)[rng() % at->size()];
  }
  if (at->is_object() && !at->empty()) {
    auto it = at->begin();
    std::advance(it, rng() % at->size());
    const std::string key = it.key();
    if (rng() % 3 == 0) {
      at->erase(key);
    } else {
      (*at)[key] = values[rng() % values.size()];
    }
  }
}

// The fast decoder's result `got` against the reference `want`: both must succeed or both fail,
// and failures must give the same error. True when both succeeded (the caller compares them).
template <typename T>
bool BothDecoded(const Result<T>& got, const Result<T>& want) {
  EXPECT_EQ(got.ok(), want.ok()) << (got.ok() ? want.status() : got.status()).ToString();
  if (got.ok() != want.ok()) return false;
  if (!want.ok()) {
    EXPECT_EQ(got.status().ToString(), want.status().ToString());
    return false;
  }
  return true;
}

void ExpectSame(const std::string& bytes) {
  SCOPED_TRACE(bytes);
  auto want = Reference(bytes);
  auto got = DecodeJobFields(bytes);
  if (!BothDecoded(got, want)) return;
  EXPECT_TRUE(got->raw.is_null());
  EXPECT_TRUE(got->spec.is_null());
  EXPECT_TRUE(got->metadata.raw.is_null());
  EXPECT_TRUE(got->status.raw.is_null());
  EXPECT_EQ(model::DumpJson(model::EncodeJob(*got)), model::DumpJson(model::EncodeJob(*want)));
}

const char* kJob = R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"cj-1-28434567",
"namespace":"ns","uid":"u-1","resourceVersion":"42","creationTimestamp":"2024-01-01T00:01:00Z",
"labels":{"a":"b","c":"d"},"annotations":{"batch.kubernetes.io/cronjob-scheduled-timestamp":
"2024-01-01T00:01:00Z"},"ownerReferences":[{"apiVersion":"batch/v1","kind":"CronJob","name":"cj-1",
"uid":"cu-1","controller":true,"blockOwnerDeletion":true}]},"spec":{"template":{"spec":{}}},
"status":{"startTime":"2024-01-01T00:01:01Z","completionTime":"2024-01-01T00:01:09Z",
"conditions":[{"type":"Complete","status":"True","lastProbeTime":null}]}})";

TEST(JobFields, DecodesAsTheNlohmannPathDoes) {
  const std::vector<std::string> docs = {
      kJob,
      "{}",
      R"({"metadata":null,"status":null,"spec":null})",
      R"({"metadata":{"name":"n","ownerReferences":null,"labels":null},"status":{"conditions":null}})",
      R"({"metadata":{"name":"a","name":"b"}})",              // duplicate key: the last wins
      R"({"metadata":{"name":"a"},"metadata":{"uid":"u"}})",  // duplicate object
      R"({"metadata":{"labels":{"k":"1","k":"2"}}})",         // duplicate label
      R"({"metadata":{"name":5}})",                           // wrong type
      R"({"metadata":{"labels":{"k":1}}})",                   // wrong label type
      R"({"metadata":{"labels":[]}})",                        // labels not an object
      R"({"metadata":{"ownerReferences":[1]}})",              // owner reference not an object
      R"({"metadata":{"ownerReferences":[{"controller":"yes"}]}})",
      R"({"metadata":{"ownerReferences":{}}})",
      R"({"metadata":{"creationTimestamp":"yesterday"}})",  // bad time
      R"({"metadata":{"deletionTimestamp":"2024-01-01T00:00:00.5+01:00"}})",
      R"({"metadata":[]})",
      R"({"spec":[]})",
      R"({"status":{"conditions":[{"type":"Failed","status":"True"}, 3]}})",
      R"({"status":{"conditions":{}}})",
      R"({"status":{"startTime":7}})",
      R"({"apiVersion":null,"kind":"Job"})",
      R"({"metadata":{"name":"\u00e9\ud800"}})",  // unpaired surrogate
      R"({"metadata":{"name":"\u00e9"}})",
      R"({"metadata":{"name":"tab\tquote\"slash\/"}})",
      "[]",
      "null",
      "",
      "{",
      R"({"metadata":{"name":"a"}} trailing)",
      R"({"spec":{"x":[1,2,}})",             // malformed where no field is read
      "{\"metadata\":{\"name\":\"\xff\"}}",  // invalid UTF-8
      R"({"spec":{"n":1e400}})",
      R"({"spec":{"n":123456789012345678901234567890}})",
  };
  for (const auto& d : docs) ExpectSame(d);
  // The common documents take the simdjson path; the unusual ones are left to nlohmann.
  model::Job job;
  EXPECT_TRUE(DecodeJobFieldsFast(kJob, &job));
  EXPECT_EQ(job.metadata.owner_references.at(0).uid, "cu-1");
  EXPECT_EQ(FinishedCondition(job), "Complete");
  // A pass reads neither a Job's labels nor its annotations: they are checked, not kept.
  EXPECT_TRUE(job.metadata.labels.empty());
  EXPECT_TRUE(job.metadata.annotations.empty());
  EXPECT_TRUE(DecodeJobFieldsFast(R"({"metadata":{"name":"a","name":"b"}})", &job));
  EXPECT_EQ(job.metadata.name, "b");
  EXPECT_FALSE(DecodeJobFieldsFast(R"({"metadata":{"name":5}})", &job));
  EXPECT_FALSE(DecodeJobFieldsFast(R"({"metadata":{"name":"\u00e9"}})", &job));
  EXPECT_FALSE(DecodeJobFieldsFast("{", &job));
}

// Generated variants of a Job: fields dropped, nulled, retyped and duplicated, and bytes cut.
TEST(JobFields, GeneratedDocumentsDecodeAsTheNlohmannPathDoes) {
  std::mt19937 rng(8);
  const model::Json base = *model::ParseJson(kJob);
  const std::vector<model::Json> values = {
      nullptr, 1, "s", true, model::Json::array(), model::Json::object(), "2024-01-01T00:00:00Z"};
  for (int i = 0; i < 2000; ++i) {
    model::Json doc = base;
    MutateOneMember(&doc, values, /*max_depth=*/3, /*stop_one_in=*/2, rng);
    std::string bytes = model::DumpJson(doc);
    if (rng() % 10 == 0) bytes.resize(rng() % (bytes.size() + 1));
    if (rng() % 10 == 0 && !bytes.empty()) {  // a duplicate of a top-level key
      bytes.insert(1, R"("metadata":{"name":"dup"},)");
    }
    ExpectSame(bytes);
  }
}

Result<model::CronJob> CronJobReference(std::string_view bytes) {
  CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(bytes));
  CL_ASSIGN_OR_RETURN(model::CronJob cj, model::DecodeCronJob(j));
  StripCronJobJson(&cj);
  return cj;
}

void ExpectSameCronJob(const std::string& bytes) {
  SCOPED_TRACE(bytes);
  auto want = CronJobReference(bytes);
  auto got = DecodeCronJobFields(bytes);
  if (!BothDecoded(got, want)) return;
  EXPECT_TRUE(got->raw.is_null());
  EXPECT_TRUE(got->spec.raw.is_null());
  EXPECT_EQ(model::DumpJson(model::EncodeCronJob(*got)),
            model::DumpJson(model::EncodeCronJob(*want)));
  EXPECT_EQ(got->spec.job_template.spec, want->spec.job_template.spec);
  EXPECT_EQ(model::DumpJson(model::EncodeCronJobStatus(got->status)),
            model::DumpJson(model::EncodeCronJobStatus(want->status)));
}

const char* kCronJob = R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":"cj-1",
"namespace":"ns","uid":"cu-1","resourceVersion":"7","labels":{"team":"a"}},"spec":{"schedule":
"*/5 * * * *","timeZone":"Europe/Berlin","startingDeadlineSeconds":300,"concurrencyPolicy":"Forbid",
"suspend":false,"successfulJobsHistoryLimit":2,"failedJobsHistoryLimit":1,"jobTemplate":{"metadata":
{"labels":{"x":"y"},"annotations":{"p":"q"}},"spec":{"backoffLimit":1,"f":1.0,"n":-0,"big":
18446744073709551615,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c"}]}}}}},
"status":{"active":[{"apiVersion":"batch/v1","kind":"Job","namespace":"ns","name":"cj-1-1","uid":
"u-1","resourceVersion":"9"}],"lastScheduleTime":"2024-01-01T00:05:00Z"}})";

TEST(JobFields, CronJobsDecodeAsTheNlohmannPathDoes) {
  const std::vector<std::string> docs = {
      kCronJob,
      "{}",
      R"({"spec":null,"status":null,"metadata":null})",
      R"({"spec":{"jobTemplate":null,"timeZone":null}})",
      R"({"spec":{"jobTemplate":{"spec":null,"metadata":null}}})",
      R"({"spec":{"jobTemplate":{"spec":[]}}})",
      R"({"spec":{"jobTemplate":{"metadata":{"labels":{"a":1}}}}})",
      R"({"spec":{"startingDeadlineSeconds":9223372036854775808}})",  // nlohmann: unsigned
      R"({"spec":{"startingDeadlineSeconds":1.5}})",
      R"({"spec":{"startingDeadlineSeconds":-5}})",
      R"({"spec":{"suspend":"yes"}})",
      R"({"spec":{"schedule":"a"},"spec":{"schedule":"b"}})",  // duplicate: the last wins
      R"({"spec":{"jobTemplate":{"spec":{"a":1},"spec":{"b":2}}}})",
      R"({"status":{"active":[{"name":"j","extra":1}]}})",  // raw holds more than the fields
      R"({"status":{"conditions":[],"active":null}})",
      R"({"status":{"active":[1]}})",
      R"({"status":{"active":{}}})",
      R"({"status":{"lastScheduleTime":"soon"}})",
      R"({"status":{"lastSuccessfulTime":null,"active":[]}})",
      R"({"spec":{"jobTemplate":{"spec":{"s":"é"}}}})",
      R"({"spec":{"jobTemplate":{"spec":{"x":[1,2,}}}})",
      "[]",
      "{",
  };
  for (const auto& d : docs) ExpectSameCronJob(d);
  model::CronJob cj;
  ASSERT_TRUE(DecodeCronJobFieldsFast(kCronJob, &cj));
  EXPECT_TRUE(cj.status.raw.is_null());
  EXPECT_EQ(cj.spec.job_template.spec.Tree()["template"]["spec"]["restartPolicy"], "Never");
  EXPECT_FALSE(DecodeCronJobFieldsFast(R"({"status":{"active":[{"name":"j","extra":1}]}})", &cj));
}

TEST(JobFields, GeneratedCronJobsDecodeAsTheNlohmannPathDoes) {
  std::mt19937 rng(88);
  const model::Json base = *model::ParseJson(kCronJob);
  const std::vector<model::Json> values = {nullptr,
                                           1,
                                           -1,
                                           2.5,
                                           "s",
                                           true,
                                           model::Json::array(),
                                           model::Json::object(),
                                           "2024-01-01T00:00:00Z"};
  for (int i = 0; i < 2000; ++i) {
    model::Json doc = base;
    MutateOneMember(&doc, values, /*max_depth=*/4, /*stop_one_in=*/3, rng);
    std::string bytes = model::DumpJson(doc);
    if (rng() % 10 == 0) bytes.resize(rng() % (bytes.size() + 1));
    ExpectSameCronJob(bytes);
  }
}

// A recorded outcome decoded for a pass: what the nlohmann path decides for everything the pass
// reads — success or the same error, reason, message, and of a created Job the fields the pass
// takes (DecodeJob must succeed on the object exactly when it does on the whole one).
void ExpectSameOutcome(const std::string& payload, const std::string& verb,
                       model::ObjectKind kind) {
  SCOPED_TRACE(verb + " " + payload);
  auto want = [&]() -> Result<model::ApiOutcome> {
    CL_ASSIGN_OR_RETURN(model::Json j, model::ParseJson(payload));
    return model::DecodeApiOutcome(j);
  }();
  auto got = DecodeOutcomeFields(payload, verb, kind);
  if (!BothDecoded(got, want)) return;
  EXPECT_EQ(got->reason, want->reason);
  EXPECT_EQ(got->message, want->message);
  if (verb == "updateStatus" || verb == "delete") return;  // the pass reads no object
  EXPECT_EQ(got->object.is_null(), want->object.is_null());
  if (want->object.is_null()) return;
  auto got_job = model::DecodeJob(got->object);
  auto want_job = model::DecodeJob(want->object);
  if (!BothDecoded(got_job, want_job)) return;
  EXPECT_EQ(got_job->api_version, want_job->api_version);
  EXPECT_EQ(got_job->kind, want_job->kind);
  EXPECT_EQ(got_job->metadata.name, want_job->metadata.name);
  EXPECT_EQ(got_job->metadata.namespace_, want_job->metadata.namespace_);
  EXPECT_EQ(got_job->metadata.uid, want_job->metadata.uid);
  EXPECT_EQ(got_job->metadata.resource_version, want_job->metadata.resource_version);
}

TEST(JobFields, OutcomesDecodeAsTheNlohmannPathDoesForWhatThePassReads) {
  const std::string job = kJob;
  const std::vector<std::string> payloads = {
      R"({"object":)" + job + "}",
      R"({"object":)" + job + R"(,"reason":null,"message":null})",
      R"({"reason":"AlreadyExists","message":"jobs.batch \"x\" already exists"})",
      R"({"reason":"NamespaceTerminating","message":"ns is terminating","object":null})",
      R"({"reason":5})",
      R"({"message":[]})",
      R"({"reason":"a","reason":"b"})",         // repeated key: nlohmann keeps the last
      R"({"object":{"metadata":{"name":7}}})",  // a created Job that does not decode
      R"({"object":{"metadata":{"name":"é"}}})",
      R"({"object":[]})",
      R"({"object":{},"message":"é"})",
      R"({"object":{"spec":{"n":1e400}}})",
      "[]",
      "null",
      "",
      "{",
      R"({"object":{"x":[1,2,}}})",
  };
  for (const auto& p : payloads) {
    for (const char* verb : {"create", "updateStatus", "delete", "get"}) {
      ExpectSameOutcome(p, verb, model::ObjectKind::kJob);
    }
    ExpectSameOutcome(p, "updateStatus", model::ObjectKind::kCronJob);
  }
  // The common outcomes take the simdjson path.
  model::ApiOutcome o;
  EXPECT_TRUE(DecodeOutcomeFieldsFast(payloads[0], "create", model::ObjectKind::kJob, &o));
  EXPECT_EQ(o.object["metadata"]["uid"], "u-1");
  // Exactly the fields the pass reads, as DecodeApiOutcome holds them.
  const model::Json whole = *model::ParseJson(job);
  const model::Json& md = whole["metadata"];
  const model::Json want = {{"apiVersion", whole["apiVersion"]},
                            {"kind", whole["kind"]},
                            {"metadata",
                             {{"name", md["name"]},
                              {"namespace", md["namespace"]},
                              {"uid", md["uid"]},
                              {"resourceVersion", md["resourceVersion"]}}}};
  EXPECT_EQ(o.object, want);
  // The form the controller records a create's answer in today (reconciler::RecordedOutcome): a
  // ledger recorded in it decodes to the same outcome as one that kept the whole answer.
  const model::ApiCall create{model::ApiVerb::kCreate, model::ApiKind::kJob, "", "", nullptr};
  const model::ApiOutcome recorded =
      reconciler::RecordedOutcome(create, model::ApiOutcome::Ok(whole));
  EXPECT_EQ(recorded.object, want);
  model::ApiOutcome from_recorded;
  EXPECT_TRUE(DecodeOutcomeFieldsFast(model::DumpJson(model::EncodeApiOutcome(recorded)), "create",
                                      model::ObjectKind::kJob, &from_recorded));
  EXPECT_EQ(from_recorded, o);
  EXPECT_TRUE(
      DecodeOutcomeFieldsFast(payloads[0], "updateStatus", model::ObjectKind::kCronJob, &o));
  EXPECT_TRUE(o.object.is_null());
  EXPECT_FALSE(DecodeOutcomeFieldsFast(payloads[0], "get", model::ObjectKind::kJob, &o));
  EXPECT_FALSE(DecodeOutcomeFieldsFast(payloads[6], "delete", model::ObjectKind::kJob, &o));
}

TEST(JobFields, GeneratedOutcomesDecodeAsTheNlohmannPathDoes) {
  std::mt19937 rng(89);
  const model::Json base = {
      {"object", *model::ParseJson(kJob)}, {"reason", "Conflict"}, {"message", "m"}};
  const std::vector<model::Json> values = {
      nullptr, 1, "s", true, model::Json::array(), model::Json::object()};
  for (int i = 0; i < 1000; ++i) {
    model::Json doc = base;
    if (rng() % 2 == 0) doc.erase("reason");
    MutateOneMember(&doc, values, /*max_depth=*/4, /*stop_one_in=*/3, rng);
    std::string bytes = model::DumpJson(doc);
    if (rng() % 10 == 0) bytes.resize(rng() % (bytes.size() + 1));
    ExpectSameOutcome(bytes, i % 2 == 0 ? "create" : "updateStatus",
                      i % 2 == 0 ? model::ObjectKind::kJob : model::ObjectKind::kCronJob);
  }
}

}  // namespace
}  // namespace cronledger::replay
