// Plain sockets for the listener tests (kube/testing/raw_http_client.h).
#include "kube/testing/raw_http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <utility>

namespace cronledger::kube::testing {
namespace {

sockaddr_in Ipv4(const std::string& host, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, host.c_str(), &a.sin_addr);
  return a;
}

int RemainingMs(std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

}  // namespace

std::optional<RawConnection> RawConnection::Open(uint16_t port, const std::string& source) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return std::nullopt;
  sockaddr_in from = Ipv4(source, 0);
  sockaddr_in to = Ipv4("127.0.0.1", port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof(to)) != 0) {
    const int saved = errno;
    ::close(fd);
    errno = saved;
    return std::nullopt;
  }
  return RawConnection(fd);
}

RawConnection::RawConnection(RawConnection&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

RawConnection& RawConnection::operator=(RawConnection&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) ::close(fd_);
}

bool RawConnection::Send(const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

void RawConnection::ShrinkReceiveBuffer() {
  const int size = 4096;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

void RawConnection::GrowReceiveBuffer() {
  const int size = 4 << 20;
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
}

std::optional<std::string> RawConnection::ReadUntilClosed(Duration deadline) {
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(deadline);
  std::string out;
  char buffer[65536];
  while (true) {
    pollfd p{fd_, POLLIN, 0};
    const int ready = ::poll(&p, 1, RemainingMs(until));
    if (ready == 0) return std::nullopt;
    if (ready < 0 && errno == EINTR) continue;
    const ssize_t n = ::recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) return out;  // closed or reset
    out.append(buffer, static_cast<size_t>(n));
  }
}

bool RawConnection::ClosedWithin(Duration wait) { return ReadUntilClosed(wait).has_value(); }

std::optional<std::string> GetWithin(uint16_t port, const std::string& target, Duration deadline,
                                     const std::string& source) {
  auto c = RawConnection::Open(port, source);
  if (!c) return std::nullopt;
  if (!c->Send("GET " + target + " HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n")) {
    return std::nullopt;
  }
  auto response = c->ReadUntilClosed(deadline);
  if (!response || response->empty()) return std::nullopt;
  return response;
}

int StatusOf(const std::string& response) {
  if (response.rfind("HTTP/1.", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.substr(9, 3).c_str());
}

uint64_t RaiseDescriptorLimit(uint64_t want) {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return 0;
  if (r.rlim_cur < want) {
    r.rlim_cur = std::min<rlim_t>(want, r.rlim_max);
    ::setrlimit(RLIMIT_NOFILE, &r);
    ::getrlimit(RLIMIT_NOFILE, &r);
  }
  return r.rlim_cur;
}

}  // namespace cronledger::kube::testing
