// The Beast anchor (beast_anchor.h): Beast 1.74's http_server_async and
// http_client_sync examples, cut down to ping and echo. Where it departs
// from them, a comment says why; the departures keep the bytes on the wire
// and the codec work those of rtt/beast/json, so that the stack's row over
// this one shows only what wsbench adds.
#include "anchors/beast/beast_anchor.h"

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/strand.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <future>
#include <optional>
#include <thread>

#include "anchors/ping_echo_client.h"
#include "common/codec.h"
#include "common/http_date.h"
#include "common/placement.h"
#include "common/service.h"  // kPingReply

namespace wsb::anchors::beast {
namespace {

namespace bst = boost::beast;
namespace http = bst::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

constexpr char kJson[] = "application/json";
// The read buffer's room, reserved as the beast stack reserves its own
// (src/beast/timed_socket.h). The examples' flat_buffer starts empty, and
// Beast reads max(512, its free room) bytes at a time: a 175 KB body then
// takes some 340 reads on each side, kernel time callgrind does not count
// (a 128 KiB echo took 2-4x the stack's time at 1.1x its instructions).
constexpr std::size_t kReadBufferBytes = 64 * 1024;

// The example's handle_request for this API's two targets: the reply's
// body is the json codec's, as the beast stack's REST handler writes it.
// The example also sets a Server field; the stack sends none, so neither
// does this (the same bytes on the wire). The example sends no Date; the
// stack must (RFC 9110 6.6.1), so this does too, from the same cache.
template <class Send>
void handle_request(Codec& codec, Payload& payload, Request&& req, Send&& send) {
  const auto error = [&req](http::status status, std::string why) {
    Response res{status, req.version()};
    res.set(http::field::content_type, "text/plain");
    res.keep_alive(req.keep_alive());
    res.body() = std::move(why);
    res.prepare_payload();
    res.set(http::field::date, http_date());
    return res;
  };
  if (req.method() == http::verb::get && req.target() == "/ping") {
    payload = Text{kPingReply};
  } else if (req.method() == http::verb::post && req.target() == "/echo") {
    try {
      codec.decode(req.body(), payload);
    } catch (const DecodeError& e) {
      return send(error(http::status::bad_request, e.what()));
    }
  } else {
    return send(error(http::status::not_found, "no resource here"));
  }
  Response res{http::status::ok, req.version()};
  res.set(http::field::content_type, kJson);
  res.keep_alive(req.keep_alive());
  codec.encode(payload, res.body());
  res.prepare_payload();
  res.set(http::field::date, http_date());
  return send(std::move(res));
}

// The example's session: read a request, answer it, read the next.
class Session : public std::enable_shared_from_this<Session> {
  // The example's send_lambda: the message lives in a shared_ptr until
  // it is written.
  struct SendLambda {
    Session& self;
    void operator()(Response&& msg) const {
      auto sp = std::make_shared<Response>(std::move(msg));
      self.res_ = sp;
      http::async_write(
          self.stream_, *sp,
          bst::bind_front_handler(&Session::on_write, self.shared_from_this(), sp->need_eof()));
    }
  };

 public:
  explicit Session(tcp::socket&& socket) : stream_(std::move(socket)), lambda_{*this} {
    buffer_.reserve(kReadBufferBytes);  // not in the example (kReadBufferBytes)
  }

  void run() {
    net::dispatch(stream_.get_executor(),
                  bst::bind_front_handler(&Session::do_read, shared_from_this()));
  }

 private:
  void do_read() {
    req_ = {};
    stream_.expires_after(std::chrono::seconds(30));
    http::async_read(stream_, buffer_, req_,
                     bst::bind_front_handler(&Session::on_read, shared_from_this()));
  }

  void on_read(bst::error_code ec, std::size_t) {
    // The example reports other errors on stderr; here the peer's close or
    // a failed read ends the session alike (no probe, nothing to record).
    if (ec) return do_close();
    handle_request(*codec_, payload_, std::move(req_), lambda_);
  }

  void on_write(bool close, bst::error_code ec, std::size_t) {
    if (ec || close) return do_close();
    res_ = nullptr;
    do_read();
  }

  void do_close() {
    bst::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }

  bst::tcp_stream stream_;
  bst::flat_buffer buffer_;
  Request req_;
  std::shared_ptr<void> res_;
  SendLambda lambda_;
  // The example serves files; this serves json bodies, with one codec per
  // connection as the beast stack has (codecs are not thread-safe).
  std::unique_ptr<Codec> codec_ = find_codec("json").make();
  Payload payload_;
};

// The example's listener and main: an acceptor on a strand, a session per
// connection on a strand of its own, one thread running the io_context.
class AnchorServer final : public Server {
 public:
  explicit AnchorServer(const ServerOptions& options)
      : io_(std::make_unique<net::io_context>(1)),
        acceptor_(std::make_unique<tcp::acceptor>(net::make_strand(*io_))) {
    try {
      tcp::resolver resolver(*io_);
      const tcp::endpoint ep =
          resolver
              .resolve(options.listen.host, std::to_string(options.listen.port),
                       tcp::resolver::passive | tcp::resolver::numeric_service)
              .begin()
              ->endpoint();
      acceptor_->open(ep.protocol());
      acceptor_->set_option(net::socket_base::reuse_address(true));
      acceptor_->bind(ep);
      acceptor_->listen(net::socket_base::max_listen_connections);
      endpoint_ = Endpoint{options.listen.host, acceptor_->local_endpoint().port()};
    } catch (const boost::system::system_error& e) {
      throw std::runtime_error("beast anchor: cannot listen on " + options.listen.to_string() +
                               ": " + e.code().message());
    }
    do_accept();
    std::promise<void> pinned;
    auto started = pinned.get_future();
    thread_ = std::thread([this, cpu = options.cpu, pinned = std::move(pinned)]() mutable {
      try {
        pin_current_thread(cpu);
      } catch (...) {
        pinned.set_exception(std::current_exception());
        return;
      }
      pinned.set_value();
      io_->run();
    });
    try {
      started.get();
    } catch (...) {
      stop();
      throw;
    }
  }

