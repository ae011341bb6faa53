// A relay for the grpc-tls stack's raw HTTP/2 tests: it accepts cleartext
// connections on 127.0.0.1 and carries each to a TLS server (ALPN h2,
// certificate not checked), so an H2Peer written for h2c speaks to
// grpc-tls unchanged. It holds at most 64 KiB each way: a peer that stops
// reading stops the relay reading the server, as a direct peer would.
#pragma once

#include <atomic>
#include <thread>
#include <vector>

#include "common/transport.h"

namespace wsb::testing {

class TlsRelay {
 public:
  explicit TlsRelay(const Endpoint& tls_server);
  ~TlsRelay();
  TlsRelay(const TlsRelay&) = delete;
  TlsRelay& operator=(const TlsRelay&) = delete;

  // Where cleartext peers connect.
  Endpoint endpoint() const { return at_; }

 private:
  void accept_loop();
  void carry(int plain) const;

  Endpoint server_;
  Endpoint at_;
  int listener_ = -1;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> connections_;
  std::thread acceptor_;
};

}  // namespace wsb::testing
