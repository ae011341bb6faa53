// One connection of the beast and beast-tls servers: the one connection
// loop both run, parameterised on the stream (a Transport: PlainTransport
// in beast_server.cpp, TlsTransport in beast_tls_server.cpp), so that the
// two stacks differ by TLS alone. Read a request, check what HTTP requires
// of it, hand it to RestHandler, write the reply, again while the
// connection is kept alive; a deadline on every step; limits (413, 414,
// 431, timeouts); a refusal drains what the client still sends before the
// close. docs/servers/stacks/beast.md has the design.
//
// A Transport provides: Shared (what its sessions share: nothing, or the
// TLS context), socket() (the TCP layer), handshake(h), async_read_some(
// buffer, h), write_now(buffers, ec) (what goes out without waiting),
// async_send(buffers, h) (the rest), close_notify(h) and is_end(ec).
//
// Internal to src/beast: a Beast header (slow to compile).
#pragma once

#include <malloc.h>

#include <array>
#include <atomic>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/buffer_traits.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "beast/beast_rest.h"
#include "beast/session_registry.h"
#include "beast/timed_socket.h"  // kReadBufferBytes
#include "common/clock.h"
#include "common/phases.h"
#include "rest/rest_handler.h"

namespace wsb::beast_stack {

namespace http = boost::beast::http;

// After a reply that closes the connection (an error the connection cannot
// recover from, or Connection: close), what the client still sends is read
// and discarded for up to kLingerTotal, kLingerIdle at a time: closing a
// socket with unread input makes the kernel send a reset, which can destroy
// the reply before the client has read it (a client still uploading an
// over-limit body would see "connection reset" instead of the 413).
inline constexpr std::chrono::milliseconds kLingerIdle{500};
inline constexpr std::chrono::milliseconds kLingerTotal{5000};
// Buffers at least this large are given back once the connection has
// waited for its next request for ServerLimits::idle_release_ms; smaller
// ones keep their capacity for the life of the connection.
inline constexpr std::size_t kKeptBodyBytes = 1 << 20;

template <class Transport>
class Session final : public SessionBase, public std::enable_shared_from_this<Session<Transport>> {
 public:
  Session(boost::asio::ip::tcp::socket&& socket, typename Transport::Shared& shared,
          Service& service, const ServerOptions& options, SessionRegistry& registry)
      : SessionBase(registry),
        options_(options),
        probe_(ConnectionProbe::for_socket(socket.native_handle())),
        transport_(std::move(socket), shared),
        handler_(service) {
    buffer_.reserve(kReadBufferBytes);
    boost::beast::error_code ignored;  // a blocking socket still works, one round trip slower
    transport_.socket().non_blocking(true, ignored);
  }

  void start() {
    // On the session's executor (its strand with several I/O threads).
    expires_after(timeout());
    boost::asio::dispatch(transport_.socket().get_executor(), [self = this->shared_from_this()] {
      self->transport_.handshake([self](boost::beast::error_code ec) {
        if (!ec) self->read_request();  // otherwise not TLS, or not ours: closed with the session
      });
    });
  }

  void close_if_overdue(std::int64_t now) override {
    const std::int64_t deadline = deadline_ns_.load(std::memory_order_relaxed);
    if (deadline != 0 && now > deadline) close();
  }

  // Gives back the memory of large bodies once the connection has waited
  // for its next request past ServerLimits::idle_release_ms. The wait
  // started when read_request set the deadline: no clock read of its own
  // on the request path.
  void release_if_idle(std::int64_t now) override {
    if (options_.limits.idle_release_ms <= 0 || !big_buffers_.load(std::memory_order_relaxed))
      return;
    const std::int64_t waiting_since =
        deadline_ns_.load(std::memory_order_relaxed) - timeout().count();
    if (now - waiting_since < std::int64_t{options_.limits.idle_release_ms} * 1'000'000) return;
    boost::asio::post(transport_.socket().get_executor(),
                      [self = this->shared_from_this()] { self->release_memory(); });
  }

  void close() override {
    boost::asio::post(transport_.socket().get_executor(), [self = this->shared_from_this()] {
      self->closing_ = true;
      boost::beast::error_code ignored;
      self->transport_.socket().close(ignored);
    });
  }

 private:
  using error_code = boost::beast::error_code;

