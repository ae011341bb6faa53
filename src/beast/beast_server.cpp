// The beast stack's connection handling, shaped like Beast's own
// http_server_async example: an io_context run by
// ServerConcurrency::io_threads threads, one asynchronous session per
// connection with a deadline on every read and write, limits (413, 431,
// timeouts, connections), keep-alive, a graceful stop. What a request does
// is RestHandler's business (src/rest/rest_handler.h);
// docs/servers/stacks/beast.md has the design.
#include <valgrind/valgrind.h>

#include <array>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/buffer_traits.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <vector>

#include "beast/beast_rest.h"
#include "beast/beast_stack.h"
#include "beast/server_setup.h"
#include "beast/timed_socket.h"  // kReadBufferBytes
#include "common/clock.h"
#include "common/codec.h"
#include "common/phases.h"
#include "common/placement.h"
#include "common/service.h"
#include "rest/http_negotiation.h"
#include "rest/rest_handler.h"

namespace wsb::beast_stack {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

using rest::RestHandler;
using rest::RestResponse;

// After a reply that closes the connection (an error the connection cannot
// recover from, or Connection: close), what the client still sends is read
// and discarded for up to kLingerTotal, kLingerIdle at a time: closing a
// socket with unread input makes the kernel send a reset, which can destroy
// the reply before the client has read it (a client still uploading an
// over-limit body would see "connection reset" instead of the 413).
constexpr std::chrono::milliseconds kLingerIdle{500};
constexpr std::chrono::milliseconds kLingerTotal{5000};
// How often the server looks for sessions past their deadline: timeouts
// fire up to this late. Under valgrind, which runs the server about 50x
// slower, a sweep every 250 ms of wall time would fall into each counted
// call 50x as often as natively and make counts vary with the machine's
// load; there it sweeps every 10 s, about as often per call as natively.
const std::chrono::milliseconds kSweepPeriod{[] { return RUNNING_ON_VALGRIND ? 10'000 : 250; }()};
// Connections accepted in one turn of the acceptor at most.
constexpr int kAcceptBurst = 64;

// ---- one connection ----

class Session;

// The sessions alive, for the connection limit and for stop(). Sessions
// end on the I/O threads; stop() and the acceptor see them through this.
class SessionRegistry {
 public:
  explicit SessionRegistry(int max_connections) : max_(max_connections) {}

  // Registers a new session unless the server is stopping.
  bool add(Session* s, std::weak_ptr<Session> weak) {
    const std::lock_guard lock(mutex_);
    if (stopping_) return false;
    sessions_.emplace(s, std::move(weak));
    return true;
  }
  // Deregisters; true if the acceptor waits for a free slot and should
  // resume.
  bool remove(Session* s) {
    const std::lock_guard lock(mutex_);
    sessions_.erase(s);
    if (!accept_paused_ || stopping_ || full()) return false;
    accept_paused_ = false;
    return true;
  }
  // True if the acceptor may accept now; otherwise it pauses until a
  // session ends (remove() says when).
  bool may_accept() {
    const std::lock_guard lock(mutex_);
    if (stopping_) return false;
    accept_paused_ = full();
    return !accept_paused_;
  }
  // Marks the server stopping and returns the sessions still alive.
  std::vector<std::shared_ptr<Session>> stop() {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    return alive_locked();
  }
  std::vector<std::shared_ptr<Session>> alive() {
    const std::lock_guard lock(mutex_);
    return alive_locked();
  }

 private:
  std::vector<std::shared_ptr<Session>> alive_locked() {
    std::vector<std::shared_ptr<Session>> alive;
    for (auto& [raw, weak] : sessions_)
      if (auto s = weak.lock()) alive.push_back(std::move(s));
    return alive;
  }

  bool full() const { return sessions_.size() >= static_cast<std::size_t>(max_); }

  const int max_;
  std::mutex mutex_;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions_;
  bool accept_paused_ = false;
  bool stopping_ = false;
};

// One connection: read a request, hand it to RestHandler, write the reply,
// again while the connection is kept alive. Every step is an asynchronous
// operation holding the session alive (shared_from_this), as in Beast's
// examples; each read and write has a deadline. Reads feed Beast's request
// parser directly (basic_parser::put, what http::async_read does inside,
// without its composed operation per read); the reply goes out as a fixed
// header and the body in one writev (ResponseHead).
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket&& socket, Service& service, const ServerOptions& options,
          SessionRegistry& registry, std::function<void()> resume_accept)
      : options_(options),
        registry_(registry),
        resume_accept_(std::move(resume_accept)),
        socket_(std::move(socket)),
        probe_(ConnectionProbe::for_socket(socket_.native_handle())),
        handler_(service) {
    buffer_.reserve(kReadBufferBytes);
    beast::error_code ignored;  // a blocking socket still works, one round trip slower
    socket_.non_blocking(true, ignored);
  }

  ~Session() {
    if (registry_.remove(this)) resume_accept_();
  }

  void start() {
    // On the session's executor (its strand with several I/O threads).
    net::dispatch(socket_.get_executor(),
                  beast::bind_front_handler(&Session::read_request, shared_from_this()));
  }

  // Closes the session if its current read or write has outlived its
  // deadline (the server's sweep calls this).
  void close_if_overdue(std::int64_t now) {
    const std::int64_t deadline = deadline_ns_.load(std::memory_order_relaxed);
    if (deadline != 0 && now > deadline) close();
  }

  // stop(): ends whatever the session waits for; its handlers then see
  // operation_aborted and let it go.
  void close() {
    net::post(socket_.get_executor(), [self = shared_from_this()] {
      self->closing_ = true;
      beast::error_code ignored;
      self->socket_.close(ignored);
    });
  }

 private:
  // How long one read or write may take: one deadline per operation, so
  // the idle wait and a trickled request share it.
  std::chrono::nanoseconds timeout() const {
    return std::chrono::seconds(
        std::min(options_.limits.keepalive_timeout_s, options_.concurrency.request_timeout_s));
  }
  // Not tcp_stream::expires_after: its timer, armed and cancelled around
  // every operation, made a ping round trip cost 1.7x the instructions
  // (docs/servers/stacks/beast.md). A clock read here and the server's sweep do
  // the same job.
  void expires_after(std::chrono::nanoseconds t) {
    deadline_ns_.store(now_ns() + t.count(), std::memory_order_relaxed);
  }

  void read_request() {
    if (closing_) return;
    configure_parser(next_parser(parser_, arena_, std::move(request_body_)), options_.limits);
    expires_after(timeout());
    parse();  // a pipelined request may be in the buffer already
  }

  // Parses what the buffer holds; reads more while the request is not
  // whole. The parser stops once after the header (eager is off until it
  // is checked) and keeps what it cannot use yet in the buffer.
  void parse() {
    beast::error_code ec;
    while (buffer_.size() != 0 && !parser_->is_done()) {
      const bool had_header = parser_->is_header_done();
      const std::size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec == http::error::need_more || (!ec && used == 0)) break;
      if (ec) return on_request(ec);
      if (!had_header && parser_->is_header_done() && !header_checked()) return;
    }
    if (parser_->is_done()) return on_request({});
    read_more();
  }

