#include "kube/poco_transport.h"

#include <Poco/Crypto/EVPPKey.h>
#include <Poco/Crypto/X509Certificate.h>
#include <Poco/Exception.h>
#include <Poco/Net/Context.h>
#include <Poco/Net/HTTPClientSession.h>
#include <Poco/Net/HTTPRequest.h>
#include <Poco/Net/HTTPResponse.h>
#include <Poco/Net/HTTPSClientSession.h>
#include <Poco/Net/SSLException.h>
#include <Poco/Net/SSLManager.h>
#include <Poco/Net/SocketImpl.h>
#include <Poco/NumberParser.h>
#include <Poco/StreamCopier.h>
#include <Poco/URI.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <sstream>
#include <utility>

namespace cronledger::kube::internal {
namespace {

using Poco::Net::HTTPClientSession;

// HTTPSession::read is protected; a watch needs the raw body bytes (to see whether the chunked
// stream ended with its terminating chunk), so sessions expose it.
class RawReader {
 public:
  virtual ~RawReader() = default;
  virtual int ReadRaw(char* buffer, std::streamsize length) = 0;
  // Bytes a read returns without waiting: the session's buffer, and with TLS the decrypted bytes
  // OpenSSL holds.
  virtual int Ready() = 0;
};

template <class Base>
class ReadableSession : public Base, public RawReader {
 public:
  using Base::Base;
  int ReadRaw(char* buffer, std::streamsize length) override { return this->read(buffer, length); }
  int Ready() override {
    if (this->buffered() > 0) return this->buffered();
    return this->connected() ? this->socket().available() : 0;
  }
};

std::vector<std::string> SplitPem(const std::string& pem) {
  static const std::string kBegin = "-----BEGIN CERTIFICATE-----";
  std::vector<std::string> out;
  size_t pos = pem.find(kBegin);
  while (pos != std::string::npos) {
    const size_t next = pem.find(kBegin, pos + kBegin.size());
    out.push_back(pem.substr(pos, next == std::string::npos ? std::string::npos : next - pos));
    pos = next;
  }
  return out;
}

// A failure without an HTTP response. An untrusted server certificate is not transient: it gets
// a reason (so it is not retried) and a message that says where the trust comes from.
ApiError FailureFrom(const std::string& what, const Poco::Exception& e) {
  const std::string text = e.displayText();
  if (dynamic_cast<const Poco::Net::CertificateValidationException*>(&e) != nullptr ||
      text.find("certificate verify failed") != std::string::npos) {
    ApiError error = TransportError(
        what +
        ": TLS: the API server's certificate is not trusted by the configured cluster CA "
        "(kubeconfig certificate-authority / certificate-authority-data, or the service "
        "account's ca.crt in-cluster): " +
        text);
    error.reason = "CertificateNotTrusted";
    return error;
  }
  return TransportError(what + ": " + text);
}

Poco::Timespan ToTimespan(Duration d) {
  return Poco::Timespan(std::chrono::duration_cast<std::chrono::microseconds>(d).count());
}

std::optional<int64_t> ParseRetryAfter(const Poco::Net::HTTPResponse& response) {
  if (!response.has("Retry-After")) return std::nullopt;
  int64_t seconds = 0;
  // Only the delta-seconds form; the HTTP-date form is not used by the API server.
  if (Poco::NumberParser::tryParse64(response.get("Retry-After"), seconds)) return seconds;
  return std::nullopt;
}

Result<Poco::Net::Context::Ptr> MakeTlsContext(const KubeConfig& config) {
  try {
    Poco::Net::Context::Params params;
    params.verificationMode = config.insecure_skip_tls_verify ? Poco::Net::Context::VERIFY_NONE
                                                              : Poco::Net::Context::VERIFY_RELAXED;
    params.loadDefaultCAs = config.ca_pem.empty();
    Poco::Net::Context::Ptr ctx =
        new Poco::Net::Context(Poco::Net::Context::TLS_CLIENT_USE, params);
    ctx->requireMinimumProtocol(Poco::Net::Context::PROTO_TLSV1_2);
    if (config.insecure_skip_tls_verify) ctx->enableExtendedCertificateVerification(false);
    const std::vector<std::string> cas = SplitPem(config.ca_pem);
    if (!config.ca_pem.empty() && cas.empty()) {
      return Status::InvalidArgument("certificate authority data holds no PEM certificate");
    }
    for (const std::string& pem : cas) {
      std::istringstream in(pem);
      ctx->addCertificateAuthority(Poco::Crypto::X509Certificate(in));
    }
    if (!config.client_cert_pem.empty()) {
      const std::vector<std::string> chain = SplitPem(config.client_cert_pem);
      if (chain.empty()) return Status::InvalidArgument("client certificate holds no PEM data");
      for (size_t i = 0; i < chain.size(); ++i) {
        std::istringstream in(chain[i]);
        Poco::Crypto::X509Certificate cert(in);
        if (i == 0) {
          ctx->useCertificate(cert);
        } else {
          ctx->addChainCertificate(cert);
        }
      }
      std::istringstream key(config.client_key_pem);
      ctx->usePrivateKey(Poco::Crypto::EVPPKey(nullptr, &key));
    }
    return ctx;
  } catch (const Poco::Exception& e) {
    return Status::InvalidArgument("TLS configuration: " + e.displayText());
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("TLS configuration: ") + e.what());
  }
}

class PocoHttpStream : public HttpStream {
 public:
  PocoHttpStream(std::unique_ptr<HTTPClientSession> session, int code,
                 std::optional<int64_t> retry_after, bool chunked, Duration stall_timeout)
      : session_(std::move(session)),
        reader_(dynamic_cast<RawReader*>(session_.get())),
        code_(code),
        retry_after_(retry_after),
        chunked_(chunked),
        // Zero waits forever, as a zero receive timeout does.
        stall_ms_(
            stall_timeout > Duration::zero()
                ? static_cast<int>(
                      std::chrono::duration_cast<std::chrono::milliseconds>(stall_timeout).count())
                : -1),
        fd_(session_->socket().impl()->sockfd()) {}

