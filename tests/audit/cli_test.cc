// `cronledger audit`, `report adherence` and `serve` end to end over a store recorded by
// `cronledger simulate deploy/samples` (the real controller loop).
#include "tests/testing/cli.h"

#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "model/json.h"
#include "store/test_util.h"
#include "tests/audit/divergence_store.h"
#include "tests/audit/serve.h"

namespace cronledger::audit {
namespace {

using cli_test::Cli;
using cli_test::CliResult;

model::Json Json(const CliResult& r) {
  auto j = model::ParseJson(r.out);
  EXPECT_TRUE(j.ok()) << r.out;
  return j.ok() ? *j : model::Json::object();
}

// GET target on 127.0.0.1:port; {status, body}.
std::pair<int, std::string> Get(int port, const std::string& target, const std::string& token) {
  Poco::Net::HTTPClientSession s("127.0.0.1", static_cast<Poco::UInt16>(port));
  Poco::Net::HTTPRequest req("GET", target, Poco::Net::HTTPMessage::HTTP_1_1);
  if (!token.empty()) req.set("Authorization", "Bearer " + token);
  s.sendRequest(req);
  Poco::Net::HTTPResponse resp;
  std::ostringstream out;
  Poco::StreamCopier::copyStream(s.receiveResponse(resp), out);
  return {static_cast<int>(resp.getStatus()), out.str()};
}

class AuditCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const CliResult sim = Cli("simulate " + cli_test::SourceDir() +
                              "/deploy/samples --duration 13h -o json --data-dir " + data_);
    ASSERT_EQ(sim.exit_code, 0) << sim.out;
    flags_ = " --data-dir " + data_;
  }
  // An audit store laid out as `cronledger audit-store` keeps it (D/sources/<source>/, one ledger
  // per replica): two copies of the simulated store, each with the sample divergences.
  std::string MakeAuditStore() {
    const std::string store = dir_.Sub("audit-store");
    std::filesystem::create_directories(store + "/sources");
    for (const std::string source : {"replica-b", "replica-a"}) {
      const std::string copy = store + "/sources/" + source;
      std::filesystem::copy(data_, copy, std::filesystem::copy_options::recursive);
      testing::AddSampleDivergences(copy);
    }
    return store;
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
    // The controller records a terminal record for every fire time (docs/design.md §4). The newest
    // fire time of a suspended CronJob is held by the reconciler as its pending slot (it may
    // still start if resumed in time): the report reads the accounting state and counts it as
    // pending (held), not unaccounted.
    const bool suspended = it["name"] == "legacy-migration";
    EXPECT_EQ(it["unaccounted"], 0);
    EXPECT_EQ(it["unexpected"], 0);
    EXPECT_LE(it["pendingHeld"].get<uint64_t>(), it["pending"].get<uint64_t>());
    EXPECT_EQ(it["expected"].get<uint64_t>(),
              it["created"].get<uint64_t>() + it["skipped"].get<uint64_t>() +
                  it["pending"].get<uint64_t>() + it["unaccounted"].get<uint64_t>());
    if (suspended) {
      EXPECT_EQ(it["created"], 0);
      EXPECT_EQ(it["pendingHeld"], 1);
      EXPECT_EQ(it["skippedByReason"].value("Suspended", 0u) + it["pending"].get<uint64_t>(),
                it["expected"].get<uint64_t>());
    }
  }
  // The held fire time's slot says why it is held.
  model::Json legacy =
      Json(Cli("report adherence --cronjob platform/legacy-migration --slots -o json" + flags_));
  size_t held = 0;
  for (const auto& slot : legacy["items"][0]["slots"]) {
    if (slot.value("held", false)) {
      ++held;
      EXPECT_EQ(slot["status"], "pending");
      EXPECT_EQ(slot["reason"], "Suspended");
    }
  }
  EXPECT_EQ(held, 1u);
  const CliResult table = Cli("report adherence" + flags_);
  EXPECT_NE(table.out.find("adherence"), std::string::npos);
  EXPECT_EQ(
      Cli("report adherence --since 2030-01-01T00:00:00Z --until 2029-01-01T00:00:00Z" + flags_)
          .exit_code,
      2);
  EXPECT_EQ(Cli("report nonsense" + flags_).exit_code, 2);
}

