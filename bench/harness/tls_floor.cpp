#include "harness/tls_floor.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "common/clock.h"
#include "common/placement.h"
#include "common/tls.h"
#include "harness/loopback.h"

namespace wsb {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("connection floor: " + what);
}

// Reads exactly n plaintext bytes; false when the peer has gone (or sent
// close_notify).
bool read_exact_plain(int fd, SSL* ssl, char* data, std::size_t n) {
  if (ssl == nullptr) return read_exact(fd, data, n);
  while (n > 0) {
    const int got = SSL_read(ssl, data, static_cast<int>(std::min<std::size_t>(n, 1 << 30)));
    if (got <= 0) return false;
    data += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

// Writes n plaintext bytes: one SSL_write, which OpenSSL cuts into records
// of at most 16 KiB, as a TLS library under a stack does.
bool write_all_plain(int fd, SSL* ssl, const char* data, std::size_t n) {
  if (ssl == nullptr) return write_all(fd, data, n);
  while (n > 0) {
    const int put = SSL_write(ssl, data, static_cast<int>(std::min<std::size_t>(n, 1 << 30)));
    if (put <= 0) return false;
    data += put;
    n -= static_cast<std::size_t>(put);
  }
  return true;
}

int connect_loopback(std::uint16_t port, const SocketOptions& options) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(std::string("socket: ") + std::strerror(errno));
  try {
    apply(fd, options);  // before connecting, as the stacks and TcpFloor do
  } catch (...) {
    ::close(fd);
    throw;
  }
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int saved = errno;
    ::close(fd);
    fail(std::string("connect: ") + std::strerror(saved));
  }
  return fd;
}

}  // namespace

ConnectionFloor::ConnectionFloor(std::size_t request_bytes, std::size_t response_bytes,
                                 const ConnectionOptions& options, std::optional<int> server_cpu,
                                 Shape shape, const TcpFloor::Route& route)
    : request_bytes_(std::max<std::size_t>(request_bytes, 1)),
      response_bytes_(std::max<std::size_t>(response_bytes, 1)),
      options_(options),
      server_cpu_(server_cpu),
      shape_(shape),
      buffer_(std::max(request_bytes_, response_bytes_)),
      server_buffer_(buffer_.size()) {
  if (shape_.tls) {
    // Made once here, as a library keeps its context: an exchange costs its
    // handshake (new connection) or its records, not a context.
    server_ctx_ = shape_.server_context;
    client_ctx_ = shape_.client_context;
    if (server_ctx_ == nullptr)
      server_ctx_ = owned_.emplace_back(tls::make_context(tls::Side::server).release());
    if (client_ctx_ == nullptr)
      client_ctx_ = owned_.emplace_back(tls::make_context(tls::Side::client).release());
  }
  std::uint16_t port = 0;
  listen_fd_ = listen_on_loopback(16, port, "connection floor");
  port_ = route ? route(port) : port;
  server_ = std::thread([this] { serve(); });
  if (!shape_.new_connection) {
    try {
      kept_ = open();
    } catch (...) {
      stopping_ = true;
      ::shutdown(listen_fd_, SHUT_RDWR);
      server_.join();
      ::close(listen_fd_);
      for (SSL_CTX* ctx : owned_) SSL_CTX_free(ctx);
      throw;
    }
  }
}

ConnectionFloor::~ConnectionFloor() {
  if (kept_) close(*kept_);
  stopping_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);  // ends the server's accept
  server_.join();
  ::close(listen_fd_);
  for (SSL_CTX* ctx : owned_) SSL_CTX_free(ctx);
}

ConnectionFloor::Connection ConnectionFloor::open() {
  Connection c{connect_loopback(port_, options_.client), nullptr};
  if (!shape_.tls) return c;
  c.ssl = SSL_new(client_ctx_);
  if (c.ssl == nullptr || SSL_set_fd(c.ssl, c.fd) != 1 ||
      SSL_ctrl(c.ssl, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
               const_cast<char*>(tls::kServerName)) != 1 ||
      SSL_connect(c.ssl) != 1) {
    close(c);
    fail("TLS handshake failed");
  }
  return c;
}

void ConnectionFloor::exchange(Connection& c) {
  if (!write_all_plain(c.fd, c.ssl, buffer_.data(), request_bytes_)) fail("send");
  if (!read_exact_plain(c.fd, c.ssl, buffer_.data(), response_bytes_)) fail("receive");
}

void ConnectionFloor::close(Connection& c) {
  if (c.ssl != nullptr) {
    // close_notify, not waiting for the server's (the beast-tls client's
    // close): the first SSL_shutdown sends it and returns.
    SSL_shutdown(c.ssl);
    SSL_free(c.ssl);
    c.ssl = nullptr;
  }
  if (c.fd >= 0) ::close(c.fd);
  c.fd = -1;
}

std::int64_t ConnectionFloor::round_trip() {
  if (kept_) {
    const std::int64_t start = now_ns();
    exchange(*kept_);
    return now_ns() - start;
  }
  // Timed: connect, handshake, one exchange, close.
  const std::int64_t start = now_ns();
  Connection c = open();
  try {
    exchange(c);
  } catch (...) {
    close(c);
    throw;
  }
  if (c.ssl != nullptr && negotiated_.empty()) negotiated_ = tls::negotiated(c.ssl);
  close(c);
  return now_ns() - start;
}

int ConnectionFloor::warm_up(std::int64_t budget_ns) {
  std::int64_t spent = 0;
  int made = 0;
  for (; made < TcpFloor::kWarmUp && (made == 0 || spent < budget_ns); ++made)
    spent += round_trip();
  if (kept_ && kept_->ssl != nullptr) negotiated_ = tls::negotiated(kept_->ssl);
  return made;
}

void ConnectionFloor::wait_until_server_waits() const { wait_until_sleeping(server_tid_.load()); }

void ConnectionFloor::serve() {
  server_tid_ = static_cast<int>(::gettid());
  // OpenSSL writes with write(): a close_notify to a client that has
  // already closed must be EPIPE, not a SIGPIPE that ends the process.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  try {
    pin_current_thread(server_cpu_);
  } catch (const std::exception&) {
    // Unpinned is still a floor, as TcpFloor's.
  }
  while (!stopping_) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      return;  // shut down
    }
    ++connections_;
    serve_connection(fd);
    ::close(fd);
  }
}

// One connection at a time (the client makes one at a time): the
// handshake, then each request_bytes answered with response_bytes until
// the client closes; then the server's close_notify, as the beast-tls
// server answers one.
void ConnectionFloor::serve_connection(int fd) {
  try {
    apply(fd, options_.server);
  } catch (const std::exception&) {
    return;  // the client's exchange fails and reports it
  }
  SSL* ssl = nullptr;
  if (shape_.tls) {
    ssl = SSL_new(server_ctx_);
    if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1 || SSL_accept(ssl) != 1) {
      SSL_free(ssl);
      return;
    }
    ++handshakes_;
  }
  while (read_exact_plain(fd, ssl, server_buffer_.data(), request_bytes_)) {
    // Counted before the reply goes: a client that has it sees the counts.
    plain_received_ += request_bytes_;
    plain_sent_ += response_bytes_;
    if (!write_all_plain(fd, ssl, server_buffer_.data(), response_bytes_)) break;
  }
  if (ssl != nullptr) {
    SSL_shutdown(ssl);
    SSL_free(ssl);
  }
}

}  // namespace wsb
