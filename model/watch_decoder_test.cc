#include "model/watch_decoder.h"

#include <gtest/gtest.h>

#include "model/job_fields.h"
#include "model/json.h"
#include "model/json_limits.h"
#include "model/test_events.h"

namespace cronledger::model {
namespace {

using model::ObjectKind;
using model::WatchEventType;

TEST(DecoderTest, WatchEventOfARealisticJob) {
  WatchDecoder decoder;
  const std::string object =
      testing::JobObject("prod", "backup-1", "uid-1", 42, "backup", "cj-uid");
  EXPECT_GT(object.size(), 2400u);
  auto out = decoder.DecodeCopy(testing::WatchLine("MODIFIED", object));
  ASSERT_TRUE(out.rejections.empty()) << out.rejections[0].reason;
  ASSERT_EQ(out.events.size(), 1u);
  const auto& e = out.events[0];
  EXPECT_EQ(e.type, WatchEventType::kModified);
  EXPECT_EQ(e.kind, ObjectKind::kJob);
  EXPECT_EQ(e.api_version, "batch/v1");
  EXPECT_EQ(e.namespace_, "prod");
  EXPECT_EQ(e.name, "backup-1");
  EXPECT_EQ(e.uid, "uid-1");
  EXPECT_EQ(e.resource_version, "42");
  EXPECT_EQ(e.owner_name, "backup");
  EXPECT_EQ(e.owner_uid, "cj-uid");
  EXPECT_EQ(e.raw, object);  // the object's bytes exactly as received
  // Decoded once, as a pass reads it: the event carries what the check decoded.
  ASSERT_NE(e.decoded.job, nullptr);
  EXPECT_EQ(e.decoded.cron_job, nullptr);
  EXPECT_EQ(EncodeJob(*e.decoded.job), EncodeJob(*DecodeJobFields(object)));
  EXPECT_EQ(e.decoded.job->metadata.name, "backup-1");
}

// Every accepted ADDED or MODIFIED object goes with its decoded form, whatever document it came
// in; a DELETED one and a bookmark are not decoded (nothing reads them).
TEST(DecoderTest, AcceptedObjectsCarryTheirDecodedForm) {
  WatchDecoder decoder;
  const std::string cj = testing::CronJobObject("ns", "a", "ua", 7);
  const std::string job = testing::JobObject("ns", "a-1", "uj", 8, "a", "ua");
  DecodedDocument out = decoder.DecodeCopy(testing::WatchLine("ADDED", cj));
  decoder.Decode(R"({"apiVersion":"v1","kind":"List","items":[)" + cj + "," + job +
                     R"(],"metadata":{}})" + std::string(kDecoderPadding, ' '),
                 &out);
  out.events.push_back(decoder.DecodeCopy(testing::WatchLine("DELETED", job)).events.at(0));
  ASSERT_TRUE(out.rejections.empty()) << out.rejections[0].reason;
  ASSERT_EQ(out.events.size(), 4u);
  for (size_t i : {0, 1}) {
    ASSERT_NE(out.events[i].decoded.cron_job, nullptr) << i;
    EXPECT_EQ(out.events[i].decoded.job, nullptr) << i;
    EXPECT_EQ(EncodeCronJob(*out.events[i].decoded.cron_job),
              EncodeCronJob(*DecodeCronJobFields(out.events[i].raw)));
  }
  ASSERT_NE(out.events[2].decoded.job, nullptr);
  EXPECT_EQ(out.events[2].decoded.job->metadata.uid, "uj");
  EXPECT_EQ(out.events[3].decoded.job, nullptr);  // DELETED
  // Not part of the event's value: an event without it is the same event.
  model::WatchEvent bare = out.events[0];
  bare.decoded.cron_job.reset();
  EXPECT_EQ(bare, out.events[0]);

  // A decoder for a consumer that keeps only the bytes checks the same and drops them.
  WatchDecoder dropping(DecodedObjects::kDrop);
  const DecodedDocument dropped = dropping.DecodeCopy(testing::WatchLine("ADDED", cj));
  ASSERT_EQ(dropped.events.size(), 1u);
  EXPECT_EQ(dropped.events[0].decoded.cron_job, nullptr);
  EXPECT_EQ(dropped.events[0], out.events[0]);
  std::string bad = job;
  const std::string start = R"("startTime":"2024-05-19T10:00:01Z")";
  ASSERT_NE(bad.find(start), std::string::npos);
  bad.replace(bad.find(start), start.size(), R"("startTime":"yesterday")");
  const DecodedDocument refused = dropping.DecodeCopy(testing::WatchLine("MODIFIED", bad));
  EXPECT_TRUE(refused.events.empty());
  ASSERT_EQ(refused.rejections.size(), 1u);
  EXPECT_NE(refused.rejections[0].reason.find("invalid Job"), std::string::npos);
}

TEST(DecoderTest, FieldOrderAndBareObjectsAndLists) {
  WatchDecoder decoder;
  const std::string cj = testing::CronJobObject("ns", "a", "ua", 7);
  auto reversed = decoder.DecodeCopy(R"({"object":)" + cj + R"(,"type":"DELETED"})");
  ASSERT_EQ(reversed.events.size(), 1u);
  EXPECT_EQ(reversed.events[0].type, WatchEventType::kDeleted);
  EXPECT_TRUE(reversed.events[0].owner_name.empty());

  auto bare = decoder.DecodeCopy("  " + cj + "\r\n");
  ASSERT_EQ(bare.events.size(), 1u);
  EXPECT_EQ(bare.events[0].type, WatchEventType::kAdded);
  EXPECT_EQ(bare.events[0].raw, cj);

  const std::string job = testing::JobObject("ns", "a-1", "uj", 8, "a", "ua");
  auto list =
      decoder.DecodeCopy(R"({"apiVersion":"v1","kind":"List","items":[)" + cj + "," + job +
                         R"(,{"kind":"Pod","apiVersion":"v1","metadata":{}}],"metadata":{}})");
  ASSERT_EQ(list.events.size(), 2u);
  EXPECT_EQ(list.events[1].name, "a-1");
  EXPECT_EQ(list.events[1].raw, job);
  ASSERT_EQ(list.rejections.size(), 1u);
  EXPECT_EQ(list.rejections[0].item, 2);
  EXPECT_EQ(list.rejections[0].reason, "unknown kind \"Pod\"");
}

TEST(DecoderTest, AnEmptyListYieldsNothingOnlyWhenItIsWellFormed) {
  WatchDecoder decoder;
  for (const char* ok : {R"({"apiVersion":"v1","kind":"List","items":[]})",
                         R"({"apiVersion":"batch/v1","kind":"CronJobList","items":[],"x":null})"}) {
    auto out = decoder.DecodeCopy(ok);
    EXPECT_TRUE(out.events.empty()) << ok;
    EXPECT_TRUE(out.rejections.empty()) << ok;
  }
  // Fields the decoder does not read are skipped unchecked; an empty List is then checked whole.
  for (const char* bad :
       {R"({"kind":"List","items":[],"x":nul})", R"({"kind":"List","items":[],"x":1.2.3})",
        R"({"kind":"List","items":[],"x":"\q"})"}) {
    auto out = decoder.DecodeCopy(bad);
    EXPECT_TRUE(out.events.empty()) << bad;
    ASSERT_EQ(out.rejections.size(), 1u) << bad;
    EXPECT_EQ(out.rejections[0].reason.rfind("malformed JSON: ", 0), 0u)
        << out.rejections[0].reason;
    EXPECT_EQ(out.rejections[0].raw, bad);
  }
  // A key given twice takes its last value, null included: this is no List but a bare object
  // without a kind.
  auto twice = decoder.DecodeCopy(R"({"kind":"List","kind":null,"items":[]})");
  EXPECT_TRUE(twice.events.empty());
  ASSERT_EQ(twice.rejections.size(), 1u);
  EXPECT_EQ(twice.rejections[0].reason, "missing kind");
}

TEST(DecoderTest, BookmarkNeedsOnlyAResourceVersion) {
  WatchDecoder decoder;
  auto out = decoder.DecodeCopy(
      R"({"type":"BOOKMARK","object":{"kind":"CronJob","apiVersion":"batch/v1","metadata":{"resourceVersion":"12345"}}})");
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].type, WatchEventType::kBookmark);
  EXPECT_EQ(out.events[0].resource_version, "12345");
}

