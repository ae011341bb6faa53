// The beast stack's connection handling: listen, accept, one thread per
// connection with blocking reads and writes, limits (413, 431, idle
// timeout), keep-alive and closing. What a request does is RestHandler's
// business (src/rest/rest_handler.h); docs/stacks/beast.md has the design.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <charconv>
#include <list>
#include <mutex>
#include <system_error>
#include <thread>

#include "beast/beast_rest.h"
#include "beast/beast_stack.h"
#include "beast/timed_socket.h"
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

// Pending connections the kernel queues before accept().
constexpr int kListenBacklog = 128;
// After a reply that closes the connection (an error the connection cannot
// recover from, or Connection: close), what the client still sends is read
// and discarded for up to kLingerTotal, kLingerIdle at a time: closing a
// socket with unread input makes the kernel send a reset, which can destroy
// the reply before the client has read it (a client still uploading an
// over-limit body would see "connection reset" instead of the 413).
constexpr std::chrono::milliseconds kLingerIdle{500};
constexpr std::chrono::milliseconds kLingerTotal{5000};

// ---- one connection ----

class Session {
 public:
  Session(Service& service, const ServerLimits& limits, int fd)
      : limits_(limits),
        fd_(fd),
        stream_(fd),
        probe_(ConnectionProbe::for_socket(fd)),
        handler_(service) {
    buffer_.reserve(kReadBufferBytes);
  }

  // Serves requests until the client closes, an error ends the connection,
  // or the server shuts the socket down.
  void run() {
    // Without the timeout a silent client would hold this thread forever:
    // refuse the connection instead.
    if (!TimedSocket::set_idle_timeout(fd_, std::chrono::seconds(limits_.keepalive_timeout_s)))
      throw std::system_error(errno, std::generic_category(), "beast: SO_RCVTIMEO");
    while (serve_one()) {
    }
  }

 private:
  // One request and its reply; false when the connection is to be closed.
  bool serve_one() {
    request_body_.clear();  // Beast's string_body appends
    http::request_parser<http::string_body> parser(std::piecewise_construct,
                                                   std::make_tuple(std::move(request_body_)));
    parser.header_limit(kHeaderLimit);
    parser.body_limit(limits_.max_body_bytes);
    beast::error_code ec;
    http::read_header(stream_, buffer_, parser, ec);
    if (!ec && !parser.is_done()) {
      // curl sends Expect: 100-continue before a large body and waits a
      // second for this before sending anyway.
      if (parser.get().version() >= 11 &&
          beast::iequals(parser.get()[http::field::expect], "100-continue")) {
        http::response<http::empty_body> go_on{http::status::continue_, 11};
        http::write(stream_, go_on, ec);
        if (ec) return false;
      }
      http::read(stream_, buffer_, parser, ec);
    }
    if (ec) return refuse_unreadable(ec);
    Request& req = parser.get();
    const bool server_timing = req.find(rest::kTimingRequestHeader) != req.end();
    // No clock read unless the probe or the client wants the points.
    const std::int64_t received = probe_.active() || server_timing ? now_ns() : 0;
    probe_.request_read(received);

    // Beast's parser accepts HTTP/1.0 and HTTP/1.1 only (bad_version, a
    // 400, otherwise).
    handler_.handle(rest_request(req, received, server_timing), reply_);

    Response res(std::piecewise_construct, std::make_tuple(std::move(response_body_)));
    fill_response(req, reply_, res);
    probe_.reply_handed();
    http::write(stream_, res, ec);
    request_body_ = std::move(req.body());
    response_body_ = std::move(res.body());
    if (ec) return false;
    if (!res.keep_alive()) {
      linger_close();
      return false;
    }
    return true;
  }

  // A request that could not be read whole: answered where HTTP has an
  // answer, then the connection is closed (its framing is lost).
  bool refuse_unreadable(const beast::error_code& ec) {
    // Otherwise the client closed between requests, the idle timeout
    // expired, or the socket failed (or stop() shut it down): nothing to
    // answer.
    const std::optional<Response> refusal = refusal_of(ec, limits_);
    if (!refusal) return false;
    const Response& res = *refusal;
    beast::error_code write_ec;
    http::write(stream_, res, write_ec);
    linger_close();
    return false;
  }

  // Half-closes, then discards input until the client closes or the
  // linger time is up (see kLingerTotal).
  void linger_close() {
    ::shutdown(fd_, SHUT_WR);
    TimedSocket::set_idle_timeout(fd_, kLingerIdle);
    const auto deadline = std::chrono::steady_clock::now() + kLingerTotal;
    char sink[16 * 1024];
    beast::error_code ec;
    while (!ec && std::chrono::steady_clock::now() < deadline)
      stream_.read_some(net::buffer(sink), ec);
  }

