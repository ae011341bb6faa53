// The beast-tls stack's client: the beast client's HTTP code over TLS on
// the same blocking, kernel-timed socket as the plain client, connected as
// Beast's http_client_sync_ssl example connects (resolve, connect, SNI,
// handshake), with the context tls::configure sets up (src/common/tls.h).
// OpenSSL reads and writes the socket itself (ssl_socket.h), as the TLS
// floor does, one SSL_write per request that fits in a record.
#include <openssl/ssl.h>

#include <boost/asio/buffer.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/system/system_error.hpp>
#include <optional>

#include "beast/beast_stack.h"
#include "beast/client_wire.h"
#include "beast/ssl_socket.h"
#include "common/codec.h"
#include "common/tls.h"

namespace wsb::beast_stack {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// On a blocking socket an SSL call wants more only when the socket's
// kernel timeout (kClientIdleTimeout) expired.
void timed_out_if_blocked(beast::error_code& ec) {
  if (ec == net::error::would_block) ec = beast::error::timeout;
}

// The TLS connection as the SyncReadStream Beast's http::read reads.
class SslReadStream {
 public:
  explicit SslReadStream(SslSocket& ssl) : ssl_(ssl) {}

  template <class Buffers>
  std::size_t read_some(const Buffers& buffers, beast::error_code& ec) {
    const net::mutable_buffer b = *net::buffer_sequence_begin(buffers);
    SslWait wait = SslWait::none;
    const std::size_t n = ssl_.read(b.data(), b.size(), ec, wait);
    timed_out_if_blocked(ec);
    return n;
  }
  template <class Buffers>
  std::size_t read_some(const Buffers& buffers) {
    beast::error_code ec;
    const std::size_t n = read_some(buffers, ec);
    if (ec) throw boost::system::system_error(ec);
    return n;
  }

 private:
  SslSocket& ssl_;
};

// One client context per process, as a client library keeps one: a new
// connection then costs its handshake, not a context and a certificate
// parse.
SSL_CTX* client_context() {
  static net::ssl::context context = [] {
    net::ssl::context made(net::ssl::context::tls_client);
    tls::configure(made.native_handle(), tls::Side::client);
    return made;
  }();
  return context.native_handle();
}

class TlsWire final : public ClientWire {
 public:
  explicit TlsWire(const Endpoint& server) : socket_(io_) {
    connect_socket(socket_, server, "beast-tls");
    ssl_.emplace(client_context(), socket_.native_handle(), false);
    // SNI, as the example sets it (SSL_set_tlsext_host_name, whose macro
    // casts); the certificate's name is checked by the context
    // (tls::configure).
    if (SSL_ctrl(ssl_->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                 const_cast<char*>(tls::kServerName)) != 1)
      throw CallError("beast-tls: cannot set the server name");
    beast::error_code ec;
    SslWait wait = SslWait::none;
    ssl_->handshake(ec, wait);
    timed_out_if_blocked(ec);
    if (ec) {
      close();
      throw CallError("beast-tls: TLS handshake with " + server.to_string() +
                      " failed: " + ec.message());
    }
  }

  ~TlsWire() override { close(); }

  // A request that fits in one TLS record as one (head and body copied
  // together), as the server writes its replies; a longer one as its head,
  // then its body.
  void write(const std::array<net::const_buffer, 2>& request, beast::error_code& ec) override {
    constexpr std::size_t kTlsRecordBytes = 16 * 1024;
    if (request[0].size() + request[1].size() <= kTlsRecordBytes) {
      out_.assign(static_cast<const char*>(request[0].data()), request[0].size())
          .append(static_cast<const char*>(request[1].data()), request[1].size());
      return write_all(net::buffer(out_), ec);
    }
    for (const auto& part : request) {
      write_all(part, ec);
      if (ec) return;
    }
  }
  void read(beast::flat_buffer& buffer, ResponseParser& parser, beast::error_code& ec) override {
    SslReadStream stream(*ssl_);
    http::read(stream, buffer, parser, ec);
  }
  std::uint16_t local_port() const override {
    boost::system::error_code ec;
    const auto local = socket_.local_endpoint(ec);
    return ec ? 0 : local.port();
  }
  // Sends close_notify without waiting for the server's (curl does the
  // same), then closes the socket.
  void close() override {
    if (!socket_.is_open()) return;
    if (ssl_) {
      beast::error_code ignored;
      SslWait wait = SslWait::none;
      ssl_->close_notify(ignored, wait);
    }
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  // Partial writes complete record by record.
  void write_all(net::const_buffer b, beast::error_code& ec) {
    while (b.size() != 0) {
      SslWait wait = SslWait::none;
      b += ssl_->write(b.data(), b.size(), ec, wait);
      timed_out_if_blocked(ec);
      if (ec) return;
    }
  }

  net::io_context io_;  // owns the socket's service; never run (all I/O is blocking)
  tcp::socket socket_;
  std::optional<SslSocket> ssl_;
  std::string out_;  // a short request's head and body, together
};

}  // namespace

std::unique_ptr<Client> connect_beast_tls_client(const Endpoint& server, const std::string& codec) {
  (void)find_codec(codec);  // an unknown codec is refused before connecting
  return make_client(std::make_unique<TlsWire>(server), server, codec);
}

}  // namespace wsb::beast_stack
