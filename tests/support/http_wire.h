// An HTTP/1.1 peer that judges the server's framing: sends bytes over plain
// TCP or TLS (this process's tls::identity(), as the in-process *-tls
// servers use) and reads each response as RFC 9112 section 6.3 frames it
// (HEAD, 1xx, 204 and 304 end at the header section; chunked; Content-Length;
// else the close), with a strict status line and field lines. raw_http.h's
// RawConnection trusts Content-Length alone, so a HEAD reply or a chunked
// one would stall it; this one is for the conformance table.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/transport.h"
#include "raw_http.h"

namespace wsb::testing {

struct WireResponse : RawResponse {
  // Why no whole, well-formed response came (empty if one did).
  std::string error;
  bool ok() const { return error.empty(); }
  // The field lines named `name` (case-insensitive), in order.
  std::vector<std::string> all(std::string_view name) const;
  // Every field name, lower-cased, in order.
  std::vector<std::string> names() const;
};

// How a connection ended, as far as the client can tell.
enum class Ending {
  open,       // nothing within the wait
  bytes,      // more bytes came instead
  clean,      // TCP FIN; over TLS, a close_notify alert first
  no_notify,  // TLS only: TCP FIN without close_notify
  reset,      // TCP RST
};
const char* to_string(Ending e);

class WireConnection {
 public:
  WireConnection(const Endpoint& server, bool tls);
  ~WireConnection();
  WireConnection(const WireConnection&) = delete;
  WireConnection& operator=(const WireConnection&) = delete;

  // False if the peer has closed or reset the connection.
  bool send(std::string_view bytes);
  // TCP half-close (over TLS, after a close_notify).
  void shutdown_write();

  // The next response to a request of `method` (a 1xx is a response of
  // its own). Waits at most `wait` for each read.
  WireResponse read(std::string_view method,
                    std::chrono::milliseconds wait = std::chrono::seconds(5));

  // What the server does next within `wait`: nothing, more bytes, or a
  // close. Bytes read here are kept for read().
  Ending ending(std::chrono::milliseconds wait = std::chrono::seconds(3));

 private:
  enum class Fill { data, eof, eof_no_notify, reset, timeout, failed };
  Fill fill(std::chrono::milliseconds wait);
  bool read_until(std::string_view what, std::chrono::milliseconds wait, std::size_t& at,
                  std::string& error);
  bool read_size(std::size_t n, std::chrono::milliseconds wait, std::string& error);

  int fd_ = -1;
  struct Tls;
  std::unique_ptr<Tls> tls_;
  std::string pending_;
};

// An IMF-fixdate (RFC 9110 section 5.6.7) within `slack` of now: "" if so,
// else what is wrong.
std::string check_imf_fixdate(std::string_view value,
                              std::chrono::seconds slack = std::chrono::seconds(60));

}  // namespace wsb::testing
