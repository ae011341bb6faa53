// The beast stack's HTTP/1.1 server.
//
// Design: one thread per connection with blocking reads and writes. The
// benchmark keeps one request outstanding per connection, and then the
// fewest hand-offs win: the thread that reads a request decodes it, runs the
// service, encodes and writes the reply, with no reactor wake-up, queue or
// cross-thread hand-off in between (an io_context with N threads would add
// at least the reactor's epoll round per request, and a hand-off whenever
// another thread picks up the completion). Connections are few (one per
// benchmark client, plus set-up), so a thread each is cheap. Every thread
// pins itself to ServerOptions::cpu first.
//
// Phase points (server_probe()): kRequestReceived when the header and body
// are fully read; kParsed after the body is decoded (for a request without
// a body: after routing and content negotiation); kServiced after the
// Service call; kMarshalled after the response body is encoded, before the
// write. All four are marked, so no server phase merges; serialising the
// response header falls in response_transfer. The same intervals go out in
// a Server-Timing header (parse, service, marshal), so phases can be split
// across hosts too.
//
// Limits: request bodies over ServerLimits::max_body_bytes get 413 (Beast's
// parser checks Content-Length against its body_limit as soon as the header
// is in); headers over kHeaderLimit get 431; a connection idle for
// ServerLimits::keepalive_timeout_s (between requests or inside one) is
// closed. After a reply that ends the connection the server drains what the
// client still sends for a while before closing (see linger_close).
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

#include "common/clock.h"
#include "common/codec.h"
#include "common/phases.h"
#include "common/placement.h"
#include "common/service.h"
#include "rest/beast_parts.h"
#include "rest/beast_socket.h"
#include "rest/http_negotiation.h"

namespace wsb::rest {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

using Request = http::request<http::string_body>;
using Response = http::response<http::string_body>;

// Request line plus header fields. 16 KiB is generous for this API (the
// longest header a client sends is a SOAP Content-Type) and keeps a header
// flood cheap to refuse.
constexpr std::uint32_t kHeaderLimit = 16 * 1024;
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
// Error replies quote at most this much of a client-supplied string.
constexpr std::size_t kQuoteLimit = 100;

// A reply other than success, raised anywhere in the request path.
struct HttpError {
  http::status status;
  std::string message;
  std::string_view allow = {};  // for 405
};

std::string quote(std::string_view s) {
  if (s.size() > kQuoteLimit) return "'" + std::string(s.substr(0, kQuoteLimit)) + "...'";
  return "'" + std::string(s) + "'";
}

// Beast's parse errors (bad method, bad field, ...), as opposed to socket
// errors.
bool is_http_error(const beast::error_code& ec) {
  return ec.category() == make_error_code(http::error::bad_method).category();
}

// ---- routing ----

enum class Route { ping, payload, echo, queues, queue, primes };

struct Target {
  Route route;
  std::string_view arg;  // payload label, queue id or prime count
};

std::optional<Target> route_of(std::string_view path) {
  auto tail = [&](std::string_view prefix, std::string_view& arg) {
    if (path.size() <= prefix.size() || path.substr(0, prefix.size()) != prefix) return false;
    arg = path.substr(prefix.size());
    return true;
  };
  std::string_view arg;
  if (path == "/ping") return Target{Route::ping, {}};
  if (path == "/echo") return Target{Route::echo, {}};
  if (path == "/queues") return Target{Route::queues, {}};
  // Labels contain slashes ("ints/3200"); queue ids and counts do not.
  if (tail("/payloads/", arg)) return Target{Route::payload, arg};
  if (tail("/queues/", arg) && arg.find('/') == std::string_view::npos)
    return Target{Route::queue, arg};
  if (tail("/primes/", arg) && arg.find('/') == std::string_view::npos)
    return Target{Route::primes, arg};
  return std::nullopt;
}

// The methods a route allows, for the check and the Allow header of a 405.
std::string_view allowed_methods(Route route) {
  switch (route) {
    case Route::ping:
    case Route::payload:
    case Route::primes:
      return "GET";
    case Route::echo:
    case Route::queues:
      return "POST";
    case Route::queue:
      return "GET, PUT, DELETE";
  }
  return "";
}

bool allows(Route route, http::verb method) {
  switch (route) {
    case Route::ping:
    case Route::payload:
    case Route::primes:
      return method == http::verb::get;
    case Route::echo:
    case Route::queues:
      return method == http::verb::post;
    case Route::queue:
      return method == http::verb::get || method == http::verb::put ||
             method == http::verb::delete_;
  }
  return false;
}

// "parse;dur=0.0123, service;dur=0.0041, marshal;dur=0.0020" (milliseconds).
void append_duration(std::string& out, const char* name, std::int64_t ns) {
  char buf[32];
  if (!out.empty()) out += ", ";
  out += name;
  out += ";dur=";
  out.append(buf, std::to_chars(buf, buf + sizeof buf, static_cast<double>(ns) * 1e-6,
                                std::chars_format::fixed, 4)
                      .ptr);
}

// ---- one connection ----

class Session {
 public:
  Session(Service& service, const ServerLimits& limits, int fd)
      : service_(service), limits_(limits), fd_(fd), stream_(fd) {
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
    server_probe().mark(kRequestReceived, marks_[0] = now_ns());

    Request& req = parser.get();
    // Beast's parser accepts HTTP/1.0 and HTTP/1.1 only (bad_version, a
    // 400, otherwise).
    response_body_.clear();  // a reply without a body must not send the last one's
    Response res(std::piecewise_construct, std::make_tuple(std::move(response_body_)));
    res.version(req.version());
    try {
      respond(req, res);
    } catch (const HttpError& e) {
      error_reply(res, e);
    } catch (const DecodeError& e) {
      error_reply(res, {http::status::bad_request, e.what()});
    } catch (const ServiceError& e) {
      error_reply(res, {static_cast<http::status>(e.http_status()), e.what()});
    } catch (const std::exception& e) {
      // E.g. a payload the response codec cannot carry (a NUL in XML).
      error_reply(res, {http::status::internal_server_error, e.what()});
    }
    res.keep_alive(req.keep_alive());
    // A 204 carries no Content-Length at all (RFC 9110 8.6).
    if (res.result() != http::status::no_content) res.prepare_payload();
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
    HttpError e{http::status::bad_request, {}};
    if (ec == http::error::body_limit) {
      e = {http::status::payload_too_large, "request body exceeds the limit of " +
                                                std::to_string(limits_.max_body_bytes) + " bytes"};
    } else if (ec == http::error::header_limit) {
      e = {http::status::request_header_fields_too_large,
           "request header exceeds the limit of " + std::to_string(kHeaderLimit) + " bytes"};
    } else if (ec == http::error::partial_message) {
      // The client closed (or half-closed) before the whole message arrived,
      // e.g. fewer body bytes than its Content-Length. If it still reads, it
      // learns why.
      e.message = "request ended before the message was complete";
    } else if (is_http_error(ec) && ec != http::error::end_of_stream) {
      e.message = "malformed request: " + ec.message();
    } else {
      // The client closed between requests, the idle timeout expired, or
      // the socket failed (or stop() shut it down): nothing to answer.
      return false;
    }
    Response res;
    res.version(11);
    error_reply(res, e);
    res.keep_alive(false);
    res.prepare_payload();
    beast::error_code write_ec;
    http::write(stream_, res, write_ec);
    linger_close();
    return false;
  }

