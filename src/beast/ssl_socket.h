// TLS on a connected socket's descriptor, as the TLS floor runs it
// (bench/harness/tls_floor.h): OpenSSL reads and writes the socket itself
// (SSL_set_fd), one SSL_read or SSL_write per message, so that a beast-tls
// round trip differs from beast's by TLS's work and not by a TLS wrapper's.
// asio's ssl::stream, which Beast's examples use, moves every record
// through a memory BIO pair and a composed operation, and clears
// OpenSSL's error queue around every call: it cost the beast-tls ping
// 16,000 instructions more than the floor's TLS did (docs/servers/tls.md).
//
// Internal to src/beast.
#pragma once

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/system/error_code.hpp>
#include <cerrno>
#include <csignal>
#include <cstddef>
#include <memory>
#include <stdexcept>

namespace wsb::beast_stack {

// What an SSL call that did not complete wants before it can go on.
enum class SslWait { none, read, write };

// One TLS connection over `fd` (not owned), in the accept or connect
// state. Throws std::runtime_error if OpenSSL cannot make it.
class SslSocket {
 public:
  SslSocket(SSL_CTX* context, int fd, bool server) : ssl_(SSL_new(context)) {
    ignore_sigpipe();
    if (!ssl_ || SSL_set_fd(ssl_.get(), fd) != 1)
      throw std::runtime_error("tls: cannot set up a connection");
    // A write may complete record by record, and be retried from another
    // address (the body string may move between attempts).
    SSL_set_mode(ssl_.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    if (server)
      SSL_set_accept_state(ssl_.get());
    else
      SSL_set_connect_state(ssl_.get());
  }

  SSL* native_handle() const { return ssl_.get(); }

  // Each returns what it did; on failure `ec` says why and `wait` what a
  // non-blocking socket must become before the same call is retried
  // (would_block then), or none (the connection failed or ended: eof for
  // the peer's close_notify, stream_truncated for a close without one).
  void handshake(boost::system::error_code& ec, SslWait& wait) {
    ERR_clear_error();
    const int r = SSL_do_handshake(ssl_.get());
    ec = r == 1 ? boost::system::error_code{} : failure(r, wait);
  }
  std::size_t read(void* data, std::size_t size, boost::system::error_code& ec, SslWait& wait) {
    std::size_t n = 0;
    errno = 0;
    const int r = SSL_read_ex(ssl_.get(), data, size, &n);
    ec = r == 1 ? boost::system::error_code{} : failure(r, wait);
    return n;
  }
  std::size_t write(const void* data, std::size_t size, boost::system::error_code& ec,
                    SslWait& wait) {
    std::size_t n = 0;
    errno = 0;
    const int r = SSL_write_ex(ssl_.get(), data, size, &n);
    ec = r == 1 ? boost::system::error_code{} : failure(r, wait);
    return n;
  }
  // Sends close_notify without waiting for the peer's (TLS 1.3 lets the
  // side that closes first go).
  void close_notify(boost::system::error_code& ec, SslWait& wait) {
    SSL_set_shutdown(ssl_.get(), SSL_get_shutdown(ssl_.get()) | SSL_RECEIVED_SHUTDOWN);
    const int r = SSL_shutdown(ssl_.get());
    ec = r >= 0 ? boost::system::error_code{} : failure(r, wait);
  }

 private:
  // OpenSSL's socket BIO writes with write(), not send(MSG_NOSIGNAL): a
  // write to a peer gone first must be EPIPE, not a SIGPIPE that ends the
  // process. As gRPC and gSOAP's servers do, the process ignores SIGPIPE,
  // unless the program has a handler of its own.
  static void ignore_sigpipe() {
    static const bool done = [] {
      struct sigaction current {};
      if (sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)
        std::signal(SIGPIPE, SIG_IGN);
      return true;
    }();
    (void)done;
  }

  struct Free {
    void operator()(SSL* ssl) const { SSL_free(ssl); }
  };

  // OpenSSL's error queue must be empty before a call for SSL_get_error
  // to be right; it is left empty after every failure, rather than
  // cleared before every call (which costs more than a record's AEAD).
  boost::system::error_code failure(int result, SslWait& wait) {
    namespace net = boost::asio;
    const int saved_errno = errno;
    boost::system::error_code ec;
    wait = SslWait::none;
    switch (SSL_get_error(ssl_.get(), result)) {
      case SSL_ERROR_WANT_READ:
        wait = SslWait::read;
        ec = net::error::would_block;
        break;
      case SSL_ERROR_WANT_WRITE:
        wait = SslWait::write;
        ec = net::error::would_block;
        break;
      case SSL_ERROR_ZERO_RETURN:
        ec = net::error::eof;
        break;
      case SSL_ERROR_SYSCALL:
        if (ERR_peek_error() == 0) {
          ec = saved_errno != 0
                   ? boost::system::error_code{saved_errno, boost::system::system_category()}
                   : boost::system::error_code{net::ssl::error::stream_truncated};
          break;
        }
        [[fallthrough]];
      default:
        ec = {static_cast<int>(ERR_peek_error()), net::error::get_ssl_category()};
        break;
    }
    ERR_clear_error();
    return ec;
  }

  std::unique_ptr<SSL, Free> ssl_;
};

}  // namespace wsb::beast_stack