  int code() const override { return code_; }
  std::optional<int64_t> retry_after() const override { return retry_after_; }
  bool chunked() const override { return chunked_; }

  ReadResult Read(std::string* out, std::string* error) override {
    char buffer[16384];
    try {
      // The stall deadline is kept here rather than left to the socket's receive timeout: over
      // TLS, Poco waits out SO_RCVTIMEO and then polls for the receive timeout once more, so a
      // silent stream was declared stalled after twice stall_timeout.
      if (reader_->Ready() == 0) {
        pollfd p{fd_, POLLIN, 0};
        int ready = 0;
        do {
          ready = ::poll(&p, 1, stall_ms_);
        } while (ready < 0 && errno == EINTR);
        if (ready == 0) return ReadResult::kTimeout;
      }
      const int n = reader_->ReadRaw(buffer, sizeof(buffer));
      if (n <= 0) return ReadResult::kEof;
      out->append(buffer, static_cast<size_t>(n));
      return ReadResult::kData;
    } catch (const Poco::TimeoutException&) {
      return ReadResult::kTimeout;
    } catch (const Poco::Exception& e) {
      *error = e.displayText();
      return ReadResult::kError;
    } catch (const std::exception& e) {
      *error = e.what();
      return ReadResult::kError;
    }
  }

  // A raw shutdown(2) rather than the socket object's: TLS shutdown is not safe concurrently with
  // a read on another thread, the system call is.
  void Interrupt() override { ::shutdown(fd_, SHUT_RDWR); }

 private:
  std::unique_ptr<HTTPClientSession> session_;
  RawReader* reader_;
  int code_;
  std::optional<int64_t> retry_after_;
  bool chunked_;
  int stall_ms_;
  int fd_;
};

}  // namespace

struct HttpTransport::State {
  bool tls = false;
  std::string host;
  uint16_t port = 0;
  std::string path_prefix;
  Poco::Net::Context::Ptr context;
  Duration timeout;
  std::string user_agent;
  size_t max_idle = 0;
  std::mutex mu;
  std::vector<std::unique_ptr<HTTPClientSession>> idle;

  std::unique_ptr<HTTPClientSession> NewSession() const {
    std::unique_ptr<HTTPClientSession> s;
    if (tls) {
      s = std::make_unique<ReadableSession<Poco::Net::HTTPSClientSession>>(host, port, context);
    } else {
      s = std::make_unique<ReadableSession<HTTPClientSession>>(host, port);
    }
    s->setTimeout(ToTimespan(timeout));
    s->setKeepAlive(true);
    return s;
  }