  static void error_reply(Response& res, const HttpError& e) {
    std::string body = std::move(res.body());
    const unsigned version = res.version();
    res = Response{e.status, version};
    res.set(http::field::content_type, media_type(Format::text));
    if (!e.allow.empty()) res.set(http::field::allow, e.allow);
    body.assign(e.message);
    res.body() = std::move(body);
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

  // ---- the API ----

  void respond(Request& req, Response& res) {
    const std::string_view target = req.target();
    const std::string_view path = target.substr(0, target.find('?'));
    const auto route = route_of(path);
    if (!route) throw HttpError{http::status::not_found, "no resource at " + quote(path)};
    if (!allows(route->route, req.method()))
      throw HttpError{http::status::method_not_allowed,
                      std::string(req.method_string()) + " is not allowed on " + quote(path),
                      allowed_methods(route->route)};
    named_ = nullptr;
    if (const std::string_view name = req[kCodecHeader]; !name.empty()) {
      named_ = codec_by_name(name);
      if (named_ == nullptr)
        throw HttpError{http::status::bad_request,
                        std::string(kCodecHeader) + " names no codec: " + quote(name)};
    }

    switch (route->route) {
      case Route::ping: {
        Codec* out = response_codec(req, true, Format::json);
        parsed();
        payload_ = Text{Service::ping()};
        serviced();
        write_payload(out, payload_, res);
        break;
      }
      case Route::payload: {
        PayloadSpec spec;
        try {
          spec = parse_spec(route->arg);
        } catch (const std::invalid_argument&) {
          throw HttpError{http::status::not_found, "no payload " + quote(route->arg)};
        }
        Codec* out = response_codec(req, spec.kind == Kind::text, Format::json);
        parsed();
        const std::shared_ptr<const Payload> payload = service_.get(spec);
        serviced();
        write_payload(out, *payload, res);
        break;
      }
      case Route::echo: {
        // The reply mirrors the request's format unless Accept says
        // otherwise.
        const Format in = read_payload(req, true);
        Codec* out = response_codec(req, std::holds_alternative<Text>(payload_), in);
        parsed();
        serviced();  // echo's service is the identity
        write_payload(out, payload_, res);
        break;
      }
      case Route::queues: {
        parsed();
        const std::string id = service_.register_client();
        serviced();
        res.result(http::status::created);
        res.set(http::field::location, "/queues/" + id);
        marshalled(res);
        break;
      }
      case Route::queue:
        queue(req, route->arg, res);
        break;
      case Route::primes: {
        std::uint32_t n = 0;
        const char* end = route->arg.data() + route->arg.size();
        const auto [ptr, ec] = std::from_chars(route->arg.data(), end, n);
        if (ec != std::errc{} || ptr != end)
          throw HttpError{http::status::not_found, "no prime count " + quote(route->arg)};
        Codec* out = response_codec(req, true, Format::json);
        parsed();
        payload_ = Text{service_.primes(n)};
        serviced();
        write_payload(out, payload_, res);
        break;
      }
    }
  }

  void queue(Request& req, std::string_view id_view, Response& res) {
    const std::string id(id_view);
    switch (req.method()) {
      case http::verb::put: {
        read_payload(req, false);
        auto* message = std::get_if<Message>(&payload_);
        if (message == nullptr)
          throw HttpError{http::status::bad_request, "PUT /queues/{id} takes a message"};
        parsed();
        service_.send_message(id, std::move(*message));
        serviced();
        res.result(http::status::no_content);
        marshalled(res);
        break;
      }
      case http::verb::get: {
        Codec* out = response_codec(req, false, Format::json);
        parsed();
        payload_ = MessageList{service_.receive_messages(id)};
        serviced();
        write_payload(out, payload_, res);
        break;
      }
      default: {  // DELETE; allows() let nothing else through
        parsed();
        service_.unregister_client(id);
        serviced();
        res.result(http::status::no_content);
        marshalled(res);
        break;
      }
    }
  }

  // Decodes the request body into payload_ with the codec X-Wsbench-Codec or
  // Content-Type names; text/plain (if `text_allowed`) is taken as a Text.
  // Returns the format, for mirroring in the reply.
  Format read_payload(const Request& req, bool text_allowed) {
    if (named_ != nullptr) {
      named_->decode(req.body(), payload_);
      return Format::json;  // unused: the named codec answers too
    }
    const std::string_view content_type = req[http::field::content_type];
    const auto format = format_of_content_type(content_type);
    if (!format || (*format == Format::text && !text_allowed))
      throw HttpError{http::status::unsupported_media_type,
                      "cannot read a body of type " + quote(content_type) +
                          "; send application/json, application/xml or application/x-protobuf"};
    if (*format == Format::text)
      payload_ = Text{req.body()};
    else
      codec_for(*format).decode(req.body(), payload_);
    return *format;
  }

  // The codec for the reply, or nullptr for raw text/plain.
  Codec* response_codec(const Request& req, bool text_allowed, Format preferred) {
    if (named_ != nullptr) return named_;
    const std::string_view accept = req[http::field::accept];
    const auto format = negotiate(accept, text_allowed, preferred);
    if (!format)
      throw HttpError{http::status::not_acceptable,
                      "cannot answer in any of " + quote(accept) +
                          "; this resource is available as application/json, application/xml, "
                          "application/x-protobuf" +
                          (text_allowed ? ", text/plain" : "")};
    return *format == Format::text ? nullptr : &codec_for(*format);
  }

  void write_payload(Codec* codec, const Payload& payload, Response& res) {
    if (codec == nullptr) {
      // negotiate() offers text only for Text payloads.
      res.body() = std::get<Text>(payload).value;
      res.set(http::field::content_type, media_type(Format::text));
    } else {
      codec->encode(payload, res.body());
      res.set(http::field::content_type, codec->content_type());
    }
    marshalled(res);
  }

  void parsed() { server_probe().mark(kParsed, marks_[1] = now_ns()); }
  void serviced() { server_probe().mark(kServiced, marks_[2] = now_ns()); }
  void marshalled(Response& res) {
    server_probe().mark(kMarshalled, marks_[3] = now_ns());
    timing_.clear();
    append_duration(timing_, "parse", marks_[1] - marks_[0]);
    append_duration(timing_, "service", marks_[2] - marks_[1]);
    append_duration(timing_, "marshal", marks_[3] - marks_[2]);
    res.set("Server-Timing", timing_);
  }

  // One instance per codec and connection (codecs are not thread-safe),
  // made on first use.
  Codec* codec_by_name(std::string_view name) {
    const auto& entries = all_codecs();
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].name != name) continue;
      if (codecs_.size() < entries.size()) codecs_.resize(entries.size());
      if (!codecs_[i]) codecs_[i] = entries[i].make();
      return codecs_[i].get();
    }
    return nullptr;
  }
  Codec& codec_for(Format format) {
    Codec*& cached = by_format_[static_cast<std::size_t>(format)];
    if (cached == nullptr) cached = codec_by_name(codec_name(format));
    if (cached == nullptr) throw std::logic_error("beast: codec " + quote(codec_name(format)));
    return *cached;
  }

  Service& service_;
  const ServerLimits& limits_;
  int fd_;
  TimedSocket stream_;
  beast::flat_buffer buffer_;  // bytes read past the current request stay here
  // Bodies keep their capacity across requests: a 90 MB body is not
  // allocated and page-faulted in again on every call.
  std::string request_body_;
  std::string response_body_;
  Payload payload_;  // decoded request body or service result
  std::vector<std::unique_ptr<Codec>> codecs_;
  std::array<Codec*, 3> by_format_{};  // json, xml, protobuf
  Codec* named_ = nullptr;             // X-Wsbench-Codec of the current request
  std::array<std::int64_t, 4> marks_{};
  std::string timing_;
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

}  // namespace wsb::rest