  // How long one read or write may take: one deadline per operation, so
  // the idle wait and a trickled request share it.
  std::chrono::nanoseconds timeout() const {
    return std::chrono::seconds(
        std::min(options_.limits.keepalive_timeout_s, options_.concurrency.request_timeout_s));
  }
  // Not tcp_stream::expires_after: its timer, armed and cancelled around
  // every operation, made a ping round trip cost 1.7x the instructions
  // (docs/servers/stacks/beast.md). A clock read here and the server's
  // sweep do the same job.
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
    error_code ec;
    while (buffer_.size() != 0 && !parser_->is_done()) {
      const bool had_header = parser_->is_header_done();
      if (had_header) grow_body();
      const std::size_t used = parser_->put(buffer_.data(), ec);
      buffer_.consume(used);
      if (ec == http::error::need_more || (!ec && used == 0)) break;
      if (ec) return on_request(ec);
      if (!had_header && parser_->is_header_done() && !header_checked()) return;
    }
    if (parser_->is_done()) return on_request({});
    // Beast holds a chunk line or a trailer section in the buffer until it
    // is whole, with no limit of its own: they count against the header's.
    if (parser_->is_header_done() && buffer_.size() > options_.limits.max_header_bytes)
      return on_request(http::error::header_limit);
    read_more();
  }

  // A chunked body grows as it arrives. Doubling would leave the blocks it
  // outgrew in the allocator's arena (glibc keeps freed blocks under its
  // mmap threshold, up to 32 MiB, resident): measured, a 32 MiB body
  // peaked at 72 MiB. Past kKeptBodyBytes it is reserved at the body limit
  // at once instead; its pages are touched only as the body arrives, so
  // memory stays within the body and 1 MiB (docs/servers/stacks/beast.md).
  void grow_body() {
    std::string& body = parser_->get().body();
    const std::size_t wanted = body.size() + buffer_.size();
    if (wanted <= body.capacity()) return;
    body.reserve(wanted > kKeptBodyBytes ? std::max(wanted, options_.limits.max_body_bytes)
                                         : std::max(wanted, 2 * body.capacity()));
  }

  void read_more() {
    // As http::async_read sizes its reads: the buffer's free space, at
    // least 512 bytes, at most 64 KiB.
    const std::size_t size = std::min<std::size_t>(
        std::max<std::size_t>(512, buffer_.capacity() - buffer_.size()), kReadBufferBytes);
    transport_.async_read_some(
        buffer_.prepare(size),
        boost::beast::bind_front_handler(&Session::on_read, this->shared_from_this()));
  }

  void on_read(error_code ec, std::size_t n) {
    buffer_.commit(n);
    if (transport_.is_end(ec)) {
      // As Beast's read: the end of the stream inside a message is
      // partial_message, between messages end_of_stream.
      if (parser_->got_some()) {
        ec = {};
        parser_->put_eof(ec);
      } else {
        ec = http::error::end_of_stream;
      }
    }
    if (ec) return on_request(ec);
    parse();
  }

  // The header is in: the field limit, Host and framing, then Expect:
  // 100-continue. False if the session went on elsewhere (a refusal or
  // the interim reply).
  bool header_checked() {
    header_ = scan_header(parser_->get());
    if (header_.fields > options_.limits.max_header_fields) {
      on_request(http::error::header_limit);
      return false;
    }
    if (framing_refusal(parser_->get(), header_, reply_)) {
      send_refusal();
      return false;
    }
    parser_->eager(true);  // the body as far as the buffer holds it
    // curl sends Expect: 100-continue before a large body and waits a
    // second for this before sending anyway.
    if (parser_->is_done() || parser_->get().version() < 11 ||
        !boost::beast::iequals(header_.expect, "100-continue"))
      return true;
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    transport_.async_send(std::array<boost::asio::const_buffer, 1>{boost::asio::buffer(
                              kContinue.data(), kContinue.size())},
                          [self = this->shared_from_this()](error_code ec, std::size_t) {
                            if (!ec) self->parse();
                          });
    return false;
  }

  void on_request(error_code ec) {
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
    // A reply to HEAD is the GET's header without its body.
    send_body_ = req.method() != http::verb::head;
    request_body_ = std::move(req.body());
    if (request_body_.capacity() >= kKeptBodyBytes || response_body_.capacity() >= kKeptBodyBytes)
      big_buffers_.store(true, std::memory_order_relaxed);
    probe_.reply_handed();
    write_response();
  }

  // Straight to the socket first where the stream allows it, as nginx
  // writes: a reply the socket's send buffer takes whole (every small one)
  // goes out in this call, with no completion to queue and no extra turn of
  // the event loop; what it does not take waits for the socket. Pipelined
  // requests behind it are served from a posted handler, so a long
  // pipeline does not recurse.
  void write_response() {
    expires_after(timeout());
    const std::string_view body = send_body_ ? std::string_view(response_body_) : "";
    boost::beast::buffers_suffix<std::array<boost::asio::const_buffer, 2>> reply(
        std::array<boost::asio::const_buffer, 2>{boost::asio::buffer(head_),
                                                 boost::asio::buffer(body)});
    error_code ec;
    const std::size_t sent = transport_.write_now(reply, ec);
    if (ec && ec != boost::asio::error::would_block) return;
    reply.consume(sent);
    if (boost::beast::buffer_bytes(reply) == 0) {
      if (buffer_.size() == 0) return on_write({}, sent);
      return boost::asio::post(
          transport_.socket().get_executor(),
          boost::beast::bind_front_handler(&Session::on_write, this->shared_from_this(),
                                           error_code{}, sent));
    }
    transport_.async_send(
        reply, boost::beast::bind_front_handler(&Session::on_write, this->shared_from_this()));
  }

