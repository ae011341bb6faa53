// The beast-tls stack's server: the same HTTP server as beast's
// (http_server.h, session.h) over asio's ssl::stream, as Beast's
// http_server_async_ssl example runs it, with tls::configure's context
// (src/common/tls.h). The handshake runs under the session's deadline.
// What differs from the plain Transport is TLS's: a reply goes out through
// the TLS engine's asynchronous write (a non-blocking synchronous write
// could leave a record half sent), a reply that fits in one record as one,
// and the connection ends with close_notify.
#include <openssl/ssl.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_range.hpp>

#include "beast/beast_stack.h"
#include "beast/http_server.h"
#include "common/tls.h"

namespace wsb::beast_stack {
namespace {

namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;
using boost::beast::error_code;

// The largest TLS record's plaintext.
constexpr std::size_t kTlsRecordBytes = 16 * 1024;

class TlsTransport {
 public:
  using Stream = ssl::stream<tcp::socket>;
  using Shared = ssl::context;
  static Shared make_shared() {
    ssl::context context(ssl::context::tls_server);
    tls::configure(context.native_handle(), tls::Side::server);
    return context;
  }

  TlsTransport(tcp::socket&& socket, Shared& context) : stream_(std::move(socket), context) {}

  tcp::socket& socket() { return stream_.next_layer(); }
  Stream& stream() { return stream_; }

  template <class Handler>
  void handshake(Handler&& handler) {
    stream_.async_handshake(ssl::stream_base::server, std::forward<Handler>(handler));
  }
  // Nothing goes out synchronously: see the file comment.
  template <class Buffers>
  std::size_t write_now(const Buffers&, error_code& ec) {
    ec = net::error::would_block;
    return 0;
  }
  // A reply that fits in one record is copied into one buffer and sent as
  // one record; asio's stream writes a buffer sequence one buffer (and so
  // at least one record) at a time.
  template <class Buffers, class Handler>
  void async_send(const Buffers& buffers, Handler&& handler) {
    if (net::buffer_size(buffers) > kTlsRecordBytes)
      return net::async_write(stream_, buffers, std::forward<Handler>(handler));
    out_.clear();
    for (const net::const_buffer b : boost::beast::buffers_range_ref(buffers))
      out_.append(static_cast<const char*>(b.data()), b.size());
    net::async_write(stream_, net::buffer(out_), std::forward<Handler>(handler));
  }
  // Sends close_notify without waiting for the peer's (TLS 1.3 lets the
  // side that closes first go).
  template <class Handler>
  void close_notify(Handler&& handler) {
    SSL_set_shutdown(stream_.native_handle(), SSL_RECEIVED_SHUTDOWN);
    stream_.async_shutdown(std::forward<Handler>(handler));
  }
  // close_notify (eof), or a peer that closed TCP without it.
  static bool is_end(const error_code& ec) {
    return ec == net::error::eof || ec == ssl::error::stream_truncated;
  }

 private:
  Stream stream_;
  std::string out_;  // a short reply's head and body, together
};

}  // namespace

std::unique_ptr<Server> start_beast_tls_server(Service& service, const ServerOptions& options) {
  return std::make_unique<HttpServer<TlsTransport>>(service, options, "beast-tls");
}

}  // namespace wsb::beast_stack