TEST(DecoderTest, RejectionsCarryTheReason) {
  struct Case {
    std::string doc;
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"not json", "malformed JSON"},
      {"[1,2]", "malformed JSON (expected an object)"},
      {R"({"type":"ADDED","object":{"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"x","namespace":"n","uid":"u"})",
       "malformed JSON"},
      {R"({"type":"ERROR","object":{"kind":"Status","message":"too old resource version"}})",
       "watch ERROR event: too old resource version"},
      {R"({"type":"SNAPSHOT","object":{}})", "unknown watch event type \"SNAPSHOT\""},
      {R"({"type":"ADDED"})", "watch event without object"},
      {R"({"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{"name":"p","namespace":"n","uid":"u"}}})",
       "unknown kind \"Pod\""},
      {R"({"kind":"Job","apiVersion":"batch/v1","metadata":{"namespace":"n","uid":"u"}})",
       "missing metadata.name"},
      {R"({"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"j","namespace":"n"}})",
       "missing metadata.uid"},
      {R"({"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"j","uid":"u"}})",
       "missing metadata.namespace"},
      {R"({"kind":"Job","metadata":{"name":"j","namespace":"n","uid":"u"}})", "missing apiVersion"},
      {R"({"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"a/b","namespace":"n","uid":"u"}})",
       "invalid metadata.name or namespace"},
      {R"({"kind":"Job","apiVersion":"batch/v1","metadata":{"name":7,"namespace":"n","uid":"u"}})",
       "metadata.name: not a string"},
      {R"({"type":"BOOKMARK","object":{"kind":"Job","apiVersion":"batch/v1","metadata":{}}})",
       "BOOKMARK without metadata.resourceVersion"},
      {R"({"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"j","namespace":"n","uid":"u"}} x)",
       "malformed JSON"},
  };
  WatchDecoder decoder;
  for (const auto& c : cases) {
    auto out = decoder.DecodeCopy(c.doc);
    EXPECT_TRUE(out.events.empty()) << c.doc;
    ASSERT_EQ(out.rejections.size(), 1u) << c.doc;
    EXPECT_EQ(out.rejections[0].reason.substr(0, c.reason.size()), c.reason) << c.doc;
    EXPECT_EQ(out.rejections[0].raw, c.doc);
    EXPECT_EQ(out.rejections[0].item, -1);
  }
}