  void on_write(error_code ec, std::size_t) {
    if (ec) return;
    if (!keep_alive_) return linger_close();
    read_request();
  }

  // A request that could not be read whole: answered where HTTP has an
  // answer, then the connection is closed (its framing is lost). The end
  // of the stream between requests gets the transport's close (TLS's
  // close_notify).
  void refuse_unreadable(const error_code& ec) {
    // Beast sets the target once the request line is whole.
    std::optional<std::string_view> start_line;
    if (!parser_->is_header_done() && parser_->get().target().empty())
      start_line.emplace(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    if (refusal_of(ec, options_.limits, reply_, start_line)) return send_refusal();
    if (ec == http::error::end_of_stream)
      transport_.close_notify([self = this->shared_from_this()](error_code) {});
    // Otherwise the deadline passed or the socket failed (or stop() closed
    // it): nothing to answer.
  }

  void send_refusal() {
    keep_alive_ = false;
    send_body_ = true;
    head_ = response_head_.of(11, keep_alive_, reply_);
    write_response();
  }

  // The transport's close (TLS's close_notify), a half-close, then input
  // is discarded until the client closes or the linger time is up (see
  // kLingerTotal).
  void linger_close() {
    transport_.close_notify([self = this->shared_from_this()](error_code) {
      error_code ignored;
      self->transport_.socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send, ignored);
      self->linger_until_ = std::chrono::steady_clock::now() + kLingerTotal;
      self->linger_read();
    });
  }

  void linger_read() {
    if (closing_ || std::chrono::steady_clock::now() >= linger_until_) return;
    expires_after(kLingerIdle);
    transport_.socket().async_read_some(
        boost::asio::buffer(sink_), [self = this->shared_from_this()](error_code ec, std::size_t) {
          if (!ec) self->linger_read();
        });
  }

  // On the session's executor: bodies and the handler's decoded payloads
  // over kKeptBodyBytes are freed, if the session still waits for a
  // request (a fresh parser has seen nothing: no write or request body is
  // in flight).
  void release_memory() {
    if (closing_ || parser_->got_some()) return;
    big_buffers_.store(false, std::memory_order_relaxed);
    if (parser_->get().body().capacity() >= kKeptBodyBytes)
      configure_parser(next_parser(parser_, arena_, std::string()), options_.limits);
    if (request_body_.capacity() >= kKeptBodyBytes) std::string().swap(request_body_);
    if (response_body_.capacity() >= kKeptBodyBytes) std::string().swap(response_body_);
    handler_.release_memory();
    // What the codecs freed in pieces under malloc's mmap threshold stays
    // in the I/O thread's arena otherwise (measured: 24 MiB kept after a
    // 24 MiB JSON echo).
    malloc_trim(0);
  }

  const ServerOptions& options_;
  ConnectionProbe probe_;
  Transport transport_;
  boost::beast::flat_buffer buffer_;  // bytes read past the current request stay here
  FieldArena arena_;  // the current request's fields (before parser_, which frees into it)
  std::optional<RequestParser> parser_;
  // Bodies keep their capacity across requests: a 90 MB body is not
  // allocated and page-faulted in again on every call (until the
  // connection idles: release_memory).
  std::string request_body_;
  std::string response_body_;
  HeaderView header_;  // the current request's fields the session and handler read
  ResponseHead response_head_;
  std::string_view head_;  // the reply's status line and header, in response_head_
  rest::RestHandler handler_;
  rest::RestResponse reply_{response_body_};  // its strings keep their capacity too
  std::atomic<std::int64_t> deadline_ns_{0};  // now_ns() past which the sweep closes it
  std::atomic<bool> big_buffers_{false};      // a body over kKeptBodyBytes is kept
  int served_ = 0;                            // requests answered on this connection
  bool keep_alive_ = true;                    // of the reply being written
  bool send_body_ = true;                     // false for a reply to HEAD
  bool closing_ = false;                      // stop() closed the stream
  std::chrono::steady_clock::time_point linger_until_;
  std::array<char, 16 * 1024> sink_{};  // what a lingering client still sends
};

}  // namespace wsb::beast_stack
