// Objects nothing should be able to stop the controller or the audit API with (docs/ledger.md
// "Input limits", docs/audit.md "Objects that cannot be read"): deep nesting and oversized
// objects are quarantined at ingest; CronJobs the model cannot hold are quarantined with their
// field; a stored CronJob that no longer decodes (written before ingest validated it) is a row
// with its error in `report adherence` and `GET /v1/cronjobs`, never a failed query.
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include "model/json.h"
#include "store/test_util.h"
#include "tests/audit/serve.h"
#include "tests/testing/cli.h"

namespace cronledger::audit {
namespace {

using cli_test::Cli;
using cli_test::CliResult;

model::Json ParseOut(const std::string& out) {
  auto j = model::ParseJson(out);
  EXPECT_TRUE(j.ok()) << out.substr(0, 400);
  return j.ok() ? *j : model::Json::object();
}

std::pair<int, std::string> Get(int port, const std::string& target, const std::string& token) {
  Poco::Net::HTTPClientSession s("127.0.0.1", static_cast<Poco::UInt16>(port));
  Poco::Net::HTTPRequest req("GET", target, Poco::Net::HTTPMessage::HTTP_1_1);
  req.set("Authorization", "Bearer " + token);
  s.sendRequest(req);
  Poco::Net::HTTPResponse resp;
  std::ostringstream out;
  Poco::StreamCopier::copyStream(s.receiveResponse(resp), out);
  return {static_cast<int>(resp.getStatus()), out.str()};
}

// A CronJob in namespace "team" whose spec is `spec` (JSON text).
std::string CronJob(const std::string& name, const std::string& spec) {
  return R"({"apiVersion":"batch/v1","kind":"CronJob","metadata":{"name":")" + name +
         R"(","namespace":"team","uid":"uid-)" + name +
         R"(","resourceVersion":"1","creationTimestamp":"2024-05-01T00:00:00Z"},"spec":)" + spec +
         R"(,"status":{}})";
}

std::string Spec(const std::string& fields) {
  return R"({"schedule":"*/5 * * * *",)" + fields +
         R"("jobTemplate":{"spec":{"template":{"spec":{"containers":[]}}}}})";
}

// A valid CronJob whose pod template nests `levels` objects; the CronJob itself nests 4 more (the
// object, spec, jobTemplate, jobTemplate.spec).
std::string DeepCronJob(const std::string& name, size_t levels) {
  std::string deep;
  for (size_t i = 1; i < levels; ++i) deep += R"({"a":)";
  deep += "{}" + std::string(levels - 1, '}');
  return CronJob(name,
                 R"({"schedule":"*/5 * * * *","jobTemplate":{"spec":{"template":)" + deep + "}}}");
}

store::LedgerOptions LedgerAt(const std::string& path) {
  store::LedgerOptions o;
  o.path = path;
  return o;
}

class Poison : public ::testing::Test {
 protected:
  // Writes `lines` as a JSON-lines file and ingests it; returns the ingest's JSON summary.
  model::Json Ingest(const std::vector<std::string>& lines) {
    const std::string path = dir_.Sub("events.jsonl");
    std::ofstream f(path, std::ios::binary);
    for (const std::string& l : lines) f << l << "\n";
    f.close();
    const CliResult r = Cli("ingest --from " + path + " -o json" + flags_);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    model::Json j = ParseOut(r.out);
    return j.contains("items") && !j["items"].empty() ? j["items"][0] : j;
  }
  // name -> reason of every quarantined CronJob (the name read from the raw bytes' text: a
  // document over the depth limit does not parse).
  std::map<std::string, std::string> QuarantineReasons() {
    auto ledger = store::testing::OpenTestLedger(LedgerAt(data_));
    std::map<std::string, std::string> out;
    if (ledger == nullptr) return out;
    auto q = ledger->ListQuarantine(0, 0);
    EXPECT_TRUE(q.ok());
    const std::string key = R"("metadata":{"name":")";
    for (const store::QuarantineEntry& e : *q) {
      const size_t at = e.raw.find(key);
      EXPECT_NE(at, std::string::npos) << e.raw.substr(0, 200);
      if (at == std::string::npos) continue;
      const size_t from = at + key.size();
      out[e.raw.substr(from, e.raw.find('"', from) - from)] = e.reason;
    }
    return out;
  }
  // `report adherence` over the namespace must succeed and list `names`.
  model::Json Report() {
    const CliResult r =
        Cli("report adherence -n team --since 2024-05-01T00:00:00Z --until 2024-05-02T00:00:00Z "
            "-o json" +
            flags_);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    return ParseOut(r.out);
  }
  // GET /v1/cronjobs?namespace=team through `cronledger serve`.
  std::pair<int, model::Json> ApiList() {
    const std::string token_file = dir_.Sub("token");
    std::ofstream(token_file) << "poison-token\n";
    ServeProcess serve(data_, token_file);
    EXPECT_NE(serve.port(), 0);
    if (serve.port() == 0) return {0, model::Json()};
    auto [status, body] = Get(serve.port(), "/v1/cronjobs?namespace=team", "poison-token");
    return {status, ParseOut(body)};
  }

  store::testing::TempDir dir_;
  std::string data_ = dir_.Sub("data");
  std::string flags_ = " --data-dir " + data_;
};