// A CronJob whose spec.jobTemplate.spec.template holds `depth` levels of {"a":...} in all.
std::string DeepCronJob(const std::string& name, size_t depth) {
  std::string deep;
  for (size_t i = 1; i < depth; ++i) deep += R"({"a":)";
  deep += "{}";
  deep += std::string(depth - 1, '}');
  return R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":")" + name +
         R"(","namespace":"ns","uid":"u-)" + name +
         R"("},"spec":{"schedule":"* * * * *","jobTemplate":{"spec":{"template":)" + deep + "}}}}";
}

TEST(DecoderTest, ObjectsOverTheApiServersLimitsAreRejectedWithoutParsing) {
  WatchDecoder decoder;
  // The object's own levels: 1 (object) + 1 (spec) + 1 (jobTemplate) + 1 (jobTemplate.spec).
  const size_t envelope = 4;
  const std::string at_limit = DeepCronJob("at", model::kMaxJsonDepth - envelope);
  EXPECT_EQ(model::JsonDepth(at_limit, 1u << 20), model::kMaxJsonDepth);
  auto ok = decoder.DecodeCopy(testing::WatchLine("ADDED", at_limit));
  ASSERT_TRUE(ok.rejections.empty()) << ok.rejections[0].reason;
  ASSERT_EQ(ok.events.size(), 1u);

  const std::string depth_reason = "over limit: JSON nesting deeper than 10000 levels";
  for (size_t depth : {model::kMaxJsonDepth - envelope + 1, size_t{100000}}) {
    const std::string deep = DeepCronJob("deep", depth);
    for (const std::string& doc : {testing::WatchLine("ADDED", deep), deep}) {
      auto out = decoder.DecodeCopy(doc);
      EXPECT_TRUE(out.events.empty());
      ASSERT_EQ(out.rejections.size(), 1u);
      EXPECT_EQ(out.rejections[0].reason, depth_reason);
    }
  }
  // In a List only the item over the limit is rejected.
  const std::string good = testing::CronJobObject("ns", "good", "ug", 1);
  auto list = decoder.DecodeCopy(R"({"apiVersion":"v1","kind":"List","items":[)" +
                                 DeepCronJob("deep", 100000) + "," + good + "]}");
  ASSERT_EQ(list.events.size(), 1u);
  EXPECT_EQ(list.events[0].name, "good");
  ASSERT_EQ(list.rejections.size(), 1u);
  EXPECT_EQ(list.rejections[0].item, 0);
  EXPECT_EQ(list.rejections[0].reason, depth_reason);

  // Size: an annotation that takes the object past 3 MiB.
  std::string big = good;
  big.insert(big.find(R"("annotations":{)") + 15,
             R"("big":")" + std::string(model::kMaxObjectBytes, 'x') + R"(",)");
  auto large = decoder.DecodeCopy(testing::WatchLine("MODIFIED", big));
  EXPECT_TRUE(large.events.empty());
  ASSERT_EQ(large.rejections.size(), 1u);
  EXPECT_EQ(large.rejections[0].reason,
            "over limit: object of " + std::to_string(big.size()) + " bytes, larger than 3145728");
}

