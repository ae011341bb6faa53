// The beast-tls stack's server, shaped like Beast's http_server_async_ssl
// example: an io_context run by ServerConcurrency::io_threads threads, one
// asynchronous session per connection over beast::ssl_stream<tcp_stream>,
// a deadline (tcp_stream::expires_after) on the handshake and on every
// read and write, http::async_read into the same request parser, limits
// and RestHandler as the beast server's (beast_rest.h), and the TLS
// shutdown when the client ends the connection. The context is
// tls::configure's (src/common/tls.h). It does not share the plain
// server's hand-tuned path (basic_parser::put on the raw socket, one
// sendmsg): TLS records sit between the socket and the parser.
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "beast/beast_rest.h"
#include "beast/beast_stack.h"
#include "beast/server_setup.h"
#include "beast/timed_socket.h"  // kReadBufferBytes
#include "common/clock.h"
#include "common/placement.h"
#include "common/tls.h"

namespace wsb::beast_stack {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
namespace ssl = net::ssl;
using tcp = net::ip::tcp;

class TlsSession;

// The largest TLS record's plaintext.
constexpr std::size_t kTlsRecordBytes = 16 * 1024;

// The sessions alive, for stop().
class Sessions {
 public:
  bool add(TlsSession* s, std::weak_ptr<TlsSession> weak) {
    const std::lock_guard lock(mutex_);
    if (stopping_) return false;
    sessions_.emplace(s, std::move(weak));
    return true;
  }
  void remove(TlsSession* s) {
    const std::lock_guard lock(mutex_);
    sessions_.erase(s);
  }
  std::size_t size() {
    const std::lock_guard lock(mutex_);
    return sessions_.size();
  }
  std::vector<std::shared_ptr<TlsSession>> stop() {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    std::vector<std::shared_ptr<TlsSession>> alive;
    for (auto& [raw, weak] : sessions_)
      if (auto s = weak.lock()) alive.push_back(std::move(s));
    return alive;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<TlsSession*, std::weak_ptr<TlsSession>> sessions_;
  bool stopping_ = false;
};

// One connection: the handshake, then read a request, hand it to
// RestHandler, write the reply, again while the connection is kept alive.
// A client that does not complete the handshake (plaintext, a broken or a
// stalled ClientHello) is closed when the handshake fails or its deadline
// passes.
class TlsSession : public std::enable_shared_from_this<TlsSession> {
 public:
  TlsSession(tcp::socket&& socket, ssl::context& context, Service& service,
             const ServerOptions& options, Sessions& sessions)
      : options_(options),
        sessions_(sessions),
        probe_(ConnectionProbe::for_socket(socket.native_handle())),
        stream_(std::move(socket), context),
        handler_(service) {
    buffer_.reserve(kReadBufferBytes);
  }

  ~TlsSession() { sessions_.remove(this); }

  void start() {
    net::dispatch(stream_.get_executor(),
                  beast::bind_front_handler(&TlsSession::handshake, shared_from_this()));
  }

  void close() {
    net::post(stream_.get_executor(), [self = shared_from_this()] {
      self->closing_ = true;
      beast::error_code ignored;
      beast::get_lowest_layer(self->stream_).socket().close(ignored);
    });
  }

 private:
  // How long the handshake, one read or one write may take, as the plain
  // server's deadline.
  std::chrono::seconds timeout() const {
    return std::chrono::seconds(
        std::min(options_.limits.keepalive_timeout_s, options_.concurrency.request_timeout_s));
  }

  void handshake() {
    beast::get_lowest_layer(stream_).expires_after(timeout());
    stream_.async_handshake(
        ssl::stream_base::server,
        beast::bind_front_handler(&TlsSession::on_handshake, shared_from_this()));
  }

  void on_handshake(beast::error_code ec) {
    if (ec) return;  // not TLS, or not ours: the socket closes with the session
    read_request();
  }

  void read_request() {
    if (closing_) return;
    configure_parser(next_parser(parser_, arena_, std::move(request_body_)), options_.limits);
    beast::get_lowest_layer(stream_).expires_after(timeout());
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&TlsSession::on_header, shared_from_this()));
  }