TEST_F(Poison, DeepAndOversizedObjectsAreQuarantinedAndEveryReaderCarriesOn) {
  std::string big = CronJob("big", Spec(""));
  big.insert(big.find(R"("creationTimestamp")"),
             R"("annotations":{"big":")" + std::string(size_t{3} << 20, 'x') + R"("},)");
  model::Json summary = Ingest({CronJob("good", Spec("")), DeepCronJob("deep", 100000),
                                DeepCronJob("limit", 10000 - 4), big});
  EXPECT_EQ(summary["events"], 2) << summary.dump();
  EXPECT_EQ(summary["quarantined"], 2) << summary.dump();
  std::map<std::string, std::string> reasons = QuarantineReasons();
  EXPECT_EQ(reasons["deep"], "over limit: JSON nesting deeper than 10000 levels");
  EXPECT_EQ(reasons["big"].substr(0, 22), "over limit: object of ");

  // `state`, `report adherence` and `serve` over the ledger (each died of the deep object).
  for (const char* name : {"good", "limit"}) {
    const CliResult state =
        Cli(std::string("state team/") + name + " --at 2024-05-01T01:00:00Z -o json" + flags_);
    EXPECT_EQ(state.exit_code, 0) << name << ": " << state.out.substr(0, 300);
  }
  model::Json report = Report();
  ASSERT_EQ(report["items"].size(), 2u) << report.dump().substr(0, 400);
  EXPECT_EQ(report["items"][0]["name"], "good");
  EXPECT_EQ(report["items"][1]["name"], "limit");
  auto [status, list] = ApiList();
  EXPECT_EQ(status, 200);
  EXPECT_EQ(list["items"].size(), 2u);
}

TEST_F(Poison, CronJobsTheModelCannotHoldAreQuarantinedAndTheRestReported) {
  struct Case {
    std::string name;
    std::string spec;
    std::string
        reason;  // "" = accepted (upstream's controller deals with it, docs/semantics.md §6)
  };
  const std::vector<Case> cases = {
      {"deadline-1e20", Spec(R"("startingDeadlineSeconds":1e20,)"),
       "invalid CronJob: spec.startingDeadlineSeconds: expected integer, got number"},
      {"history-2-64", Spec(R"("successfulJobsHistoryLimit":18446744073709551616,)"),
       "invalid CronJob: spec.successfulJobsHistoryLimit: expected integer, got number"},
      {"history-u64", Spec(R"("failedJobsHistoryLimit":18446744073709551615,)"),
       "invalid CronJob: spec.failedJobsHistoryLimit: integer out of range"},
      {"deadline-float", Spec(R"("startingDeadlineSeconds":1.5,)"),
       "invalid CronJob: spec.startingDeadlineSeconds: expected integer, got number"},
      {"suspend-string", Spec(R"("suspend":"yes",)"),
       "invalid CronJob: spec.suspend: expected boolean, got string"},
      {"spec-string", R"("every five minutes")",
       "invalid CronJob: spec: expected object, got string"},
      {"schedule-number", R"({"schedule":5,"jobTemplate":{}})",
       "invalid CronJob: spec.schedule: expected string, got number"},
      {"zone-number", Spec(R"("timeZone":7,)"),
       "invalid CronJob: spec.timeZone: expected string, got number"},
      {"template-string", R"({"schedule":"* * * * *","jobTemplate":"x"})",
       "invalid CronJob: spec.jobTemplate: expected object, got string"},
      {"labels-number", R"({"schedule":"* * * * *","jobTemplate":{"metadata":{"labels":{"a":1}}}})",
       "invalid CronJob: spec.jobTemplate.metadata.labels.a: expected string, got number"},
      // Decodable, and handled by the controller as upstream's does (warning events, records).
      {"bad-schedule", R"({"schedule":"every day","jobTemplate":{}})", ""},
      {"tz-in-schedule", R"({"schedule":"TZ=UTC 0 * * * *","jobTemplate":{}})", ""},
      {"tz-empty", R"({"schedule":"TZ= 0 * * * *","jobTemplate":{}})", ""},
      {"unknown-zone", Spec(R"("timeZone":"Mars/Olympus",)"), ""},
      {"no-job-template", R"({"schedule":"*/5 * * * *"})", ""},
      {"six-fields", R"({"schedule":"0 */5 * * * *","jobTemplate":{}})", ""},
      {"good", Spec(""), ""},
  };
  std::vector<std::string> lines;
  for (const Case& c : cases) lines.push_back(CronJob(c.name, c.spec));
  model::Json summary = Ingest(lines);
  std::map<std::string, std::string> reasons = QuarantineReasons();
  size_t rejected = 0;
  for (const Case& c : cases) {
    EXPECT_EQ(reasons.count(c.name) ? reasons[c.name] : "", c.reason) << c.name;
    if (!c.reason.empty()) ++rejected;
  }
  EXPECT_EQ(summary["quarantined"], rejected);
  EXPECT_EQ(summary["events"], cases.size() - rejected);

  // Every accepted one is a row of the namespace's report; the unparseable schedules say why.
  model::Json report = Report();
  ASSERT_EQ(report["items"].size(), cases.size() - rejected) << report.dump().substr(0, 400);
  std::map<std::string, model::Json> rows;
  for (const model::Json& row : report["items"]) rows[row["name"].get<std::string>()] = row;
  EXPECT_FALSE(rows["bad-schedule"]["scheduleErrors"].empty());
  EXPECT_FALSE(rows["unknown-zone"]["scheduleErrors"].empty());
  EXPECT_TRUE(rows["good"]["scheduleErrors"].empty());
  EXPECT_GT(rows["good"]["expected"].get<uint64_t>(), 0u);
}