// Shadow-mode divergences through every reader: `divergences` and /v1/divergences print the same
// items, `report adherence` counts them per CronJob and in total in every format.
TEST_F(AuditCli, DivergencesAreListedAndCountedByEveryReader) {
  const testing::AddedDivergences added = testing::AddSampleDivergences(data_);
  const model::Json listed = Json(Cli("divergences -o json" + flags_));
  ASSERT_EQ(listed["items"].size(), 4u) << listed;
  EXPECT_EQ(listed["items"][1]["kind"], "LateRun");
  EXPECT_EQ(listed["items"][1]["detail"]["skewSeconds"], 190);
  const model::Json heartbeat =
      Json(Cli("divergences --cronjob platform/heartbeat --kind UnexpectedJob -o json" + flags_));
  ASSERT_EQ(heartbeat["items"].size(), 1u);
  EXPECT_EQ(heartbeat["items"][0]["job"], "heartbeat-extra");
  const CliResult bad = Cli("divergences --kind Late" + flags_, true);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.out.find("--kind: unknown divergence kind \"Late\""), std::string::npos) << bad.out;

  model::Json report = Json(Cli("report adherence -o json" + flags_));
  EXPECT_EQ(report["totals"]["divergencesByKind"],
            (model::Json{{"MissedRun", 1}, {"LateRun", 1}, {"UnexpectedJob", 2}}));
  std::map<std::string, model::Json> rows;
  for (const auto& it : report["items"]) {
    rows[it["namespace"].get<std::string>() + "/" + it["name"].get<std::string>()] =
        it["divergencesByKind"];
  }
  EXPECT_EQ(rows["platform/cache-warmer"],
            (model::Json{{"MissedRun", 1}, {"LateRun", 1}, {"UnexpectedJob", 0}}));
  EXPECT_EQ(rows["platform/heartbeat"],
            (model::Json{{"MissedRun", 0}, {"LateRun", 0}, {"UnexpectedJob", 1}}));
  EXPECT_EQ(rows["finance/fx-rates"],
            (model::Json{{"MissedRun", 0}, {"LateRun", 0}, {"UnexpectedJob", 0}}));
  // A window that ends before the unexpected Job counts only cache-warmer's two.
  report =
      Json(Cli("report adherence -o json --until " + FormatRfc3339(added.unexpected_at) + flags_));
  EXPECT_EQ(report["totals"]["divergencesByKind"],
            (model::Json{{"MissedRun", 1}, {"LateRun", 1}, {"UnexpectedJob", 0}}));
  const model::Json slots =
      Json(Cli("report adherence --cronjob platform/cache-warmer --slots -o json" + flags_));
  ASSERT_EQ(slots["items"][0]["divergences"].size(), 2u);
  EXPECT_EQ(slots["items"][0]["divergences"][0], listed["items"][0]);
  const CliResult csv = Cli("report adherence -o csv" + flags_);
  const std::string header = csv.out.substr(0, csv.out.find('\n'));
  EXPECT_EQ(header.substr(header.rfind(',') + 1), "divergencesByKind") << header;
  EXPECT_NE(csv.out.find("\"{\"\"LateRun\"\":1,\"\"MissedRun\"\":1,\"\"UnexpectedJob\"\":0}\""),
            std::string::npos)
      << csv.out;
  EXPECT_NE(Cli("report adherence" + flags_)
                .out.find("; divergences MissedRun 1, LateRun 1, UnexpectedJob 2\n"),
            std::string::npos);
  const std::string yaml = Cli("report adherence -o yaml" + flags_).out;
  EXPECT_NE(yaml.find("\ntotals:\n"), std::string::npos) << yaml.substr(0, 400);
  EXPECT_NE(yaml.find("\"UnexpectedJob\": 2\n"), std::string::npos);

  std::ofstream(dir_.Sub("token")) << "div-token\n";
  ServeProcess serve(data_, dir_.Sub("token"));
  ASSERT_NE(serve.port(), 0) << "serve did not start";
  auto [status, body] = Get(serve.port(), "/v1/divergences?limit=1000", "div-token");
  ASSERT_EQ(status, 200) << body;
  auto served = model::ParseJson(body);
  ASSERT_TRUE(served.ok());
  EXPECT_EQ((*served)["items"], listed["items"]) << "one encoder for the command and the API";
  auto [bad_status, bad_body] = Get(serve.port(), "/v1/divergences?kind=Late", "div-token");
  EXPECT_EQ(bad_status, 400) << bad_body;
  EXPECT_EQ(Get(serve.port(), "/v1/divergences?namespace=nobody", "div-token").second,
            "{\"items\":[],\"metadata\":{}}\n");
  EXPECT_EQ(serve.Stop(), 0);
}