TEST(DecoderTest, ObjectsTheModelCannotHoldAreRejectedWithTheField) {
  struct Case {
    std::string kind;
    std::string member;  // `"spec":...` of a CronJob, `"status":...` of a Job
    std::string reason;
  };
  const std::vector<Case> cases = {
      {"CronJob",
       R"("spec":{"schedule":"* * * * *","startingDeadlineSeconds":1e20,"jobTemplate":{}})",
       "invalid CronJob: spec.startingDeadlineSeconds: expected integer, got number"},
      {"CronJob",
       R"("spec":{"schedule":"* * * * *","successfulJobsHistoryLimit":18446744073709551616,"jobTemplate":{}})",
       "invalid CronJob: spec.successfulJobsHistoryLimit: expected integer, got number"},
      {"CronJob",
       R"("spec":{"schedule":"* * * * *","failedJobsHistoryLimit":18446744073709551615,"jobTemplate":{}})",
       "invalid CronJob: spec.failedJobsHistoryLimit: integer out of range"},
      {"CronJob", R"("spec":"every minute")", "invalid CronJob: spec: expected object"},
      {"CronJob", R"("spec":{"schedule":5,"jobTemplate":{}})",
       "invalid CronJob: spec.schedule: expected string"},
      {"Job", R"("status":{"conditions":"Complete"})",
       "invalid Job: status.conditions: expected array"},
      {"Job", R"("status":{"conditions":[{"type":1,"status":"True"}]})",
       "invalid Job: status.conditions[0].type: expected string"},
      {"Job", R"("status":"done")", "invalid Job: status: expected object"},
  };
  WatchDecoder decoder;
  for (const Case& c : cases) {
    const std::string object = R"({"apiVersion":"batch/v1","kind":")" + c.kind +
                               R"(","metadata":{"name":"c","namespace":"n","uid":"u"},)" +
                               c.member + "}";
    auto out = decoder.DecodeCopy(testing::WatchLine("MODIFIED", object));
    EXPECT_TRUE(out.events.empty()) << c.member;
    ASSERT_EQ(out.rejections.size(), 1u) << c.member;
    EXPECT_EQ(out.rejections[0].reason.substr(0, c.reason.size()), c.reason) << c.member;
    // Its deletion still applies: the view must not keep an object the cluster deleted.
    auto deleted = decoder.DecodeCopy(testing::WatchLine("DELETED", object));
    EXPECT_TRUE(deleted.rejections.empty()) << c.member;
    EXPECT_EQ(deleted.events.size(), 1u) << c.member;
  }
}

TEST(DecoderTest, NullFieldsAreAbsentAndNonControllerOwnersAreIgnored) {
  WatchDecoder decoder;
  auto out = decoder.DecodeCopy(
      R"({"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"j","namespace":"n","uid":"u","resourceVersion":null,"ownerReferences":[{"kind":"CronJob","name":"other","uid":"o"},{"kind":"CronJob","name":"mine","uid":"m","controller":true}]}})");
  ASSERT_EQ(out.events.size(), 1u);
  EXPECT_EQ(out.events[0].resource_version, "");
  EXPECT_EQ(out.events[0].owner_name, "mine");
}

// An object without its TypeMeta, as a typed list's item comes from the API server.
std::string Untyped(const std::string& object) {
  const std::string prefix = R"({"apiVersion":"batch/v1","kind":"CronJob",)";
  EXPECT_EQ(object.rfind(prefix, 0), 0u);
  std::string untyped = "{";
  untyped += object.substr(prefix.size());
  return untyped;
}

