#pragma once

// Plain sockets for the listener tests (kube/http_server.h): connections that stay idle, dribble
// their request or never read the answer, from a chosen source address on the loopback network
// (127.0.0.0/8 is all local on Linux), and one-shot requests with a receive deadline.
// Closed by the destructor. Not thread-safe.

#include <cstdint>
#include <optional>
#include <string>

#include "model/time.h"

namespace cronledger::kube::testing {

class RawConnection {
 public:
  // Connects from `source` (an IPv4 loopback address) to 127.0.0.1:port; nullopt on failure
  // (errno says why: EMFILE when the test's descriptor limit is reached).
  static std::optional<RawConnection> Open(uint16_t port, const std::string& source = "127.0.0.1");
  RawConnection(RawConnection&& other) noexcept;
  RawConnection& operator=(RawConnection&& other) noexcept;
  ~RawConnection();

  // Sends all of `bytes`; false when the peer has closed or reset the connection.
  bool Send(const std::string& bytes);
  // Shrinks the receive buffer, so a server writing a large answer blocks soon.
  void ShrinkReceiveBuffer();
  // Back to a large receive buffer, so that what the peer already queued drains quickly (a 4 KiB
  // window drains at delayed-ACK pace, tens of seconds for a few MiB).
  void GrowReceiveBuffer();
  // Reads until the peer closes, at most `deadline` in total; the bytes read, or nullopt when the
  // deadline passed with the connection still open.
  std::optional<std::string> ReadUntilClosed(Duration deadline);
  // True when the peer has closed (or reset) the connection within `wait`.
  bool ClosedWithin(Duration wait);

 private:
  explicit RawConnection(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// "GET target HTTP/1.1" with Connection: close from `source`, answered within `deadline`: the raw
// response, or nullopt when the connection failed or the deadline passed.
std::optional<std::string> GetWithin(uint16_t port, const std::string& target, Duration deadline,
                                     const std::string& source = "127.0.0.1");

// The status code of a raw HTTP response; 0 when it does not start with a status line.
int StatusOf(const std::string& response);

// Raises the soft descriptor limit to at least `want` (up to the hard limit); the limit reached.
uint64_t RaiseDescriptorLimit(uint64_t want);

}  // namespace cronledger::kube::testing
