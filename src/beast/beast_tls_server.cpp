// The beast-tls stack's server: the same HTTP server as beast's
// (http_server.h, session.h) over TLS, with tls::configure's context
// (src/common/tls.h). OpenSSL reads and writes the non-blocking socket
// itself (ssl_socket.h); asio only says when the socket is ready. What
// differs from the plain Transport is TLS's: the handshake (under the
// session's deadline), records in place of bytes (a reply that fits in
// one record goes out as one, head and body copied together; a write the
// socket does not take whole is finished with the same record), and
// close_notify before the close.
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/buffers_range.hpp>

#include "beast/beast_stack.h"
#include "beast/http_server.h"
#include "beast/ssl_socket.h"
#include "common/tls.h"

namespace wsb::beast_stack {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using boost::beast::error_code;

// The largest TLS record's plaintext.
constexpr std::size_t kTlsRecordBytes = 16 * 1024;

class TlsTransport {
 public:
  using Shared = net::ssl::context;
  static Shared make_shared() {
    Shared context(Shared::tls_server);
    tls::configure(context.native_handle(), tls::Side::server);
    return context;
  }

  TlsTransport(tcp::socket&& socket, Shared& context)
      : socket_(std::move(socket)), ssl_(context.native_handle(), socket_.native_handle(), true) {}

  tcp::socket& socket() { return socket_; }

  template <class Handler>
  void handshake(Handler&& handler) {
    error_code ec;
    SslWait wait = SslWait::none;
    ssl_.handshake(ec, wait);
    if (ec != net::error::would_block) return handler(ec);
    when_ready(wait, [this, h = std::forward<Handler>(handler)](error_code e) mutable {
      if (e) return h(e);
      handshake(std::move(h));
    });
  }

  // As a socket's async_read_some: the plaintext of what has arrived, or
  // of the next record once the socket is readable.
  template <class Handler>
  void async_read_some(net::mutable_buffer buffer, Handler&& handler) {
    read_attempt(buffer, std::forward<Handler>(handler), true);
  }

  // What goes out now without waiting: the reply staged (one record if it
  // fits in one), then written as far as the socket takes it.
  template <class Buffers>
  std::size_t write_now(const Buffers& buffers, error_code& ec) {
    stage(buffers);
    return flush(ec) ? staged_bytes_ : 0;
  }
  // The rest of the staged reply (or `buffers`, staged now), as the
  // socket becomes writable.
  template <class Buffers, class Handler>
  void async_send(const Buffers& buffers, Handler&& handler) {
    if (part_ == parts_) stage(buffers);
    error_code ec;
    if (flush(ec) || ec != net::error::would_block)
      return net::post(socket_.get_executor(), [h = std::forward<Handler>(handler), ec,
                                                n = staged_bytes_]() mutable { h(ec, n); });
    send_rest(std::forward<Handler>(handler));
  }

  template <class Handler>
  void close_notify(Handler&& handler) {
    error_code ec;
    SslWait wait = SslWait::none;
    ssl_.close_notify(ec, wait);
    if (ec != net::error::would_block) return handler(ec);
    // One wait: the alert is short; a peer that reads nothing gets the
    // close without it.
    when_ready(wait, [h = std::forward<Handler>(handler)](error_code e) mutable { h(e); });
  }

  // close_notify (eof), or a peer that closed TCP without it.
  static bool is_end(const error_code& ec) {
    return ec == net::error::eof || ec == net::ssl::error::stream_truncated;
  }

 private:
  template <class Handler>
  void when_ready(SslWait wait, Handler&& handler) {
    socket_.async_wait(wait == SslWait::write ? tcp::socket::wait_write : tcp::socket::wait_read,
                       std::forward<Handler>(handler));
  }

  // `first`: called from async_read_some, whose handler must not run
  // inside it (as an asio socket's would not).
  template <class Handler>
  void read_attempt(net::mutable_buffer buffer, Handler&& handler, bool first) {
    error_code ec;
    SslWait wait = SslWait::none;
    const std::size_t n = ssl_.read(buffer.data(), buffer.size(), ec, wait);
    if (ec == net::error::would_block) {
      return when_ready(wait,
                        [this, buffer, h = std::forward<Handler>(handler)](error_code e) mutable {
                          if (e) return h(e, std::size_t{0});
                          read_attempt(buffer, std::move(h), false);
                        });
    }
    if (!first) return handler(ec, n);
    net::post(socket_.get_executor(),
              [h = std::forward<Handler>(handler), ec, n]() mutable { h(ec, n); });
  }

  template <class Buffers>
  void stage(const Buffers& buffers) {
    staged_bytes_ = net::buffer_size(buffers);
    part_ = parts_ = 0;
    if (staged_bytes_ <= kTlsRecordBytes) {
      out_.clear();
      for (const net::const_buffer b : boost::beast::buffers_range_ref(buffers))
        out_.append(static_cast<const char*>(b.data()), b.size());
      staged_[parts_++] = net::buffer(out_);
      return;
    }
    for (const net::const_buffer b : boost::beast::buffers_range_ref(buffers))
      if (b.size() != 0 && parts_ < staged_.size()) staged_[parts_++] = b;
  }

  // True once every staged byte is written; false with ec would_block
  // (wait_) or a failure.
  bool flush(error_code& ec) {
    while (part_ < parts_) {
      net::const_buffer& b = staged_[part_];
      b += ssl_.write(b.data(), b.size(), ec, wait_);
      if (ec) return false;
      if (b.size() == 0) ++part_;
    }
    return true;
  }

  template <class Handler>
  void send_rest(Handler&& handler) {
    when_ready(wait_, [this, h = std::forward<Handler>(handler)](error_code e) mutable {
      if (e) return h(e, std::size_t{0});
      error_code ec;
      if (flush(ec) || ec != net::error::would_block) return h(ec, staged_bytes_);
      send_rest(std::move(h));
    });
  }

  tcp::socket socket_;
  SslSocket ssl_;
  std::string out_;  // a short reply's head and body, together
  std::array<net::const_buffer, 2> staged_{};
  std::size_t parts_ = 0, part_ = 0;  // staged buffers, and the first not yet written
  std::size_t staged_bytes_ = 0;
  SslWait wait_ = SslWait::none;  // what the socket must become for flush to go on
};

}  // namespace

std::unique_ptr<Server> start_beast_tls_server(Service& service, const ServerOptions& options) {
  return std::make_unique<HttpServer<TlsTransport>>(service, options, "beast-tls");
}

}  // namespace wsb::beast_stack
