#include "h2_tls_relay.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <memory>
#include <stdexcept>
#include <string>

namespace wsb::testing {
namespace {

constexpr std::size_t kHold = 64 * 1024;

sockaddr_in address_of(const Endpoint& e) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(e.port);
  if (inet_pton(AF_INET, e.host.c_str(), &a.sin_addr) != 1)
    throw std::runtime_error("relay: not an IPv4 address: " + e.host);
  return a;
}

int connect_to(const Endpoint& e) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const sockaddr_in a = address_of(e);
  if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

void non_blocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

using Ctx = std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)>;
using Ssl = std::unique_ptr<SSL, decltype(&SSL_free)>;

// What is left of one direction's bytes, and whether its source ended.
struct Pipe {
  std::string bytes;
  bool ended = false;
};

}  // namespace

TlsRelay::TlsRelay(const Endpoint& tls_server) : server_(tls_server) {
  listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a = address_of({"127.0.0.1", 0});
  socklen_t len = sizeof a;
  if (listener_ < 0 || ::bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(listener_, 16) != 0 ||
      ::getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    throw std::runtime_error("relay: cannot listen");
  at_ = Endpoint{"127.0.0.1", ntohs(a.sin_port)};
  acceptor_ = std::thread([this] { accept_loop(); });
}

TlsRelay::~TlsRelay() {
  stop_ = true;
  acceptor_.join();
  for (auto& t : connections_) t.join();
  ::close(listener_);
}

void TlsRelay::accept_loop() {
  while (!stop_) {
    pollfd p{listener_, POLLIN, 0};
    if (::poll(&p, 1, 20) <= 0) continue;
    const int plain = ::accept(listener_, nullptr, nullptr);
    if (plain >= 0) connections_.emplace_back([this, plain] { carry(plain); });
  }
}

// One connection: TLS to the server (blocking handshake), then both
// sockets non-blocking, each direction moved while its buffer has room.
void TlsRelay::carry(int plain) const {
  // SSL_write writes with write(): a server that closes first (as it does
  // after a protocol error) must fail the write, not kill the test with
  // SIGPIPE. Blocked in this thread only, the signal stays pending on it.
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  const int tls = connect_to(server_);
  Ctx ctx(SSL_CTX_new(TLS_client_method()), SSL_CTX_free);
  Ssl ssl(ctx ? SSL_new(ctx.get()) : nullptr, SSL_free);
  static constexpr unsigned char kAlpn[] = {2, 'h', '2'};
  if (tls < 0 || !ssl || SSL_set_alpn_protos(ssl.get(), kAlpn, sizeof kAlpn) != 0 ||
      SSL_set_fd(ssl.get(), tls) != 1 || SSL_connect(ssl.get()) != 1) {
    ::close(plain);
    if (tls >= 0) ::close(tls);
    return;
  }
  SSL_set_mode(ssl.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  non_blocking(plain);
  non_blocking(tls);
  Pipe up, down;  // to the server, to the peer
  std::array<char, 16384> buf{};
  while (!stop_) {
    bool moved = false;
    if (!up.ended && up.bytes.size() < kHold) {
      const ssize_t n = ::recv(plain, buf.data(), buf.size(), 0);
      if (n > 0) up.bytes.append(buf.data(), static_cast<std::size_t>(n)), moved = true;
      if (n == 0 || (n < 0 && errno != EAGAIN)) up.ended = true;
    }
    if (!up.bytes.empty()) {
      const int n = SSL_write(ssl.get(), up.bytes.data(),
                              static_cast<int>(std::min(up.bytes.size(), buf.size())));
      if (n > 0) up.bytes.erase(0, static_cast<std::size_t>(n)), moved = true;
      const int e = n > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl.get(), n);
      if (e != SSL_ERROR_NONE && e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
        down.ended = true, up.ended = true, up.bytes.clear();
    }
    if (!down.ended && down.bytes.size() < kHold) {
      const int n = SSL_read(ssl.get(), buf.data(), static_cast<int>(buf.size()));
      if (n > 0) down.bytes.append(buf.data(), static_cast<std::size_t>(n)), moved = true;
      const int e = n > 0 ? SSL_ERROR_NONE : SSL_get_error(ssl.get(), n);
      if (e != SSL_ERROR_NONE && e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE)
        down.ended = true;
    }
    if (!down.bytes.empty()) {
      const ssize_t n = ::send(plain, down.bytes.data(), down.bytes.size(), MSG_NOSIGNAL);
      if (n > 0) down.bytes.erase(0, static_cast<std::size_t>(n)), moved = true;
      if (n < 0 && errno != EAGAIN) down.bytes.clear(), up.ended = true;
    }
    // The server gone and its last bytes delivered, or the peer gone.
    if ((down.ended && down.bytes.empty()) || (up.ended && up.bytes.empty())) break;
    if (!moved) {
      std::array<pollfd, 2> p{pollfd{plain, POLLIN, 0}, pollfd{tls, POLLIN, 0}};
      if (!down.bytes.empty()) p[0].events |= POLLOUT;
      if (!up.bytes.empty()) p[1].events |= POLLOUT;
      ::poll(p.data(), p.size(), 5);
    }
  }
  ::close(plain);
  ::close(tls);
}

}  // namespace wsb::testing