  const ServerLimits& limits_;
  int fd_;
  TimedSocket stream_;
  ConnectionProbe probe_;
  beast::flat_buffer buffer_;  // bytes read past the current request stay here
  // Bodies keep their capacity across requests: a 90 MB body is not
  // allocated and page-faulted in again on every call.
  std::string request_body_;
  std::string response_body_;
  RestHandler handler_;
  RestResponse reply_{response_body_};  // its strings keep their capacity too
};

// ---- the server ----

class BeastServer final : public Server {
 public:
  BeastServer(Service& service, const ServerOptions& options)
      : service_(service), options_(options), acceptor_(io_) {
    const std::string where = options.listen.to_string();
    try {
      tcp::resolver resolver(io_);
      const auto results =
          resolver.resolve(options.listen.host, std::to_string(options.listen.port),
                           tcp::resolver::passive | tcp::resolver::numeric_service);
      const tcp::endpoint ep = results.begin()->endpoint();
      acceptor_.open(ep.protocol());
      // Lets a restarted server rebind while old connections sit in
      // TIME_WAIT; Linux still refuses a port another socket listens on.
      acceptor_.set_option(net::socket_base::reuse_address(true));
      acceptor_.bind(ep);
      acceptor_.listen(kListenBacklog);
      endpoint_ = Endpoint{options.listen.host, acceptor_.local_endpoint().port()};
    } catch (const boost::system::system_error& e) {
      throw std::runtime_error("beast: cannot listen on " + where + ": " + e.code().message());
    }
    acceptor_thread_ = std::thread([this] { accept_loop(); });
  }

  ~BeastServer() override { stop(); }

  Endpoint endpoint() const override { return endpoint_; }

  void stop() override {
    const std::lock_guard stop_lock(stop_mutex_);
    if (stopped_) return;
    stopped_ = true;
    stopping_ = true;
    // On Linux, shutdown() wakes a thread blocked in accept() on this socket
    // (close() would not).
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    if (acceptor_thread_.joinable()) acceptor_thread_.join();
    std::list<Connection> connections;
    {
      const std::lock_guard lock(mutex_);
      // Wakes each connection thread out of recv()/send(); it then closes
      // its own socket.
      for (const auto& c : connections_)
        if (c.fd >= 0) ::shutdown(c.fd, SHUT_RDWR);
      connections.swap(connections_);
    }
    for (auto& c : connections) c.thread.join();
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  }

 private:
  struct Connection {
    std::thread thread;
    int fd = -1;        // -1 once the thread is closing it; guarded by mutex_
    bool done = false;  // the thread has finished; guarded by mutex_
  };

  void accept_loop() {
    pin_current_thread(options_.cpu);
    for (;;) {
      tcp::socket socket(io_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (stopping_) return;
      if (ec) {
        // Out of descriptors or memory, or a connection aborted before
        // accept: keep serving the others. The pause stops a spin while
        // descriptors are exhausted.
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      socket.set_option(tcp::no_delay(true), ec);
      const std::lock_guard lock(mutex_);
      reap();
      auto& c = connections_.emplace_back();
      c.fd = socket.native_handle();
      c.thread =
          std::thread([this, &c, s = std::move(socket)]() mutable { serve(std::move(s), c); });
    }
  }

  void serve(tcp::socket socket, Connection& c) {
    try {
      pin_current_thread(options_.cpu);
      Session(service_, options_.limits, socket.native_handle()).run();
    } catch (const std::exception&) {
      // Out of memory or a failed pin: this connection ends, the server
      // goes on.
    }
    {
      // Deregister before the descriptor is closed, so stop() never shuts
      // down a number the kernel has already reused.
      const std::lock_guard lock(mutex_);
      c.fd = -1;
    }
    boost::system::error_code ignored;
    socket.close(ignored);
    const std::lock_guard lock(mutex_);
    c.done = true;
  }

  // Joins connection threads that have finished, so a long run with many
  // short connections does not accumulate them. Called with mutex_ held;
  // a finished thread only has to return, which it can without the lock.
  void reap() {
    for (auto it = connections_.begin(); it != connections_.end();) {
      if (it->done) {
        it->thread.join();
        it = connections_.erase(it);
      } else {
        ++it;
      }
    }
  }

  Service& service_;
  const ServerOptions options_;
  net::io_context io_;  // owns the sockets' service; never run (all I/O is blocking)
  tcp::acceptor acceptor_;
  Endpoint endpoint_;
  std::atomic<bool> stopping_{false};
  std::mutex stop_mutex_;
  bool stopped_ = false;
  std::mutex mutex_;
  std::list<Connection> connections_;  // a list: each thread holds a reference to its element
  std::thread acceptor_thread_;
};

}  // namespace

std::unique_ptr<Server> start_beast_server(Service& service, const ServerOptions& options) {
  return std::make_unique<BeastServer>(service, options);
}

}  // namespace wsb::beast_stack