  void read_more() {
    // As http::async_read sizes its reads: the buffer's free space, at
    // least 512 bytes, at most 64 KiB.
    const std::size_t size = std::min<std::size_t>(
        std::max<std::size_t>(512, buffer_.capacity() - buffer_.size()), kReadBufferBytes);
    socket_.async_read_some(buffer_.prepare(size),
                            beast::bind_front_handler(&Session::on_read, shared_from_this()));
  }

  void on_read(beast::error_code ec, std::size_t n) {
    buffer_.commit(n);
    if (ec == net::error::eof) {
      // As Beast's read: the end of the stream inside a message is
      // partial_message, between messages end_of_stream.
      if (parser_->got_some())
        parser_->put_eof(ec);
      else
        ec = http::error::end_of_stream;
    }
    if (ec) return on_request(ec);
    parse();
  }

  // The header is in: the field limit, then Expect: 100-continue. False if
  // the session went on elsewhere (a refusal or the interim reply).
  bool header_checked() {
    header_ = scan_header(parser_->get());
    if (header_.fields > options_.limits.max_header_fields) {
      on_request(http::error::header_limit);
      return false;
    }
    parser_->eager(true);  // the body as far as the buffer holds it
    // curl sends Expect: 100-continue before a large body and waits a
    // second for this before sending anyway.
    if (parser_->is_done() || parser_->get().version() < 11 ||
        !beast::iequals(header_.expect, "100-continue"))
      return true;
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    net::async_write(socket_, net::buffer(kContinue.data(), kContinue.size()),
                     [self = shared_from_this()](beast::error_code ec, std::size_t) {
                       if (!ec) self->parse();
                     });
    return false;
  }