  ~AnchorServer() override { stop(); }

  Endpoint endpoint() const override { return endpoint_; }

  // The example never stops. Here: the io_context stops, its thread
  // returns, and destroying the io_context destroys the handlers still
  // queued, and with them the sessions and their sockets.
  void stop() override {
    if (!io_) return;
    io_->stop();
    if (thread_.joinable()) thread_.join();
    acceptor_.reset();
    io_.reset();
  }

 private:
  void do_accept() {
    acceptor_->async_accept(net::make_strand(*io_),
                            bst::bind_front_handler(&AnchorServer::on_accept, this));
  }

  void on_accept(bst::error_code ec, tcp::socket socket) {
    if (!ec) {
      // Not in the example: the beast stack's server sets it, and both
      // must take the same kernel path.
      socket.set_option(tcp::no_delay(true), ec);
      std::make_shared<Session>(std::move(socket))->run();
    }
    do_accept();
  }

  std::unique_ptr<net::io_context> io_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  Endpoint endpoint_;
  std::thread thread_;
};

// The example's client, kept connected: a request and a response made per
// call, the flat_buffer kept, as the example keeps it for its one read.
class AnchorClient final : public PingEchoClient {
 public:
  explicit AnchorClient(const Endpoint& server) : host_(server.to_string()), stream_(io_) {
    bst::error_code ec;
    tcp::resolver resolver(io_);
    const auto results = resolver.resolve(server.host, std::to_string(server.port), ec);
    if (!ec) stream_.connect(results, ec);
    // Not in the example: the beast stack's client sets it.
    if (!ec) stream_.socket().set_option(tcp::no_delay(true), ec);
    if (ec) throw CallError("beast anchor: cannot connect to " + host_ + ": " + ec.message());
    buffer_.reserve(kReadBufferBytes);  // not in the example (kReadBufferBytes)
  }

  ~AnchorClient() override {
    bst::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  std::string ping() override {
    Request req{http::verb::get, "/ping", 11};
    set_fields(req);
    call(req, payload_);
    auto* text = std::get_if<Text>(&payload_);
    if (text == nullptr) throw CallError("beast anchor: ping returned no text");
    return std::move(text->value);
  }

  void echo(const Payload& in, Payload& out) override {
    Request req{http::verb::post, "/echo", 11};
    set_fields(req);
    req.set(http::field::content_type, kJson);
    // Encoded into a string kept across calls and moved in and out of the
    // request, as the beast stack's client reuses its body: the codec's
    // work is then the stack's, not a growing string's.
    codec_->encode(in, body_);
    req.body() = std::move(body_);
    req.prepare_payload();
    call(req, out);
    body_ = std::move(req.body());
  }

 private:
  // The fields the beast stack's client sends, in its order, so that both
  // put the same bytes on the wire (the example sends Host and User-Agent).
  void set_fields(Request& req) const {
    req.set(http::field::host, host_);
    req.set(http::field::user_agent, "wsbench-beast");
    req.set(http::field::accept, kJson);
  }

  void call(Request& req, Payload& out) {
    bst::error_code ec;
    http::write(stream_, req, ec);
    if (ec) throw CallError("beast anchor: sending the request failed: " + ec.message());
    Response res;
    http::read(stream_, buffer_, res, ec);
    if (ec) throw CallError("beast anchor: reading the response failed: " + ec.message());
    if (res.result() != http::status::ok)
      throw CallError("beast anchor: HTTP " + std::to_string(res.result_int()) + ": " +
                      res.body().substr(0, 200));
    try {
      codec_->decode(res.body(), out);
    } catch (const DecodeError& e) {
      throw CallError(std::string("beast anchor: undecodable response body: ") + e.what());
    }
  }

  const std::string host_;
  net::io_context io_;
  bst::tcp_stream stream_;
  bst::flat_buffer buffer_;
  std::unique_ptr<Codec> codec_ = find_codec("json").make();
  std::string body_;
  Payload payload_;
};

}  // namespace

std::unique_ptr<Server> start_server(const ServerOptions& options) {
  return std::make_unique<AnchorServer>(options);
}

std::unique_ptr<Client> connect(const Endpoint& server) {
  return std::make_unique<AnchorClient>(server);
}

}  // namespace wsb::anchors::beast
