// A plain-socket HTTP/1.1 peer for the stack tests: sends bytes as a third
// party (curl, a browser, an attacker) would, malformed requests included,
// and reads the server's responses without any HTTP library in between.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "common/transport.h"

namespace wsb::testing {

struct RawResponse {
  int status = 0;
  std::string head;  // status line and header fields
  std::string body;

  // The value of the first header field `name` (case-insensitive), or
  // nullopt.
  std::optional<std::string> header(std::string_view name) const;
};

// One TCP connection speaking bytes, with a receive timeout so a wrong
// server makes a test fail, not hang.
class RawConnection {
 public:
  explicit RawConnection(const Endpoint& server);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // False if the peer has closed (EPIPE) or reset the connection.
  bool send(std::string_view bytes);
  void shutdown_write();

  // One response, framed by Content-Length (the servers under test send one
  // with every reply and never chunk). Throws if the connection ends first.
  RawResponse read_response();

  // Exactly `n` bytes (those after a response already read first), for
  // peers of other protocols. Throws if the connection ends first.
  std::string read_exactly(std::size_t n);

  // True if the server closes the connection (recv sees the end or a reset)
  // within the receive timeout, with no more response bytes.
  bool closed_by_server();

  // The same for a server that may have sent bytes unasked (an HTTP/2
  // server's SETTINGS): those are read and dropped until the end.
  bool closed_by_server_after_its_bytes();

  void set_receive_timeout(std::chrono::milliseconds t);

 private:
  void fill();

  int fd_ = -1;
  std::string pending_;
};

// Sends `bytes` (expecting the send to succeed) and reads one response.
RawResponse roundtrip(RawConnection& c, const std::string& bytes);

}  // namespace wsb::testing