  void on_request(beast::error_code ec) {
    if (ec) return refuse_unreadable(ec);
    Request& req = parser_->get();
    // The served time starts as the request is whole, on a read of its own
    // (Beast's read of the request, including its HTTP parse, is the
    // request's transfer) and ends before the reply's write.
    probe_.serving_starts();
    // No clock read unless the probe or the client wants the points.
    const std::int64_t received = probe_.active() || header_.server_timing ? now_ns() : 0;
    probe_.request_read(received);

    // Beast's parser accepts HTTP/1.0 and HTTP/1.1 only (bad_version, a
    // 400, otherwise).
    handler_.handle(rest_request(req, header_, received), reply_);

    ++served_;
    const int max_requests = options_.concurrency.max_keepalive_requests;
    // The parser's reading of Connection, as Beast's message::keep_alive().
    keep_alive_ = parser_->keep_alive() && (max_requests == 0 || served_ < max_requests);
    head_ = response_head_.of(req.version(), keep_alive_, reply_);
    request_body_ = std::move(req.body());
    probe_.reply_handed();
    write_response();
  }

  // Straight to the socket first, as nginx writes: a reply the socket's
  // send buffer takes whole (every small one) goes out in this call, with
  // no completion to queue and no extra turn of the event loop; what it
  // does not take waits for the socket. Pipelined requests behind it are
  // served from a posted handler, so a long pipeline does not recurse.
  void write_response() {
    expires_after(timeout());
    beast::buffers_suffix<std::array<net::const_buffer, 2>> reply(
        std::array<net::const_buffer, 2>{net::buffer(head_), net::buffer(response_body_)});
    beast::error_code ec;
    const std::size_t sent =
        socket_.write_some(reply, ec);  // one sendmsg; the socket is non-blocking
    if (ec && ec != net::error::would_block) return;
    reply.consume(ec ? 0 : sent);
    if (beast::buffer_bytes(reply) == 0) {
      if (buffer_.size() == 0) return on_write({}, sent);
      return net::post(socket_.get_executor(),
                       beast::bind_front_handler(&Session::on_write, shared_from_this(),
                                                 beast::error_code{}, sent));
    }
    net::async_write(socket_, reply,
                     beast::bind_front_handler(&Session::on_write, shared_from_this()));
  }

  void on_write(beast::error_code ec, std::size_t) {
    if (ec) return;
    if (!keep_alive_) return linger_close();
    read_request();
  }

  // A request that could not be read whole: answered where HTTP has an
  // answer, then the connection is closed (its framing is lost).
  void refuse_unreadable(const beast::error_code& ec) {
    // Otherwise the client closed between requests, the deadline passed, or
    // the socket failed (or stop() closed it): nothing to answer.
    if (!refusal_of(ec, options_.limits, reply_)) return;
    keep_alive_ = false;
    head_ = response_head_.of(11, keep_alive_, reply_);
    write_response();
  }

  // Half-closes, then discards input until the client closes or the
  // linger time is up (see kLingerTotal).
  void linger_close() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    linger_until_ = std::chrono::steady_clock::now() + kLingerTotal;
    linger_read();
  }

  void linger_read() {
    if (closing_ || std::chrono::steady_clock::now() >= linger_until_) return;
    expires_after(kLingerIdle);
    socket_.async_read_some(net::buffer(sink_),
                            [self = shared_from_this()](beast::error_code ec, std::size_t) {
                              if (!ec) self->linger_read();
                            });
  }

  const ServerOptions& options_;
  SessionRegistry& registry_;
  std::function<void()> resume_accept_;
  tcp::socket socket_;
  ConnectionProbe probe_;
  beast::flat_buffer buffer_;  // bytes read past the current request stay here
  FieldArena arena_;           // the current request's fields (before parser_, which frees into it)
  std::optional<RequestParser> parser_;
  // Bodies keep their capacity across requests: a 90 MB body is not
  // allocated and page-faulted in again on every call.
  std::string request_body_;
  std::string response_body_;
  HeaderView header_;  // the current request's fields the session and handler read
  ResponseHead response_head_;
  std::string_view head_;  // the reply's status line and header, in response_head_
  RestHandler handler_;
  RestResponse reply_{response_body_};        // its strings keep their capacity too
  std::atomic<std::int64_t> deadline_ns_{0};  // now_ns() past which the sweep closes it
  int served_ = 0;                            // requests answered on this connection
  bool keep_alive_ = true;                    // of the reply being written
  bool closing_ = false;                      // stop() closed the stream
  std::chrono::steady_clock::time_point linger_until_;
  std::array<char, 16 * 1024> sink_{};  // what a lingering client still sends
};