TEST_F(AuditCli, ServeAnswersWithTheTokenAndStopsOnSigterm) {
  std::ofstream(dir_.Sub("token")) << "e2e-token\n";
  ServeProcess serve(data_, dir_.Sub("token"));
  ASSERT_NE(serve.port(), 0) << "serve did not start";
  auto get = [&](const std::string& target, const std::string& token) {
    return Get(serve.port(), target, token);
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

// `cronledger ingest` holds the store open (RocksDB's lock) while the test feeds it CronJobs on
// stdin; `audit`, `report` and `serve` open it read-only beside it and see its commits. Its own
// store: one simulated hour (the fixture's 13 hours are not needed here).
TEST(AuditCliHeldStore, AuditReportAndServeWorkWhileAnotherProcessHoldsTheStore) {
  store::testing::TempDir dir;
  const std::string data = dir.Sub("data");
  const std::string flags = " --data-dir " + data;
  const CliResult sim =
      Cli("simulate " + cli_test::SourceDir() + "/deploy/samples --duration 1h -o json" + flags);
  ASSERT_EQ(sim.exit_code, 0) << sim.out;
  auto cron_job = [](const std::string& name) {
    return R"({"type":"ADDED","object":{"apiVersion":"batch/v1","kind":"CronJob","metadata":{)"
           R"("name":")" +
           name + R"(","namespace":"audit-e2e","uid":"uid-)" + name +
           R"(","resourceVersion":"9000)" + std::to_string(name.size()) +
           R"(","creationTimestamp":"2026-11-01T00:00:00Z"},"spec":{"schedule":"0 * * * *",)"
           R"("jobTemplate":{"spec":{"template":{"spec":{"containers":[]}}}}},"status":{}}})"
           "\n";
  };
  cli_test::ChildProcess writer({CRONLEDGER_BIN, "ingest", "--from", "-", "--data-dir", data,
                                 "--batch", "1", "--ack", "--source-id", "e2e"},
                                "", /*quiet=*/false, /*pipe_stdin=*/true);
  ASSERT_TRUE(writer.WriteStdin(cron_job("first")));
  ASSERT_TRUE(writer.WaitForLine("committed ").has_value()) << "ingest did not commit";
  // The writer holds the lock now: a second writable open would fail.
  const CliResult count = Cli("audit --cronjob platform/heartbeat --count -o json" + flags);
  ASSERT_EQ(count.exit_code, 0) << count.out;
  EXPECT_FALSE(Json(count)["items"].empty());
  model::Json first = Json(Cli("report adherence --cronjob audit-e2e/first -o json" + flags));
  ASSERT_EQ(first["items"].size(), 1u) << first.dump();
  EXPECT_EQ(first["items"][0]["inView"], true);  // the writer's latest commit is visible

  std::ofstream(dir.Sub("token")) << "held-token\n";
  ServeProcess serve(data, dir.Sub("token"), {"--refresh", "0s"});
  ASSERT_NE(serve.port(), 0) << "serve did not start beside the writer";
  auto names = [&] {
    auto [status, body] = Get(serve.port(), "/v1/cronjobs?namespace=audit-e2e", "held-token");
    EXPECT_EQ(status, 200) << body;
    std::vector<std::string> out;
    auto j = model::ParseJson(body);
    if (j.ok()) {
      for (const auto& it : (*j)["items"]) out.push_back(it["name"].get<std::string>());
    }
    return out;
  };
  EXPECT_EQ(names(), (std::vector<std::string>{"first"}));
  // A commit made while serve runs is in its next answer (--refresh 0s: catch up per read).
  ASSERT_TRUE(writer.WriteStdin(cron_job("second")));
  ASSERT_TRUE(writer.WaitForLine("committed ").has_value());
  EXPECT_EQ(names(), (std::vector<std::string>{"first", "second"}));
  EXPECT_EQ(Get(serve.port(), "/readyz", "").first, 200);
  EXPECT_EQ(serve.Stop(), 0);

  // Backup and retention need the write lock: the writer does them through its admin socket.
  const std::string backup = dir.Sub("backup");
  const CliResult backed_up = Cli("backup --to " + backup + flags, /*merge_stderr=*/true);
  ASSERT_EQ(backed_up.exit_code, 0) << backed_up.out;
  EXPECT_NE(backed_up.out.find("written by the process that holds"), std::string::npos)
      << backed_up.out;
  EXPECT_NE(backed_up.out.find("backup written to " + backup), std::string::npos);
  model::Json copy =
      Json(Cli("report adherence --cronjob audit-e2e/second -o json --data-dir " + backup));
  ASSERT_EQ(copy["items"].size(), 1u) << copy.dump();  // the latest commit is in the backup
  cli_test::CliOptions capture;
  capture.stderr_mode = cli_test::Stderr::kCapture;
  const CliResult again =
      cli_test::RunShell(CRONLEDGER_BIN, "backup --to " + backup + flags, capture);
  EXPECT_EQ(again.exit_code, 1);  // the holder's error, passed on
  EXPECT_FALSE(again.err.empty());
  model::Json pruned = Json(Cli("retention --log-max-age 87600h -o json" + flags));
  ASSERT_EQ(pruned["items"].size(), 1u) << pruned.dump();
  EXPECT_EQ(pruned["items"][0]["dryRun"], false);
  EXPECT_EQ(pruned["items"][0]["inputsPruned"], 0);  // nothing is ten years old

  writer.CloseStdin();
  EXPECT_EQ(writer.Wait(), 0);
  // The writer is gone, and so is its socket: the commands open the ledger themselves again.
  EXPECT_FALSE(std::filesystem::exists(data + "/admin.sock"));
  const CliResult local = Cli("backup --to " + dir.Sub("backup2") + flags, /*merge_stderr=*/true);
  ASSERT_EQ(local.exit_code, 0) << local.out;
  EXPECT_EQ(local.out.find("written by the process that holds"), std::string::npos);
}

