// The HTTP server of every listener (kube/http_server.h): Poco's TCPServer and HTTPServerConnection
// under a connection table that admits, evicts and times out connections. Poco exceptions end
// here.
#include "kube/http_server.h"

#include <Poco/Exception.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPRequestHandler.h>
#include <Poco/Net/HTTPRequestHandlerFactory.h>
#include <Poco/Net/HTTPServerConnection.h>
#include <Poco/Net/HTTPServerParams.h>
#include <Poco/Net/HTTPServerRequest.h>
#include <Poco/Net/HTTPServerResponse.h>
#include <Poco/Net/SSLException.h>
#include <Poco/Net/SecureServerSocket.h>
#include <Poco/Net/ServerSocket.h>
#include <Poco/Net/SocketAddress.h>
#include <Poco/Net/TCPServer.h>
#include <Poco/Net/TCPServerConnectionFactory.h>
#include <Poco/ThreadPool.h>
#include <pthread.h>
#include <sys/socket.h>

#include <algorithm>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

namespace cronledger::kube {
namespace {

using Poco::Net::StreamSocket;
using SteadyTime = std::chrono::steady_clock::time_point;
using Key = const Poco::Net::SocketImpl*;

Poco::Timespan ToTimespan(Duration d) {
  return Poco::Timespan(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}

// The open connections, keyed by their socket, and the deadlines kept on them: admission and
// eviction on the acceptor thread, busy/idle from the connection threads, expiry on a watchdog
// thread. Socket deadlines are real time by nature, so this reads the steady clock.
class ConnectionTable {
 public:
  explicit ConnectionTable(const HttpServerLimits& limits)
      : limits_(limits), watchdog_([this] { Watch(); }) {}
  ~ConnectionTable() { Close(); }

  // On the acceptor thread, before the connection is queued for a thread: false closes it.
  bool Admit(const StreamSocket& socket) {
    std::string peer;
    try {
      peer = socket.peerAddress().host().toString();
    } catch (const Poco::Exception&) {
      return false;  // gone already
    }
    std::lock_guard l(mu_);
    if (stopped_) return false;
    const SteadyTime now = std::chrono::steady_clock::now();
    if (!MakeRoom(&peer, limits_.max_connections_per_client, now) ||
        !MakeRoom(nullptr, limits_.max_connections, now)) {
      return false;
    }
    entries_.insert_or_assign(socket.impl(), Entry{socket, std::move(peer), false, false, now});
    cv_.notify_one();
    return true;
  }

  // A request head arrived (busy) or its response was sent (waiting for the next request).
  void SetBusy(Key key, bool busy) {
    std::lock_guard l(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.doomed) return;
    it->second.busy = busy;
    it->second.since = std::chrono::steady_clock::now();
    cv_.notify_one();
  }

  void Remove(Key key) {
    std::lock_guard l(mu_);
    entries_.erase(key);
  }

  int Open() const {
    std::lock_guard l(mu_);
    int n = 0;
    for (const auto& [key, e] : entries_) n += e.doomed ? 0 : 1;
    return n;
  }

  // Shuts every connection and stops the watchdog; admits nothing more.
  void Close() {
    {
      std::lock_guard l(mu_);
      if (stopped_) return;
      stopped_ = true;
      const SteadyTime now = std::chrono::steady_clock::now();
      for (auto& [key, e] : entries_) Doom(e, now);
      cv_.notify_one();
    }
    watchdog_.join();
  }

  void Clear() {
    std::lock_guard l(mu_);
    entries_.clear();
  }

 private:
  struct Entry {
    StreamSocket socket;  // keeps the descriptor (and the key) valid while listed
    std::string peer;
    bool busy;
    bool doomed;       // shut down; its thread is on its way out
    SteadyTime since;  // opened, or its last request head or response
  };

  // A raw shutdown(2): it is safe beside a read or write on the connection's own thread, where a
  // TLS shutdown would not be. The blocked call returns, and the connection ends.
  static void Doom(Entry& e, SteadyTime now) {
    if (e.doomed) return;
    ::shutdown(e.socket.impl()->sockfd(), SHUT_RDWR);
    e.doomed = true;
    e.since = now;
  }

  // Under the limit for `peer` (nullptr: every client), or made so by evicting the oldest
  // connection still waiting for its request; false when every one of them is busy.
  bool MakeRoom(const std::string* peer, int limit, SteadyTime now) {
    int open = 0;
    Entry* oldest_waiting = nullptr;
    for (auto& [key, e] : entries_) {
      if (e.doomed || (peer != nullptr && e.peer != *peer)) continue;
      ++open;
      if (!e.busy && (oldest_waiting == nullptr || e.since < oldest_waiting->since)) {
        oldest_waiting = &e;
      }
    }
    if (open < limit) return true;
    if (oldest_waiting == nullptr) return false;
    Doom(*oldest_waiting, now);
    return true;
  }

  void Watch() {
    pthread_setname_np(pthread_self(), "cl-http-watch");
    std::unique_lock l(mu_);
    while (!stopped_) {
      const SteadyTime now = std::chrono::steady_clock::now();
      SteadyTime next = now + std::chrono::seconds(1);
      for (auto it = entries_.begin(); it != entries_.end();) {
        Entry& e = it->second;
        if (e.doomed) {
          // A doomed connection leaves the table when its thread ends. One that never reached a
          // thread (refused by a full dispatcher queue) is dropped here, which closes it.
          if (now - e.since >= limits_.read_timeout) {
            it = entries_.erase(it);
            continue;
          }
          next = std::min(next, e.since + limits_.read_timeout);
        } else {
          const SteadyTime deadline =
              e.since + (e.busy ? limits_.write_timeout : limits_.read_timeout);
          if (deadline <= now) {
            Doom(e, now);
          } else {
            next = std::min(next, deadline);
          }
        }
        ++it;
      }
      cv_.wait_until(l, next);
    }
  }

  const HttpServerLimits limits_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, Entry> entries_;
  bool stopped_ = false;
  std::thread watchdog_;  // last: started once the members above exist
};

class AdmissionFilter final : public Poco::Net::TCPServerConnectionFilter {
 public:
  explicit AdmissionFilter(ConnectionTable& table) : table_(table) {}
  bool accept(const StreamSocket& socket) override { return table_.Admit(socket); }

 private:
  ConnectionTable& table_;
};

class Handler final : public Poco::Net::HTTPRequestHandler {
 public:
  Handler(ConnectionTable& table, Key key, const HttpHandler& handler)
      : table_(table), key_(key), handler_(handler) {}

  void handleRequest(Poco::Net::HTTPServerRequest& req,
                     Poco::Net::HTTPServerResponse& resp) override {
    HttpRequestHead head;
    head.method = req.getMethod();
    head.target = req.getURI();
    head.authorization = req.get("Authorization", "");
    head.peer = req.clientAddress().host().toString();
    head.chunked = req.getChunkedTransferEncoding();
    if (req.hasContentLength()) head.content_length = req.getContentLength64();
    HttpReply r;
    try {
      r = handler_(head);
    } catch (const std::exception&) {
      r = HttpReply{};
      r.status = 500;
      r.body = "internal server error\n";
    }
    // Bodies are never read: the unread bytes must not be parsed as the next request.
    if (head.chunked || head.content_length.value_or(0) > 0) resp.setKeepAlive(false);
    resp.setStatusAndReason(static_cast<Poco::Net::HTTPResponse::HTTPStatus>(r.status));
    resp.setContentType(r.content_type);
    resp.set("X-Content-Type-Options", "nosniff");
    for (const auto& [k, v] : r.headers) resp.set(k, v);
    resp.setContentLength64(static_cast<Poco::Int64>(r.body.size()));
    if (head.method == "HEAD") {
      resp.send();
    } else {
      resp.sendBuffer(r.body.data(), r.body.size());
    }
    table_.SetBusy(key_, false);
  }

 private:
  ConnectionTable& table_;
  const Key key_;
  const HttpHandler& handler_;
};

// One per connection, so that the handler knows its connection's table entry.
class RequestFactory final : public Poco::Net::HTTPRequestHandlerFactory {
 public:
  RequestFactory(ConnectionTable& table, Key key, const HttpHandler& handler)
      : table_(table), key_(key), handler_(handler) {}
  Poco::Net::HTTPRequestHandler* createRequestHandler(
      const Poco::Net::HTTPServerRequest&) override {
    table_.SetBusy(key_, true);
    return new Handler(table_, key_, handler_);
  }

 private:
  ConnectionTable& table_;
  const Key key_;
  const HttpHandler& handler_;
};

class Connection final : public Poco::Net::HTTPServerConnection {
 public:
  Connection(const StreamSocket& socket, Poco::Net::HTTPServerParams::Ptr params,
             ConnectionTable& table, const HttpHandler& handler)
      : HTTPServerConnection(socket, params, new RequestFactory(table, socket.impl(), handler)),
        table_(table),
        key_(socket.impl()) {}
  ~Connection() override { table_.Remove(key_); }

 private:
  ConnectionTable& table_;
  const Key key_;
};

class ConnectionFactory final : public Poco::Net::TCPServerConnectionFactory {
 public:
  ConnectionFactory(Poco::Net::HTTPServerParams::Ptr params, ConnectionTable& table,
                    const HttpHandler& handler)
      : params_(params), table_(table), handler_(handler) {}
  Poco::Net::TCPServerConnection* createConnection(const StreamSocket& socket) override {
    return new Connection(socket, params_, table_, handler_);
  }

 private:
  Poco::Net::HTTPServerParams::Ptr params_;
  ConnectionTable& table_;
  const HttpHandler& handler_;
};

Status CheckLimits(const HttpServerLimits& l) {
  if (l.read_timeout <= Duration::zero() || l.write_timeout <= Duration::zero()) {
    return Status::InvalidArgument("listener timeouts must be positive");
  }
  if (l.max_connections < 1 || l.max_connections_per_client < 1) {
    return Status::InvalidArgument("listener connection limits must be at least 1");
  }
  return Status::Ok();
}

}  // namespace

struct HttpServer::Impl {
  HttpHandler handler;
  uint16_t port = 0;
  std::unique_ptr<ConnectionTable> table;
  std::unique_ptr<Poco::ThreadPool> pool;
  std::unique_ptr<Poco::Net::TCPServer> tcp;
  std::mutex mu;
  bool stopped = false;
};

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpServer::~HttpServer() { Stop(); }

uint16_t HttpServer::port() const { return impl_->port; }

int HttpServer::open_connections() const { return impl_->table->Open(); }

void HttpServer::Stop() {
  std::lock_guard lock(impl_->mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->tcp->stop();     // no more accepts; queued connections are dropped
  impl_->table->Close();  // the running ones are shut
  impl_->pool->joinAll();
  impl_->table->Clear();
}

Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options,
                                                      HttpHandler handler) {
  CL_RETURN_IF_ERROR(CheckLimits(options.limits));
  if (options.tls_cert.empty() != options.tls_key.empty()) {
    return Status::InvalidArgument("--tls-cert and --tls-key go together");
  }
  Poco::Net::SocketAddress addr;
  try {
    addr = Poco::Net::SocketAddress(options.listen);
  } catch (const Poco::Exception& e) {
    return Status::InvalidArgument("listen address \"" + options.listen + "\": " + e.displayText());
  }
  auto impl = std::make_unique<Impl>();
  impl->handler = std::move(handler);
  const HttpServerLimits& limits = options.limits;
  try {
    std::unique_ptr<Poco::Net::ServerSocket> socket;
    if (!options.tls_cert.empty()) {
      Poco::Net::Context::Ptr ctx =
          new Poco::Net::Context(Poco::Net::Context::TLS_SERVER_USE, options.tls_key,
                                 options.tls_cert, "", Poco::Net::Context::VERIFY_NONE);
      ctx->disableProtocols(Poco::Net::Context::PROTO_SSLV2 | Poco::Net::Context::PROTO_SSLV3 |
                            Poco::Net::Context::PROTO_TLSV1 | Poco::Net::Context::PROTO_TLSV1_1);
      socket = std::make_unique<Poco::Net::SecureServerSocket>(addr, 64, ctx);
    } else {
      socket = std::make_unique<Poco::Net::ServerSocket>(addr, 64);
    }
    impl->port = socket->address().port();
    Poco::Net::HTTPServerParams::Ptr params = new Poco::Net::HTTPServerParams;
    // A thread for every admitted connection; the queue only holds a connection for the moment
    // an evicted one's thread takes to end.
    params->setMaxThreads(limits.max_connections);
    params->setMaxQueued(2 * limits.max_connections);
    // Poco's own per-call socket timeouts; the table's deadlines are the binding ones.
    params->setTimeout(ToTimespan(std::max(limits.read_timeout, limits.write_timeout)));
    params->setKeepAlive(true);
    params->setKeepAliveTimeout(ToTimespan(limits.read_timeout));
    params->setMaxKeepAliveRequests(100);
    impl->table = std::make_unique<ConnectionTable>(limits);
    impl->pool = std::make_unique<Poco::ThreadPool>(1, limits.max_connections);
    impl->tcp = std::make_unique<Poco::Net::TCPServer>(
        new ConnectionFactory(params, *impl->table, impl->handler), *impl->pool, *socket, params);
    impl->tcp->setConnectionFilter(new AdmissionFilter(*impl->table));
    impl->tcp->start();
  } catch (const Poco::Net::SSLException& e) {
    return Status::InvalidArgument("TLS: " + e.displayText());
  } catch (const Poco::Exception& e) {
    return Status::IoError("listen on " + options.listen + ": " + e.displayText());
  }
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
}

}  // namespace cronledger::kube
