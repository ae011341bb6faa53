// The beast stack's server: the HTTP server of http_server.h and
// session.h over a plain TCP socket. Its Transport writes a reply straight
// to the non-blocking socket first (one sendmsg of head and body, as nginx
// writes) and waits for the socket only for what it does not take.
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>

#include "beast/beast_stack.h"
#include "beast/http_server.h"

namespace wsb::beast_stack {
namespace {

namespace net = boost::asio;
using tcp = net::ip::tcp;
using boost::beast::error_code;

class PlainTransport {
 public:
  struct Shared {};
  static Shared make_shared() { return {}; }

  PlainTransport(tcp::socket&& socket, Shared&) : socket_(std::move(socket)) {}

  tcp::socket& socket() { return socket_; }

  template <class Handler>
  void handshake(Handler&& handler) {
    handler(error_code{});
  }
  template <class Handler>
  void async_read_some(net::mutable_buffer buffer, Handler&& handler) {
    socket_.async_read_some(buffer, std::forward<Handler>(handler));
  }
  // One sendmsg on the non-blocking socket: what it takes now.
  template <class Buffers>
  std::size_t write_now(const Buffers& buffers, error_code& ec) {
    return socket_.write_some(buffers, ec);
  }
  template <class Buffers, class Handler>
  void async_send(const Buffers& buffers, Handler&& handler) {
    net::async_write(socket_, buffers, std::forward<Handler>(handler));
  }
  // Nothing above TCP to close.
  template <class Handler>
  void close_notify(Handler&& handler) {
    handler(error_code{});
  }
  static bool is_end(const error_code& ec) { return ec == net::error::eof; }

 private:
  tcp::socket socket_;
};

}  // namespace

std::unique_ptr<Server> start_beast_server(Service& service, const ServerOptions& options) {
  return std::make_unique<HttpServer<PlainTransport>>(service, options, "beast");
}

}  // namespace wsb::beast_stack