// A ledger written before ingest validated CronJobs: the stored bytes of one CronJob do not
// decode. It is a row with its error; the namespace's report and list still answer.
TEST_F(Poison, AStoredCronJobThatNoLongerDecodesIsARowWithItsError) {
  {
    auto ledger = store::testing::OpenTestLedger(LedgerAt(data_));
    ASSERT_NE(ledger, nullptr);
    store::UnitOfWork unit;
    for (const auto& [name, spec] : std::vector<std::pair<std::string, std::string>>{
             {"good", Spec("")},
             {"deadline-1e20", Spec(R"("startingDeadlineSeconds":1e20,)")},
             {"deep", ""}}) {
      model::WatchEvent ev = store::testing::CronJobEvent(model::WatchEventType::kAdded, "team",
                                                          name, "uid-" + name, "1");
      ev.raw = name == "deep" ? DeepCronJob(name, 100000) : CronJob(name, spec);
      unit.inputs.emplace_back(std::move(ev));
    }
    ASSERT_TRUE(ledger->Commit(std::move(unit)).ok());
  }
  model::Json report = Report();
  ASSERT_EQ(report["items"].size(), 3u) << report.dump().substr(0, 400);
  std::map<std::string, model::Json> rows;
  for (const model::Json& row : report["items"]) rows[row["name"].get<std::string>()] = row;
  EXPECT_EQ(rows["deadline-1e20"]["error"],
            "stored CronJob: spec.startingDeadlineSeconds: expected integer, got number");
  EXPECT_EQ(rows["deep"]["error"],
            "stored CronJob: over limit: JSON nesting deeper than 10008 levels");
  EXPECT_FALSE(rows["good"].contains("error"));
  EXPECT_GT(rows["good"]["expected"].get<uint64_t>(), 0u);

  const CliResult table =
      Cli("report adherence -n team --since 2024-05-01T00:00:00Z --until 2024-05-02T00:00:00Z" +
          flags_);
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("expected integer, got number"), std::string::npos) << table.out;

  auto [status, list] = ApiList();
  EXPECT_EQ(status, 200) << list.dump();
  ASSERT_EQ(list["items"].size(), 3u) << list.dump();
  EXPECT_EQ(list["items"][0]["name"], "deadline-1e20");
  EXPECT_EQ(list["items"][0]["error"],
            "stored CronJob: spec.startingDeadlineSeconds: expected integer, got number");
  EXPECT_EQ(list["items"][0]["uid"], "uid-deadline-1e20");
  EXPECT_EQ(list["items"][2]["name"], "good");
  EXPECT_EQ(list["items"][2]["schedule"], "*/5 * * * *");

  // The one CronJob's own queries answer with its error; the others' are unaffected.
  EXPECT_EQ(Cli("state team/good --at 2024-05-01T01:00:00Z -o json" + flags_).exit_code, 0);
}

TEST(DecideLimits, DeepInputIsAnErrorNotACrash) {
  for (size_t levels : {size_t{10000 - 4}, size_t{10000 - 3}, size_t{50000}, size_t{100000}}) {
    const std::string input =
        R"({"now":"2024-05-01T00:07:00Z","cronJob":)" + DeepCronJob("deep", levels) + "}";
    cli_test::CliOptions o;
    o.stdin_text = input;
    const CliResult r = cli_test::Run({CRONLEDGER_BIN, "decide", "--input", "-"}, o);
    model::Json out = ParseOut(r.out);
    if (levels + 4 <= 10000) {
      EXPECT_EQ(r.exit_code, 0) << levels << ": " << r.out.substr(0, 300);
      EXPECT_TRUE(out["error"].is_null()) << levels;
    } else {
      EXPECT_EQ(r.exit_code, 2) << levels;
      EXPECT_NE(out["error"].get<std::string>().find("over limit: JSON nesting deeper than"),
                std::string::npos)
          << out["error"];
    }
  }
}

}  // namespace
}  // namespace cronledger::audit
