// The listener under every HTTP endpoint (kube/http_server.h): idle, dribbling and non-reading
// clients are dropped, and a thousand idle connections do not keep a request from being answered.
//
// These tests wait on real sockets. The waits they assert are liveness deadlines, not speed: a
// kubelet probe gives up after 1 s (timeoutSeconds), so an answer must arrive within a few
// seconds however many idle connections are open — the defect they guard against was a 60 s stall
// or no answer at all. The bounds are generous for a loaded test machine.
#include "kube/http_server.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "kube/testing/raw_http_client.h"

namespace cronledger::kube {
namespace {

using testing::GetWithin;
using testing::RawConnection;
using testing::StatusOf;

constexpr Duration kAnswerDeadline = std::chrono::seconds(3);

HttpReply Ok(const HttpRequestHead& head) {
  HttpReply r;
  r.body = "ok " + head.target;
  return r;
}

std::unique_ptr<HttpServer> StartServer(const HttpServerLimits& limits, HttpHandler handler = Ok) {
  HttpServerOptions o;
  o.listen = "127.0.0.1:0";
  o.limits = limits;
  auto s = HttpServer::Start(o, std::move(handler));
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(s).value() : nullptr;
}

TEST(HttpServer, AnswersAndRejectsBadLimits) {
  auto server = StartServer({});
  ASSERT_NE(server, nullptr);
  auto r = GetWithin(server->port(), "/a", kAnswerDeadline);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(StatusOf(*r), 200);
  EXPECT_NE(r->find("ok /a"), std::string::npos);
  EXPECT_NE(r->find("X-Content-Type-Options: nosniff"), std::string::npos);

  HttpServerOptions bad;
  bad.listen = "127.0.0.1:0";
  bad.limits.max_connections = 0;
  EXPECT_EQ(HttpServer::Start(bad, Ok).status().code(), Status::Code::kInvalidArgument);
  bad.limits = {};
  bad.limits.read_timeout = Duration::zero();
  EXPECT_EQ(HttpServer::Start(bad, Ok).status().code(), Status::Code::kInvalidArgument);
  bad.limits = {};
  bad.listen = "nonsense";
  EXPECT_EQ(HttpServer::Start(bad, Ok).status().code(), Status::Code::kInvalidArgument);
}

TEST(HttpServer, AnIdleConnectionIsClosedAfterTheReadTimeout) {
  HttpServerLimits limits;
  limits.read_timeout = std::chrono::milliseconds(300);
  auto server = StartServer(limits);
  ASSERT_NE(server, nullptr);
  auto idle = RawConnection::Open(server->port());
  ASSERT_TRUE(idle.has_value());
  // Without the timeout the server would hold it until Poco's own 30 s receive timeout.
  auto got = idle->ReadUntilClosed(std::chrono::seconds(10));
  ASSERT_TRUE(got.has_value()) << "the server kept an idle connection open";
  EXPECT_EQ(*got, "");
}

TEST(HttpServer, ADribbledRequestIsCutOffAtTheReadTimeout) {
  HttpServerLimits limits;
  limits.read_timeout = std::chrono::milliseconds(500);
  auto server = StartServer(limits);
  ASSERT_NE(server, nullptr);
  auto slow = RawConnection::Open(server->port());
  ASSERT_TRUE(slow.has_value());
  ASSERT_TRUE(slow->Send("GET /x HTTP/1.1\r\nX-Slow: "));
  // One byte every 50 ms keeps every single receive well inside Poco's per-call timeout; only a
  // deadline on the whole head ends it. 200 bytes would take 10 s.
  bool cut = false;
  for (int i = 0; i < 200 && !cut; ++i) {
    cut = !slow->Send("a") || slow->ClosedWithin(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(cut) << "a request dribbled for 10 s was still being read";
}

TEST(HttpServer, AClientThatDoesNotReadIsCutOffAndOthersAreServed) {
  HttpServerLimits limits;
  limits.write_timeout = std::chrono::milliseconds(500);
  const std::string big(64u << 20, 'x');
  auto server = StartServer(limits, [&big](const HttpRequestHead& head) {
    HttpReply r;
    r.body = head.target == "/big" ? big : "small";
    return r;
  });
  ASSERT_NE(server, nullptr);
  auto reader = RawConnection::Open(server->port());
  ASSERT_TRUE(reader.has_value());
  reader->ShrinkReceiveBuffer();
  ASSERT_TRUE(reader->Send("GET /big HTTP/1.1\r\nHost: t\r\n\r\n"));
  // While that answer is stuck in a full socket, another client is served.
  auto other = GetWithin(server->port(), "/small", kAnswerDeadline);
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(StatusOf(*other), 200);
  // The stuck answer is abandoned at the write timeout: once it has passed, reading (quickly now)
  // ends before all 64 MiB.
  std::this_thread::sleep_for(limits.write_timeout * 2);
  reader->GrowReceiveBuffer();
  auto got = reader->ReadUntilClosed(std::chrono::seconds(20));
  ASSERT_TRUE(got.has_value());
  EXPECT_LT(got->size(), big.size());
}

// Opens `n` connections from `source` that never send a byte; stops early if the test process
// runs out of descriptors (the assertion on the count says how many it got).
std::vector<RawConnection> OpenIdle(uint16_t port, int n, const std::string& source) {
  std::vector<RawConnection> out;
  for (int i = 0; i < n; ++i) {
    auto c = RawConnection::Open(port, source);
    if (!c) break;
    out.push_back(std::move(*c));
  }
  return out;
}

TEST(HttpServer, AThousandIdleConnectionsDoNotDelayAnAnswer) {
  ASSERT_GE(testing::RaiseDescriptorLimit(4096), 2100u);
  auto server = StartServer({});  // the defaults: 5 s read timeout, 64 connections, 16 a client
  ASSERT_NE(server, nullptr);
  // From other clients, and from the asking client itself.
  std::vector<RawConnection> idle = OpenIdle(server->port(), 1000, "127.0.0.2");
  ASSERT_EQ(idle.size(), 1000u);
  auto answer = GetWithin(server->port(), "/healthz", kAnswerDeadline);
  ASSERT_TRUE(answer.has_value()) << "no answer within 3 s beside 1000 idle connections";
  EXPECT_EQ(StatusOf(*answer), 200);

  std::vector<RawConnection> mine = OpenIdle(server->port(), 1000, "127.0.0.1");
  ASSERT_EQ(mine.size(), 1000u);
  answer = GetWithin(server->port(), "/healthz", kAnswerDeadline);
  ASSERT_TRUE(answer.has_value()) << "no answer within 3 s beside 1000 idle connections of its own";
  EXPECT_EQ(StatusOf(*answer), 200);
  // The server holds no more than its limits, however many the clients opened.
  EXPECT_LE(server->open_connections(), HttpServerLimits{}.max_connections);
}

// A gate the handler waits on, so that connections stay busy for as long as the test wants.
class Gate {
 public:
  void Wait() {
    std::unique_lock l(mu_);
    ++waiting_;
    cv_.notify_all();
    cv_.wait(l, [this] { return open_; });
  }
  void AwaitWaiting(int n) {
    std::unique_lock l(mu_);
    cv_.wait(l, [&] { return waiting_ >= n; });
  }
  void Open() {
    std::lock_guard l(mu_);
    open_ = true;
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  int waiting_ = 0;
  bool open_ = false;
};

TEST(HttpServer, AClientOverItsLimitWithEveryConnectionBusyIsClosedAtOnce) {
  HttpServerLimits limits;
  limits.max_connections_per_client = 2;
  Gate gate;
  auto server = StartServer(limits, [&gate](const HttpRequestHead& head) {
    if (head.target == "/wait") gate.Wait();
    return Ok(head);
  });
  ASSERT_NE(server, nullptr);
  // Opens the gate before the server stops (it waits for its handlers), whatever fails first.
  struct Opener {
    Gate& gate;
    ~Opener() { gate.Open(); }
  } opener{gate};
  std::vector<RawConnection> busy = OpenIdle(server->port(), 2, "127.0.0.3");
  ASSERT_EQ(busy.size(), 2u);
  for (RawConnection& c : busy) ASSERT_TRUE(c.Send("GET /wait HTTP/1.1\r\nHost: t\r\n\r\n"));
  gate.AwaitWaiting(2);
  // A third from the same client has no waiting connection to replace: refused.
  auto third = RawConnection::Open(server->port(), "127.0.0.3");
  ASSERT_TRUE(third.has_value());
  auto refused = third->ReadUntilClosed(kAnswerDeadline);
  ASSERT_TRUE(refused.has_value()) << "a connection over the client's limit was kept";
  EXPECT_EQ(*refused, "");
  // Another client is not affected.
  auto other = GetWithin(server->port(), "/other", kAnswerDeadline, "127.0.0.4");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(StatusOf(*other), 200);
}

}  // namespace
}  // namespace cronledger::kube