// An audit store laid out as `cronledger audit-store` keeps it (D/sources/<source>/, one ledger
// per replica): `divergences` lists every source's records in (time, source, seq) order, each with
// its source, and --limit applies to the merged list.
TEST_F(AuditCli, DivergencesOfAnAuditStoreNameTheirSource) {
  const std::string store = MakeAuditStore();
  const model::Json merged = Json(Cli("divergences -o json --data-dir " + store));
  ASSERT_EQ(merged["items"].size(), 8u) << merged;
  // Both copies hold the same records: per source in seq order, at a time the first source first.
  std::map<std::string, std::vector<uint64_t>> seqs;
  for (const model::Json& item : merged["items"]) {
    seqs[item["source"].get<std::string>()].push_back(item["seq"].get<uint64_t>());
  }
  ASSERT_EQ(seqs.size(), 2u);
  EXPECT_EQ(seqs["replica-a"], seqs["replica-b"]);
  EXPECT_TRUE(std::is_sorted(seqs["replica-a"].begin(), seqs["replica-a"].end()));
  EXPECT_EQ(merged["items"][0]["source"], "replica-a");
  EXPECT_EQ(merged["items"][1]["source"], "replica-b");
  const model::Json one =
      Json(Cli("divergences -o json --data-dir " + store + "/sources/replica-a"));
  ASSERT_EQ(one["items"].size(), 4u);
  EXPECT_FALSE(one["items"][0].contains("source"));
  EXPECT_EQ(one["items"][0]["kind"], merged["items"][0]["kind"]);
  const model::Json limited = Json(Cli("divergences --limit 3 -o json --data-dir " + store));
  EXPECT_EQ(limited["items"].size(), 3u);
  const CliResult csv = Cli("divergences --kind LateRun -o csv --data-dir " + store);
  ASSERT_EQ(csv.exit_code, 0) << csv.out;
  EXPECT_NE(csv.out.find(",source\n"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find(",replica-b\n"), std::string::npos) << csv.out;

  // `export` writes one bundle per source (a bundle set), `checkpoint` every copy's heads; a
  // plain replay, which prints one stream, is refused naming how to pick a source.
  const CliResult exported = Cli("export --data-dir " + store);
  ASSERT_EQ(exported.exit_code, 0);
  EXPECT_EQ(exported.out.rfind("{\"bundleSet\":\"cronledger\"", 0), 0u);
  EXPECT_NE(exported.out.find("\n{\"section\":\"replica-a\"}\n"), std::string::npos);
  EXPECT_NE(exported.out.find("\n{\"section\":\"replica-b\"}\n"), std::string::npos);
  const model::Json heads = Json(Cli("checkpoint -o json --data-dir " + store));
  ASSERT_EQ(heads["items"].size(), 4u);
  EXPECT_EQ(heads["items"][0]["copyOf"], "replica-a");
  EXPECT_EQ(heads["items"][2]["copyOf"], "replica-b");
  const CliResult refused = Cli("replay --data-dir " + store, true);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_NE(refused.out.find("--data-dir DIR/sources/<source>"), std::string::npos) << refused.out;
}

// `serve` on an audit store answers every route over all its sources, as the commands do on it:
// the same items as `divergences` and `audit`, each with its source, merged paging, the merged
// report, each CronJob once from its owner's view, `why` across sources, per-source metrics.
TEST_F(AuditCli, ServeOnAnAuditStoreAnswersOverEverySource) {
  const std::string store = MakeAuditStore();
  std::ofstream(dir_.Sub("token")) << "store-token\n";
  ServeProcess serve(store, dir_.Sub("token"));
  ASSERT_NE(serve.port(), 0) << "serve did not start on the audit store";
  auto get = [&](const std::string& target) {
    auto [status, body] = Get(serve.port(), target, "store-token");
    EXPECT_EQ(status, 200) << target << ": " << body;
    auto j = model::ParseJson(body);
    EXPECT_TRUE(j.ok()) << body;
    return j.ok() ? *j : model::Json::object();
  };
  EXPECT_EQ(Get(serve.port(), "/readyz", "").first, 200);

  // Divergences: the command's items; pages of 3 joined are the whole list.
  const model::Json listed = Json(Cli("divergences -o json --data-dir " + store));
  ASSERT_EQ(listed["items"].size(), 8u);
  EXPECT_EQ(get("/v1/divergences?limit=1000")["items"], listed["items"]);
  model::Json paged = model::Json::array();
  std::string target = "/v1/divergences?limit=3";
  for (int page = 0; page < 10; ++page) {
    const model::Json j = get(target);
    for (const model::Json& item : j["items"]) paged.push_back(item);
    if (!j["metadata"].contains("continue")) break;
    target = "/v1/divergences?limit=3&continue=" + j["metadata"]["continue"].get<std::string>();
  }
  EXPECT_EQ(paged, listed["items"]);

  // Decisions: the command's merged records, each with its source; both copies' records.
  const std::string cj = "platform/legacy-migration";
  const model::Json audited = Json(Cli("audit --cronjob " + cj + " -o json --data-dir " + store));
  const model::Json decisions = get("/v1/decisions?cronjob=" + cj + "&limit=1000");
  EXPECT_EQ(decisions["items"], audited["items"]);
  const model::Json one =
      Json(Cli("audit --cronjob " + cj + " -o json --data-dir " + store + "/sources/replica-a"));
  EXPECT_EQ(decisions["items"].size(), 2 * one["items"].size());
  ASSERT_FALSE(decisions["items"].empty());
  EXPECT_EQ(decisions["items"][0]["source"], "replica-a");
  EXPECT_EQ(decisions["items"][1]["source"], "replica-b");

  // The report: the command's, each fire time counted once.
  const std::string window = "since=2026-11-01T00:00:00Z&until=2026-11-02T00:00:00Z";
  const model::Json report = get("/v1/reports/adherence?" + window);
  const model::Json cli_report =
      Json(Cli("report adherence -o json --since 2026-11-01T00:00:00Z --until "
               "2026-11-02T00:00:00Z --data-dir " +
               store));
  EXPECT_GT(report["totals"]["expected"].get<uint64_t>(), 0u) << report["totals"];
  EXPECT_EQ(report["totals"], cli_report["totals"]);
  EXPECT_EQ(report["items"], cli_report["items"]);

  // CronJobs: each once, from its owner's view (both copies decided them alike: the first).
  const model::Json listed_cronjobs = get("/v1/cronjobs?namespace=platform");
  ASSERT_GE(listed_cronjobs["items"].size(), 3u);
  for (const model::Json& item : listed_cronjobs["items"]) {
    EXPECT_EQ(item["source"], "replica-a") << item;
  }
  const model::Json detail = get("/v1/cronjobs/" + cj);
  EXPECT_EQ(detail["source"], "replica-a");
  ASSERT_EQ(detail["otherSources"].size(), 1u);
  EXPECT_EQ(detail["otherSources"][0]["source"], "replica-b");
  EXPECT_EQ(detail["otherSources"][0]["exists"], true);
  uint64_t counted = 0;
  for (const model::Json& c : detail["decisionCounts"]) counted += c["count"].get<uint64_t>();
  EXPECT_EQ(counted, decisions["items"].size());
  const model::Json timeline = get("/v1/cronjobs/" + cj + "/timeline?" + window);
  ASSERT_FALSE(timeline["slots"].empty());
  bool also = false;
  for (const model::Json& slot : timeline["slots"]) {
    EXPECT_EQ(slot["source"], "replica-a") << slot;
    also = also ||
           (slot.contains("alsoDecidedBy") && slot["alsoDecidedBy"][0]["source"] == "replica-b");
  }
  EXPECT_TRUE(also) << timeline;

  // why: from the source that recorded the fire time, the other named.
  const model::Json why = get("/v1/why?cronjob=" + cj + "&at=2026-11-01T03:00:00Z");
  EXPECT_EQ(why["facts"]["source"], "replica-a") << why;
  ASSERT_EQ(why["facts"]["otherSources"].size(), 1u) << why;
  EXPECT_EQ(why["sentences"][0], "From the ledger of source replica-a.");

  // Metrics: each copy's last seqs, labelled.
  auto [mstatus, metrics] = Get(serve.port(), "/metrics", "store-token");
  EXPECT_EQ(mstatus, 200);
  EXPECT_NE(metrics.find("\ncronledger_ledger_last_input_seq{source=\"replica-a\"} "),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("\ncronledger_ledger_last_decision_seq{source=\"replica-b\"} "),
            std::string::npos)
      << metrics;
  EXPECT_EQ(serve.Stop(), 0);
}

}  // namespace
}  // namespace cronledger::audit
