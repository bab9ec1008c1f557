// `cronledger audit`, `report adherence` and `serve` end to end over a store recorded by
// `cronledger simulate deploy/samples` (the real controller loop).
#include "tests/audit/cli.h"

#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "model/json.h"
#include "store/test_util.h"

namespace cronledger::audit {
namespace {

using testing::Cli;
using testing::CliResult;

model::Json Json(const CliResult& r) {
  auto j = model::ParseJson(r.out);
  EXPECT_TRUE(j.ok()) << r.out;
  return j.ok() ? *j : model::Json::object();
}

class AuditCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const CliResult sim = Cli("simulate " + testing::SourceDir() +
                              "/deploy/samples --duration 13h -o json --data-dir " + data_);
    ASSERT_EQ(sim.exit_code, 0) << sim.out;
    flags_ = " --data-dir " + data_;
  }
  store::testing::TempDir dir_;
  std::string data_ = dir_.Sub("data");
  std::string flags_;
};

TEST_F(AuditCli, QueriesFiltersFormatsAndPages) {
  model::Json one = Json(Cli("audit --cronjob platform/legacy-migration -o json" + flags_));
  ASSERT_FALSE(one["items"].empty());
  size_t suspended = 0;
  for (const auto& d : one["items"]) {
    EXPECT_EQ(d["cronJob"]["name"], "legacy-migration");
    if (d["action"] == "skipped" && d["reason"] == "Suspended") ++suspended;
  }
  EXPECT_GT(suspended, 0u);
  // The same records through the action/reason index, narrowed to the namespace in memory.
  model::Json by_reason =
      Json(Cli("audit --action skipped --reason Suspended -n platform -o json" + flags_));
  EXPECT_EQ(by_reason["items"].size(), suspended);

  const CliResult csv = Cli("audit -n platform --action createJob -o csv" + flags_);
  ASSERT_EQ(csv.exit_code, 0);
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n')),
            "seq,time,namespace,name,action,scheduledTime,reason,job");

  model::Json counts = Json(Cli("audit --count -o json" + flags_));
  uint64_t total = 0;
  for (const auto& c : counts["items"]) total += c["count"].get<uint64_t>();
  EXPECT_EQ(total, Json(Cli("audit -o json" + flags_))["items"].size());

  // Pages: --limit prints the next token on stderr; following it yields the rest.
  const CliResult first = Cli("audit -n finance --limit 3 -o json" + flags_, true);
  const size_t at = first.out.find("more results: --continue ");
  ASSERT_NE(at, std::string::npos) << first.out;
  const size_t eol = first.out.find('\n', at);
  const std::string token = first.out.substr(at + 25, eol - at - 25);
  // stderr (the hint) is unbuffered and stdout is flushed at exit, so the hint may come first:
  // the JSON is the output without the hint line, wherever it is.
  std::string page1_text = first.out;
  page1_text.erase(at, eol == std::string::npos ? std::string::npos : eol - at + 1);
  auto page1_parsed = model::ParseJson(page1_text);
  ASSERT_TRUE(page1_parsed.ok()) << first.out;
  model::Json page1 = *page1_parsed;
  model::Json rest = Json(Cli("audit -n finance --continue " + token + " -o json" + flags_));
  model::Json all = Json(Cli("audit -n finance -o json" + flags_));
  ASSERT_EQ(page1["items"].size(), 3u);
  ASSERT_EQ(page1["items"].size() + rest["items"].size(), all["items"].size());
  EXPECT_EQ(rest["items"][0], all["items"][3]);

  EXPECT_EQ(Cli("audit --since yesterday" + flags_).exit_code, 2);
  EXPECT_EQ(Cli("audit --action explode" + flags_).exit_code, 2);
  EXPECT_EQ(Cli("audit --data-dir " + dir_.Sub("missing")).exit_code, 1);
}

TEST_F(AuditCli, AdherenceReportAccountsForEveryFireTime) {
  const CliResult r = Cli("report adherence -o json" + flags_);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  model::Json j = Json(r);
  ASSERT_GE(j["items"].size(), 5u);
  for (const auto& it : j["items"]) {
    SCOPED_TRACE(it.dump());
    // The controller records a terminal record for every fire time (DESIGN.md §4). Known gap:
    // the newest fire time of a suspended CronJob is held by the reconciler as its pending slot
    // (it may still start if resumed in time) and has no terminal record yet; the report does
    // not read the accounting state, so it counts that one fire time as unaccounted.
    const bool suspended = it["name"] == "legacy-migration";
    EXPECT_LE(it["unaccounted"].get<uint64_t>(), suspended ? 1u : 0u);
    EXPECT_EQ(it["unexpected"], 0);
    EXPECT_EQ(it["expected"].get<uint64_t>(),
              it["created"].get<uint64_t>() + it["skipped"].get<uint64_t>() +
                  it["pending"].get<uint64_t>() + it["unaccounted"].get<uint64_t>());
    if (suspended) {
      EXPECT_EQ(it["created"], 0);
      EXPECT_EQ(it["skippedByReason"].value("Suspended", 0u) + it["unaccounted"].get<uint64_t>(),
                it["expected"].get<uint64_t>());
    }
  }
  const CliResult table = Cli("report adherence" + flags_);
  EXPECT_NE(table.out.find("adherence"), std::string::npos);
  EXPECT_EQ(
      Cli("report adherence --since 2030-01-01T00:00:00Z --until 2029-01-01T00:00:00Z" + flags_)
          .exit_code,
      2);
  EXPECT_EQ(Cli("report nonsense" + flags_).exit_code, 2);
}

TEST_F(AuditCli, ServeAnswersWithTheTokenAndStopsOnSigterm) {
  std::ofstream(dir_.Sub("token")) << "e2e-token\n";
  testing::ServeProcess serve(data_, dir_.Sub("token"));
  ASSERT_NE(serve.port(), 0) << "serve did not start";
  auto get = [&](const std::string& target, const std::string& token) {
    Poco::Net::HTTPClientSession s("127.0.0.1", static_cast<Poco::UInt16>(serve.port()));
    Poco::Net::HTTPRequest req("GET", target, Poco::Net::HTTPMessage::HTTP_1_1);
    if (!token.empty()) req.set("Authorization", "Bearer " + token);
    s.sendRequest(req);
    Poco::Net::HTTPResponse resp;
    std::ostringstream out;
    Poco::StreamCopier::copyStream(s.receiveResponse(resp), out);
    return std::pair{static_cast<int>(resp.getStatus()), out.str()};
  };
  EXPECT_EQ(get("/healthz", "").first, 200);
  EXPECT_EQ(get("/v1/cronjobs", "").first, 401);
  auto [status, body] = get("/v1/cronjobs?namespace=platform", "e2e-token");
  ASSERT_EQ(status, 200);
  auto j = model::ParseJson(body);
  ASSERT_TRUE(j.ok());
  EXPECT_GE((*j)["items"].size(), 3u);
  auto why = get("/v1/why?cronjob=platform/legacy-migration&at=2026-11-01T03:00:00Z", "e2e-token");
  EXPECT_EQ(why.first, 200) << why.second;
  EXPECT_EQ(serve.Stop(), 0);
}

}  // namespace
}  // namespace cronledger::audit
