// The floors of TLS rows and of new-connection rows: a raw ping-pong of the
// same plaintext byte counts as the measured call, with no HTTP, no parsing
// and no marshalling, with the stack's socket options and placement (as
// TcpFloor, tcp_floor.h), in one of three shapes:
//   - TLS, kept alive: one TLS 1.3 connection (tls::make_context on both
//     sides) carrying every exchange; the floor of steady TLS rows.
//   - new connection, plain: connect, one exchange, close, per exchange;
//     the floor of plain new-connection rows.
//   - new connection, TLS: connect, TLS handshake (a full one: the
//     configuration resumes no sessions), one exchange, close_notify,
//     close, per exchange; the floor of TLS new-connection rows.
// The client closes first, sending close_notify without waiting for the
// server's, as the beast-tls client does.
#pragma once

#include <openssl/ssl.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "harness/tcp_floor.h"

namespace wsb {

class ConnectionFloor {
 public:
  struct Shape {
    bool tls = true;
    bool new_connection = false;
    // Contexts to use in place of tls::make_context's (tests: a server
    // configured to another suite); not owned, must outlive the floor.
    SSL_CTX* server_context = nullptr;
    SSL_CTX* client_context = nullptr;
  };

  // Starts the server thread on 127.0.0.1 (pinned to server_cpu); a kept-
  // alive floor also connects (and shakes hands). `route` as TcpFloor's.
  // Throws std::runtime_error.
  ConnectionFloor(std::size_t request_bytes, std::size_t response_bytes,
                  const ConnectionOptions& options, std::optional<int> server_cpu, Shape shape,
                  const TcpFloor::Route& route = {});
  ~ConnectionFloor();
  ConnectionFloor(const ConnectionFloor&) = delete;
  ConnectionFloor& operator=(const ConnectionFloor&) = delete;

  // One exchange (a new-connection floor: with its connect, handshake and
  // close); returns its nanoseconds. Throws std::runtime_error.
  std::int64_t round_trip();
  // As TcpFloor::warm_up.
  int warm_up(std::int64_t budget_ns = TcpFloor::kWarmUpBudgetNs);
  // As TcpFloor::wait_until_server_waits.
  void wait_until_server_waits() const;

  // What the server has counted: connections accepted, TLS handshakes
  // completed, plaintext bytes received and sent.
  std::uint64_t connections() const { return connections_.load(); }
  std::uint64_t handshakes() const { return handshakes_.load(); }
  std::uint64_t plain_received() const { return plain_received_.load(); }
  std::uint64_t plain_sent() const { return plain_sent_.load(); }
  // tls::negotiated() of the client's last connection; empty for plain.
  const std::string& negotiated() const { return negotiated_; }

 private:
  struct Connection {
    int fd = -1;
    SSL* ssl = nullptr;  // null: plain
  };
  void serve();
  void serve_connection(int fd);
  Connection open();
  void exchange(Connection& c);
  void close(Connection& c);

  std::size_t request_bytes_, response_bytes_;
  ConnectionOptions options_;
  std::optional<int> server_cpu_;
  Shape shape_;
  std::uint16_t port_ = 0;  // where the client connects (the route's)
  int listen_fd_ = -1;
  SSL_CTX* server_ctx_ = nullptr;
  SSL_CTX* client_ctx_ = nullptr;
  std::vector<SSL_CTX*> owned_;
  std::vector<char> buffer_;         // the client's
  std::vector<char> server_buffer_;  // the server thread's
  std::string negotiated_;
  std::optional<Connection> kept_;  // a kept-alive floor's connection
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> connections_{0}, handshakes_{0}, plain_received_{0}, plain_sent_{0};
  std::atomic<int> server_tid_{0};
  std::thread server_;
};

}  // namespace wsb