// ---- the server ----

class BeastServer final : public Server {
 public:
  BeastServer(Service& service, const ServerOptions& options)
      : service_(service),
        options_(options),
        io_(std::max(1, options.concurrency.io_threads)),
        acceptor_(net::make_strand(io_)),
        registry_(std::max(1, options.concurrency.max_connections)) {
    endpoint_ = listen(acceptor_, io_, options, "beast");
    acceptor_.non_blocking(true);
    accept();
    sweep();
    start_io_threads(io_, options_, threads_, [this] { stop(); });
  }

  ~BeastServer() override { stop(); }

  Endpoint endpoint() const override { return endpoint_; }

  // Graceful: no new connections, every session's socket closed (a
  // request being handled finishes first: the close waits its turn on the
  // session's executor), then the threads return once nothing is left.
  void stop() override {
    const std::lock_guard stop_lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    for (auto& session : registry_.stop()) session->close();
    net::post(acceptor_.get_executor(), [this] {
      boost::system::error_code ignored;
      acceptor_.close(ignored);
      sweep_timer_.cancel();
    });
    for (auto& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void accept() {
    if (!registry_.may_accept()) return;  // resumed when a session ends
    acceptor_.async_accept(session_executor(io_, options_),
                           beast::bind_front_handler(&BeastServer::on_accept, this));
  }

  void on_accept(beast::error_code ec, tcp::socket socket) {
    if (ec == net::error::operation_aborted || !acceptor_.is_open()) return;
    if (ec) {
      // Out of descriptors or memory, or a connection aborted before
      // accept: keep serving the others, after a pause that stops a spin
      // while descriptors are exhausted.
      retry_.emplace(acceptor_.get_executor(), std::chrono::milliseconds(10));
      retry_->async_wait([this](beast::error_code) { accept(); });
      return;
    }
    start_session(std::move(socket));
    // The rest of the listen queue in the same turn, as nginx's
    // multi_accept does: 1000 clients connecting at once would otherwise
    // wait for one event-loop round each, behind every busy session.
    for (int i = 0; i < kAcceptBurst && registry_.may_accept(); ++i) {
      tcp::socket next(session_executor(io_, options_));
      acceptor_.accept(next, ec);  // the acceptor is non-blocking
      if (ec) break;
      start_session(std::move(next));
    }
    accept();
  }

  void start_session(tcp::socket socket) {
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    auto session = std::make_shared<Session>(std::move(socket), service_, options_, registry_,
                                             [this] { resume_accept(); });
    if (registry_.add(session.get(), session)) session->start();
  }

  // Every kSweepPeriod, closes the sessions whose read or write has
  // outlived its deadline.
  void sweep() {
    sweep_timer_.expires_after(kSweepPeriod);
    sweep_timer_.async_wait([this](beast::error_code ec) {
      if (ec || !acceptor_.is_open()) return;
      const std::int64_t now = now_ns();
      for (auto& session : registry_.alive()) session->close_if_overdue(now);
      sweep();
    });
  }

  void resume_accept() {
    net::post(acceptor_.get_executor(), [this] { accept(); });
  }

  Service& service_;
  const ServerOptions options_;
  net::io_context io_;
  tcp::acceptor acceptor_;
  SessionRegistry registry_;
  Endpoint endpoint_;
  std::optional<net::steady_timer> retry_;
  net::steady_timer sweep_timer_{acceptor_.get_executor()};
  std::mutex stop_mutex_;
  bool stopped_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace

std::unique_ptr<Server> start_beast_server(Service& service, const ServerOptions& options) {
  return std::make_unique<BeastServer>(service, options);
}

}  // namespace wsb::beast_stack
