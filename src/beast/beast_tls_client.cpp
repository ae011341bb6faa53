// The beast-tls stack's client: the beast client's HTTP code over
// beast::ssl_stream, as Beast's http_client_sync_ssl example connects
// (resolve, connect, SNI, handshake, then blocking reads and writes), with
// the context tls::configure sets up (src/common/tls.h). Reads and writes
// are bounded by kClientIdleTimeout as the plain client's are.
#include <openssl/ssl.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <optional>

#include "beast/beast_stack.h"
#include "beast/client_wire.h"
#include "beast/timed_socket.h"
#include "common/codec.h"
#include "common/tls.h"

namespace wsb::beast_stack {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

// TimedSocket as the layer under an SSL stream, which asks its lowest
// layer for an executor (for its own bookkeeping; every operation here is
// synchronous).
class TimedLayer {
 public:
  using executor_type = net::any_io_executor;
  using lowest_layer_type = TimedLayer;

  TimedLayer(int fd, executor_type executor) : socket_(fd), executor_(std::move(executor)) {}

  lowest_layer_type& lowest_layer() { return *this; }
  const lowest_layer_type& lowest_layer() const { return *this; }
  executor_type get_executor() { return executor_; }

  template <class Buffers>
  std::size_t read_some(const Buffers& buffers, boost::system::error_code& ec) {
    return socket_.read_some(buffers, ec);
  }
  template <class Buffers>
  std::size_t read_some(const Buffers& buffers) {
    return socket_.read_some(buffers);
  }
  template <class Buffers>
  std::size_t write_some(const Buffers& buffers, boost::system::error_code& ec) {
    return socket_.write_some(buffers, ec);
  }
  template <class Buffers>
  std::size_t write_some(const Buffers& buffers) {
    return socket_.write_some(buffers);
  }

 private:
  TimedSocket socket_;
  executor_type executor_;
};

// One client context per process, as a client library keeps one: a new
// connection then costs its handshake, not a context and a certificate
// parse.
ssl::context& client_context() {
  static ssl::context context = [] {
    ssl::context made(ssl::context::tls_client);
    tls::configure(made.native_handle(), tls::Side::client);
    return made;
  }();
  return context;
}

class TlsWire final : public ClientWire {
 public:
  explicit TlsWire(const Endpoint& server) : socket_(io_) {
    connect_socket(socket_, server, "beast-tls");
    stream_.emplace(TimedLayer(socket_.native_handle(), io_.get_executor()), client_context());
    // SNI, as the example sets it (SSL_set_tlsext_host_name, whose macro
    // casts); the certificate's name is checked by the context
    // (tls::configure).
    if (SSL_ctrl(stream_->native_handle(), SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                 const_cast<char*>(tls::kServerName)) != 1)
      throw CallError("beast-tls: cannot set the server name");
    boost::system::error_code ec;
    stream_->handshake(ssl::stream_base::client, ec);
    if (ec) {
      close();
      throw CallError("beast-tls: TLS handshake with " + server.to_string() +
                      " failed: " + ec.message());
    }
  }

  ~TlsWire() override { close(); }

  // As the server writes its replies (beast_tls_server.cpp): a request
  // that fits in one TLS record as one, a longer one as its head, then its
  // body.
  void write(const std::array<net::const_buffer, 2>& request, beast::error_code& ec) override {
    constexpr std::size_t kTlsRecordBytes = 16 * 1024;
    if (request[0].size() + request[1].size() <= kTlsRecordBytes) {
      out_.assign(static_cast<const char*>(request[0].data()), request[0].size())
          .append(static_cast<const char*>(request[1].data()), request[1].size());
      net::write(*stream_, net::buffer(out_), ec);
      return;
    }
    for (const auto& part : request) {
      net::write(*stream_, part, ec);
      if (ec) return;
    }
  }
  void read(beast::flat_buffer& buffer, ResponseParser& parser, beast::error_code& ec) override {
    http::read(*stream_, buffer, parser, ec);
  }
  std::uint16_t local_port() const override {
    boost::system::error_code ec;
    const auto local = socket_.local_endpoint(ec);
    return ec ? 0 : local.port();
  }
  // Sends close_notify without waiting for the server's (TLS 1.3 lets the
  // side that closes first go; curl does the same), then closes the socket.
  void close() override {
    if (!socket_.is_open()) return;
    if (stream_) {
      SSL_set_shutdown(stream_->native_handle(), SSL_RECEIVED_SHUTDOWN);
      boost::system::error_code ignored;
      stream_->shutdown(ignored);
    }
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  net::io_context io_;  // owns the socket's service; never run (all I/O is blocking)
  tcp::socket socket_;
  std::optional<beast::ssl_stream<TimedLayer>> stream_;
  std::string out_;  // a short request's head and body, together
};

}  // namespace

std::unique_ptr<Client> connect_beast_tls_client(const Endpoint& server, const std::string& codec) {
  (void)find_codec(codec);  // an unknown codec is refused before connecting
  return make_client(std::make_unique<TlsWire>(server), server, codec);
}

}  // namespace wsb::beast_stack