  Poco::Net::HTTPRequest MakeRequest(const HttpRequest& r, const std::string& token) const {
    Poco::Net::HTTPRequest req(r.method, path_prefix + r.path_and_query,
                               Poco::Net::HTTPMessage::HTTP_1_1);
    req.set("User-Agent", user_agent);
    req.set("Accept", r.accept);
    if (!token.empty()) req.set("Authorization", "Bearer " + token);
    if (!r.body.empty()) {
      req.setContentType(r.content_type);
      req.setContentLength(static_cast<std::streamsize>(r.body.size()));
    }
    return req;
  }
};

HttpTransport::HttpTransport(std::unique_ptr<State> state) : state_(std::move(state)) {}
HttpTransport::~HttpTransport() = default;

Result<std::unique_ptr<HttpTransport>> HttpTransport::Open(const KubeConfig& config,
                                                           Duration timeout, std::string user_agent,
                                                           size_t max_idle_sessions) {
  auto state = std::make_unique<State>();
  try {
    const Poco::URI uri(config.server);
    if (uri.getScheme() != "https" && uri.getScheme() != "http") {
      return Status::InvalidArgument("server URL must be https:// or http://: " + config.server);
    }
    if (uri.getHost().empty()) return Status::InvalidArgument("server URL has no host");
    state->tls = uri.getScheme() == "https";
    state->host = uri.getHost();
    state->port = uri.getPort();
    state->path_prefix = uri.getPath();
    while (!state->path_prefix.empty() && state->path_prefix.back() == '/') {
      state->path_prefix.pop_back();
    }
  } catch (const Poco::Exception& e) {
    return Status::InvalidArgument("server URL " + config.server + ": " + e.displayText());
  }
  if (state->tls) {
    CL_ASSIGN_OR_RETURN(state->context, MakeTlsContext(config));
  }
  state->timeout = timeout;
  state->user_agent = std::move(user_agent);
  state->max_idle = max_idle_sessions;
  return std::unique_ptr<HttpTransport>(new HttpTransport(std::move(state)));
}

KubeResult<HttpResponse> HttpTransport::RoundTrip(const HttpRequest& request,
                                                  const std::string& token) {
  std::unique_ptr<HTTPClientSession> session;
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->idle.empty()) {
      session = std::move(state_->idle.back());
      state_->idle.pop_back();
    }
  }
  if (!session) session = state_->NewSession();
  try {
    Poco::Net::HTTPRequest req = state_->MakeRequest(request, token);
    std::ostream& body = session->sendRequest(req);
    body << request.body;
    Poco::Net::HTTPResponse resp;
    std::istream& in = session->receiveResponse(resp);
    HttpResponse out;
    Poco::StreamCopier::copyToString(in, out.body);
    out.code = static_cast<int>(resp.getStatus());
    out.retry_after = ParseRetryAfter(resp);
    if (resp.getKeepAlive()) {
      std::lock_guard<std::mutex> lock(state_->mu);
      if (state_->idle.size() < state_->max_idle) state_->idle.push_back(std::move(session));
    }
    return out;
  } catch (const Poco::Exception& e) {
    return FailureFrom(request.method + " " + request.path_and_query, e);
  } catch (const std::exception& e) {
    return TransportError(request.method + " " + request.path_and_query + ": " + e.what());
  }
}

KubeResult<std::unique_ptr<HttpStream>> HttpTransport::OpenStream(const HttpRequest& request,
                                                                  const std::string& token,
                                                                  Duration receive_timeout) {
  std::unique_ptr<HTTPClientSession> session = state_->NewSession();
  session->setTimeout(ToTimespan(state_->timeout), ToTimespan(state_->timeout),
                      ToTimespan(receive_timeout));
  try {
    Poco::Net::HTTPRequest req = state_->MakeRequest(request, token);
    session->sendRequest(req);
    Poco::Net::HTTPResponse resp;
    std::istream& in = session->receiveResponse(resp);
    const int code = static_cast<int>(resp.getStatus());
    if (code != 200) {
      std::string body;
      Poco::StreamCopier::copyToString(in, body);
      ApiError error = ApiErrorFromResponse(code, body);
      if (auto ra = ParseRetryAfter(resp)) error.retry_after = ra;
      return error;
    }
    return std::unique_ptr<HttpStream>(
        std::make_unique<PocoHttpStream>(std::move(session), code, ParseRetryAfter(resp),
                                         resp.getChunkedTransferEncoding(), receive_timeout));
  } catch (const Poco::Exception& e) {
    return FailureFrom("watch " + request.path_and_query, e);
  } catch (const std::exception& e) {
    return TransportError("watch " + request.path_and_query + ": " + e.what());
  }
}

}  // namespace cronledger::kube::internal
