// The HTTP server on an ephemeral port: auth over the wire, 405, body and URI limits, HEAD,
// pages requested over HTTP, and a clean Stop.
#include "audit/server.h"

#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/StreamCopier.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "audit/testing.h"
#include "kube/testing/raw_http_client.h"

namespace cronledger::audit {
namespace {

using model::DecisionAction;
using testing::At;

struct Reply {
  int status;
  std::string body;
  std::string content_type;
};

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto db = model::OpenSystemTimeZoneDb({});
    ASSERT_TRUE(db.ok());
    tzdb_ = std::move(*db);
    std::ofstream(dir_.Sub("token")) << "tok-123\n";
    h_.AddCronJob("ns", "a", "0 * * * *", At(0, 30));
    for (int hour = 1; hour <= 5; ++hour) {
      h_.Decide("ns", "a", At(hour, 0, 2), DecisionAction::kCreateJob, At(hour));
    }
    ServerOptions o;
    o.listen = "127.0.0.1:0";
    o.api.token_file = dir_.Sub("token");
    o.api.data_dir = h_.path();
    auto s = Server::Start(h_.ledger(), *tzdb_, o);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
    ASSERT_NE(server_->port(), 0);
  }

  Reply Send(const std::string& method, const std::string& target, const std::string& token,
             const std::string& body = "") {
    Poco::Net::HTTPClientSession session("127.0.0.1", server_->port());
    Poco::Net::HTTPRequest req(method, target, Poco::Net::HTTPMessage::HTTP_1_1);
    if (!token.empty()) req.set("Authorization", "Bearer " + token);
    if (!body.empty()) req.setContentLength(static_cast<std::streamsize>(body.size()));
    session.sendRequest(req) << body;
    Poco::Net::HTTPResponse resp;
    std::istream& in = session.receiveResponse(resp);
    std::ostringstream out;
    Poco::StreamCopier::copyStream(in, out);
    return {static_cast<int>(resp.getStatus()), out.str(), resp.getContentType()};
  }

  testing::HandLedger h_;
  store::testing::TempDir dir_;
  std::unique_ptr<model::TimeZoneDb> tzdb_;
  std::unique_ptr<Server> server_;
};

// The defect: four idle connections stalled `serve` for 60 s (its four threads each waited for a
// request). Now the API answers beside them at once; 3 s is a generous liveness bound.
TEST_F(ServerTest, IdleConnectionsDoNotStallTheApi) {
  std::vector<kube::testing::RawConnection> idle;
  for (int i = 0; i < 32; ++i) {
    auto c = kube::testing::RawConnection::Open(server_->port(), "127.0.0.2");
    ASSERT_TRUE(c.has_value());
    idle.push_back(std::move(*c));
  }
  auto r = kube::testing::GetWithin(server_->port(), "/healthz", std::chrono::seconds(3));
  ASSERT_TRUE(r.has_value()) << "the API did not answer beside 32 idle connections";
  EXPECT_EQ(kube::testing::StatusOf(*r), 200);
}

TEST_F(ServerTest, AuthOverTheWire) {
  EXPECT_EQ(Send("GET", "/healthz", "").status, 200);
  EXPECT_EQ(Send("GET", "/v1/decisions", "").status, 401);
  EXPECT_EQ(Send("GET", "/v1/decisions", "tok-12").status, 401);
  Reply ok = Send("GET", "/v1/decisions", "tok-123");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.content_type, "application/json");
  auto j = model::ParseJson(ok.body);
  ASSERT_TRUE(j.ok());
  EXPECT_EQ((*j)["items"].size(), 5u);
  // The error says no more than that a token is needed.
  EXPECT_EQ(Send("GET", "/v1/decisions", "bad").body,
            "{\"error\":\"a valid bearer token is required\"}\n");
}

TEST_F(ServerTest, WritesAreRefusedAndLimitsHold) {
  EXPECT_EQ(Send("POST", "/v1/decisions", "tok-123").status, 405);
  EXPECT_EQ(Send("DELETE", "/v1/cronjobs/ns/a", "tok-123").status, 405);
  EXPECT_EQ(Send("GET", "/v1/decisions", "tok-123", "a body").status, 413);
  EXPECT_EQ(Send("GET", "/v1/decisions?x=" + std::string(5000, 'y'), "tok-123").status, 414);
  Reply head = Send("HEAD", "/v1/decisions", "tok-123");
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
}

TEST_F(ServerTest, PaginationOverHttpIsStable) {
  std::vector<std::string> times;
  std::string target = "/v1/decisions?cronjob=ns/a&limit=2";
  for (int i = 0; i < 5; ++i) {
    auto j = model::ParseJson(Send("GET", target, "tok-123").body);
    ASSERT_TRUE(j.ok());
    for (const auto& d : (*j)["items"]) times.push_back(d["scheduledTime"].get<std::string>());
    if (!(*j)["metadata"].contains("continue")) break;
    target = "/v1/decisions?cronjob=ns/a&limit=2&continue=" +
             (*j)["metadata"]["continue"].get<std::string>();
  }
  ASSERT_EQ(times.size(), 5u);
  EXPECT_EQ(times.front(), "2026-01-01T01:00:00Z");
  EXPECT_EQ(times.back(), "2026-01-01T05:00:00Z");
}

TEST_F(ServerTest, ServesThePageAndMetrics) {
  Reply page = Send("GET", "/", "");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("<script src=\"/app.js\">"), std::string::npos);
  EXPECT_EQ(Send("GET", "/app.js", "").status, 200);
  Reply metrics = Send("GET", "/metrics", "tok-123");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("cronledger_ledger_disk_bytes "), std::string::npos);
  server_->Stop();
  server_->Stop();  // idempotent
}

TEST(ServerOptions, BadConfigurationIsRefused) {
  testing::HandLedger h;
  auto tzdb = model::OpenSystemTimeZoneDb({});
  ASSERT_TRUE(tzdb.ok());
  ServerOptions o;
  o.listen = "127.0.0.1:0";
  EXPECT_EQ(Server::Start(h.ledger(), **tzdb, o).status().code(), Status::Code::kInvalidArgument);
  o.api.token_file = "/nonexistent";
  o.tls_cert = "cert.pem";
  EXPECT_EQ(Server::Start(h.ledger(), **tzdb, o).status().code(), Status::Code::kInvalidArgument);
  o.tls_key = "/nonexistent/key.pem";
  o.tls_cert = "/nonexistent/cert.pem";
  EXPECT_FALSE(Server::Start(h.ledger(), **tzdb, o).ok());
}

}  // namespace
}  // namespace cronledger::audit