  // The header is in: the field limit and Expect: 100-continue, then the body.
  void on_header(beast::error_code ec, std::size_t) {
    if (ec) return on_request(ec);
    header_ = scan_header(parser_->get());
    if (header_.fields > options_.limits.max_header_fields)
      return on_request(http::error::header_limit);
    if (!parser_->is_done() && parser_->get().version() >= 11 &&
        beast::iequals(header_.expect, "100-continue")) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      return net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                              [self = shared_from_this()](beast::error_code e, std::size_t) {
                                if (!e) self->read_body();
                              });
    }
    read_body();
  }

  void read_body() {
    http::async_read(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_request(ec); });
  }

  void on_request(beast::error_code ec) {
    if (ec == http::error::end_of_stream) return shut_down();
    if (ec) return refuse_unreadable(ec);
    Request& req = parser_->get();
    probe_.serving_starts();
    const std::int64_t received = probe_.active() || header_.server_timing ? now_ns() : 0;
    probe_.request_read(received);
    handler_.handle(rest_request(req, header_, received), reply_);
    ++served_;
    const int max_requests = options_.concurrency.max_keepalive_requests;
    keep_alive_ = parser_->keep_alive() && (max_requests == 0 || served_ < max_requests);
    head_ = response_head_.of(req.version(), keep_alive_, reply_);
    request_body_ = std::move(req.body());
    probe_.reply_handed();
    write_response();
  }

  // A reply that fits in one TLS record goes out as one (head and body
  // copied together); a longer one as the head, then the body. Not one
  // write of the two buffers: Beast 1.81's ssl_stream stalls on a
  // two-buffer write whose second buffer is over 16 KiB (its flat_stream
  // writes only the first).
  void write_response() {
    beast::get_lowest_layer(stream_).expires_after(timeout());
    if (head_.size() + response_body_.size() <= kTlsRecordBytes) {
      out_.assign(head_).append(response_body_);
      return net::async_write(stream_, net::buffer(out_),
                              beast::bind_front_handler(&TlsSession::on_write, shared_from_this()));
    }
    net::async_write(stream_, net::buffer(head_),
                     [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                       if (ec) return self->on_write(ec, n);
                       net::async_write(self->stream_, net::buffer(self->response_body_),
                                        beast::bind_front_handler(&TlsSession::on_write, self));
                     });
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (ec) return;
    if (!keep_alive_) return shut_down();
    read_request();
  }

  // As the plain server: answered where HTTP has an answer, then closed.
  void refuse_unreadable(const beast::error_code& ec) {
    if (!refusal_of(ec, options_.limits, reply_)) return;  // a timeout, a closed socket
    keep_alive_ = false;
    head_ = response_head_.of(11, keep_alive_, reply_);
    write_response();
  }

  // The TLS close (close_notify), as the example ends a connection; the
  // socket closes with the session.
  void shut_down() {
    beast::get_lowest_layer(stream_).expires_after(timeout());
    stream_.async_shutdown([self = shared_from_this()](beast::error_code) {});
  }

  const ServerOptions& options_;
  Sessions& sessions_;
  ConnectionProbe probe_;
  beast::ssl_stream<beast::tcp_stream> stream_;
  beast::flat_buffer buffer_;  // bytes read past the current request stay here
  FieldArena arena_;           // the current request's fields (before parser_, which frees into it)
  std::optional<RequestParser> parser_;
  std::string request_body_;
  std::string response_body_;
  std::string out_;  // a short reply's head and body, together
  HeaderView header_;
  ResponseHead response_head_;
  std::string_view head_;
  rest::RestHandler handler_;
  rest::RestResponse reply_{response_body_};
  int served_ = 0;
  bool keep_alive_ = true;
  bool closing_ = false;
};

class BeastTlsServer final : public Server {
 public:
  BeastTlsServer(Service& service, const ServerOptions& options)
      : service_(service),
        options_(options),
        context_(ssl::context::tls_server),
        io_(std::max(1, options.concurrency.io_threads)),
        acceptor_(net::make_strand(io_)) {
    tls::configure(context_.native_handle(), tls::Side::server);
    endpoint_ = listen(acceptor_, io_, options, "beast-tls");
    accept();
    start_io_threads(io_, options_, threads_, [this] { stop(); });
  }

  ~BeastTlsServer() override { stop(); }

  Endpoint endpoint() const override { return endpoint_; }

  void stop() override {
    const std::lock_guard stop_lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    for (auto& session : sessions_.stop()) session->close();
    net::post(acceptor_.get_executor(), [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      if (retry_) retry_->cancel();
    });
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void accept() {
    acceptor_.async_accept(session_executor(io_, options_),
                           beast::bind_front_handler(&BeastTlsServer::on_accept, this));
  }

  void on_accept(beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // As the plain server: keep serving after a pause.
      retry_.emplace(acceptor_.get_executor(), std::chrono::milliseconds(10));
      retry_->async_wait([this](beast::error_code e) {
        if (!e) accept();
      });
      return;
    }
    if (sessions_.size() >=
        static_cast<std::size_t>(std::max(1, options_.concurrency.max_connections))) {
      // Over the connection limit: refused by closing, as no TLS is spoken yet.
      beast::error_code ignored;
      socket.close(ignored);
    } else {
      beast::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      auto session =
          std::make_shared<TlsSession>(std::move(socket), context_, service_, options_, sessions_);
      if (sessions_.add(session.get(), session)) session->start();
    }
    accept();
  }

  Service& service_;
  const ServerOptions options_;
  ssl::context context_;
  net::io_context io_;
  tcp::acceptor acceptor_;
  Sessions sessions_;
  Endpoint endpoint_;
  std::optional<net::steady_timer> retry_;
  std::mutex stop_mutex_;
  bool stopped_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<Server> start_beast_tls_server(Service& service, const ServerOptions& options) {
  return std::make_unique<BeastTlsServer>(service, options);
}

}  // namespace wsb::beast_stack