TEST(DecoderTest, TypedListItemsGetTheListsTypeInFrontOfTheirBytes) {
  const std::string a = Untyped(testing::CronJobObject("n", "a", "u-a", 5));
  const std::string b = testing::CronJobObject("n", "b", "u-b", 6);  // keeps its own
  // `items` before the list's kind: the items are typed once the whole list is read.
  const std::string bad = R"({"metadata":{"name":"c","namespace":"n","uid":"u-c"},"spec":"no"})";
  const std::string doc = R"({"items":[)" + a + "," + b + "," + bad +
                          R"(],"kind":"CronJobList","apiVersion":"batch/v1",)"
                          R"("metadata":{"resourceVersion":"42","continue":"next-page"}})";
  WatchDecoder decoder;
  DecodedDocument out = decoder.DecodeCopy(doc);
  ASSERT_EQ(out.events.size(), 2u);
  // A refused item names its type too, wherever it goes next (quarantine, the watch relay).
  ASSERT_EQ(out.rejections.size(), 1u);
  EXPECT_NE(out.rejections[0].reason.find("invalid CronJob"), std::string::npos)
      << out.rejections[0].reason;
  EXPECT_EQ(out.rejections[0].raw, R"({"kind":"CronJob","apiVersion":"batch/v1",)" + bad.substr(1));
  EXPECT_EQ(out.rejections[0].item, 2);
  EXPECT_EQ(out.events[0].raw, R"({"kind":"CronJob","apiVersion":"batch/v1",)" + a.substr(1));
  EXPECT_EQ(out.events[0].kind, ObjectKind::kCronJob);
  EXPECT_EQ(out.events[0].api_version, "batch/v1");
  EXPECT_EQ(out.events[1].raw, b);
  EXPECT_EQ(out.list_resource_version, "42");
  EXPECT_EQ(out.list_continue, "next-page");

  // A plain `List` names no type: an item without one is refused, with its bytes as they came.
  out = decoder.DecodeCopy(R"({"kind":"List","apiVersion":"v1","items":[)" + a + "]}");
  ASSERT_EQ(out.rejections.size(), 1u);
  EXPECT_EQ(out.rejections[0].reason, "missing kind");
  EXPECT_EQ(out.rejections[0].raw, a);
  EXPECT_EQ(out.rejections[0].item, 0);
  EXPECT_EQ(out.rejections[0].name, "a");
}

TEST(DecoderTest, ARefusedWatchEventKeepsItsTypeAndWhatWasRead) {
  WatchDecoder decoder;
  // The object's metadata is read before the field that refuses it.
  DecodedDocument out = decoder.DecodeCopy(
      R"({"object":{"kind":"Job","apiVersion":"batch/v1","metadata":{"name":"j","namespace":"n",)"
      R"("uid":"u","resourceVersion":"77"},"status":{"startTime":"soon"}},"type":"MODIFIED"})");
  ASSERT_EQ(out.rejections.size(), 1u);
  const Rejection& r = out.rejections[0];
  EXPECT_NE(r.reason.find("invalid Job"), std::string::npos) << r.reason;
  EXPECT_EQ(r.event_type, WatchEventType::kModified);
  EXPECT_EQ(r.resource_version, "77");
  EXPECT_EQ(r.namespace_, "n");
  EXPECT_EQ(r.name, "j");
  // A refusal in the metadata itself: the type still comes through, the rest is what was read.
  out = decoder.DecodeCopy(
      R"({"type":"ADDED","object":{"kind":"Job","metadata":{"namespace":"n","name":7}}})");
  ASSERT_EQ(out.rejections.size(), 1u);
  EXPECT_EQ(out.rejections[0].event_type, WatchEventType::kAdded);
  // A document that is not a watch event has no type.
  for (const char* doc : {R"({"type":"WHAT","object":{}})", R"({"type":"ADDED"})", "[1]"}) {
    out = decoder.DecodeCopy(doc);
    ASSERT_EQ(out.rejections.size(), 1u) << doc;
    EXPECT_FALSE(out.rejections[0].event_type.has_value()) << doc;
  }
}

TEST(DecoderTest, AnErrorEventKeepsTheStatusAsSent) {
  WatchDecoder decoder;
  const std::string status =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"gone","code":410})";
  DecodedDocument out = decoder.DecodeCopy(R"({"type":"ERROR","object":)" + status + "}");
  ASSERT_EQ(out.rejections.size(), 1u);
  EXPECT_EQ(out.rejections[0].reason, "watch ERROR event: gone");
  EXPECT_EQ(out.error_status, status);
}

}  // namespace
}  // namespace cronledger::model
