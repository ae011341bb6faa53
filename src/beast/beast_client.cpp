// The beast stack's HTTP/1.1 client: one persistent connection, one codec,
// REST media types for json/xml/protobuf and the X-Wsbench-Codec header for
// the others, whose calls are their protocol's own (common/rpc_binding.h).
// Everything a call can reuse is reused (docs/servers/stacks/beast.md).
#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <charconv>

#include "beast/beast_stack.h"
#include "beast/client_wire.h"
#include "beast/field_arena.h"
#include "beast/timed_socket.h"
#include "common/clock.h"
#include "common/codec.h"
#include "common/rpc_binding.h"
#include "rest/http_negotiation.h"
#include "rest/rest_handler.h"

namespace wsb::beast_stack {

using rest::format_of_codec;
using rest::kCodecHeader;
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

using Request = http::request<http::string_body>;

// Largest response body accepted. The largest catalogue reply, a 64 MiB
// binary as base64 in a SOAP envelope, is about 90 MB; the server's own
// request limit is 128 MiB. This only stops a runaway peer.
constexpr std::uint64_t kMaxResponseBodyBytes = std::uint64_t{256} << 20;
// Error messages quote at most this much of the server's reply body.
constexpr std::size_t kSnippetLimit = 200;

std::string snippet(const std::string& body) {
  std::string s = body.substr(0, kSnippetLimit);
  for (auto& c : s)
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
  return body.size() > kSnippetLimit ? s + "..." : s;
}

// A plain TCP connection, read and written with blocking calls bounded by
// kClientIdleTimeout.
class PlainWire final : public ClientWire {
 public:
  explicit PlainWire(const Endpoint& server) : socket_(io_) {
    connect_socket(socket_, server, "beast");
    stream_ = TimedSocket(socket_.native_handle());
  }

  void write(const std::array<net::const_buffer, 2>& request, beast::error_code& ec) override {
    net::write(stream_, request, ec);  // one sendmsg of head and body
  }
  void read(beast::flat_buffer& buffer, ResponseParser& parser, beast::error_code& ec) override {
    http::read(stream_, buffer, parser, ec);
  }
  std::uint16_t local_port() const override {
    boost::system::error_code ec;
    const auto local = socket_.local_endpoint(ec);
    return ec ? 0 : local.port();
  }
  void close() override {
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  net::io_context io_;  // owns the socket's service; never run (all I/O is blocking)
  tcp::socket socket_;
  TimedSocket stream_{-1};
};

class BeastClient final : public Client {
 public:
  BeastClient(std::unique_ptr<ClientWire> wire, const Endpoint& server, const std::string& codec)
      : where_(server.to_string()), codec_(find_codec(codec).make()), wire_(std::move(wire)) {
    if (const auto& entry = find_codec(codec); entry.make_rpc) rpc_ = entry.make_rpc();
    buffer_.reserve(kReadBufferBytes);

    for (Request* req : {&bodiless_, &with_body_}) {
      req->version(11);
      req->set(http::field::host, where_);
      req->set(http::field::user_agent, "wsbench-beast");
      if (format_of_codec(codec))
        req->set(http::field::accept, codec_->content_type());
      else
        req->set(kCodecHeader, codec);
    }
    if (rpc_)
      if (const auto [name, value] = rpc_->call_header(); !name.empty())
        with_body_.set(name, value);
  }

  std::string ping() override {
    start();
    if (rpc_) return rpc_text({.op = Operation::ping}, "ping");
    call(bodiless_, http::verb::get, "/ping", {}, http::status::ok);
    decode(payload_);
    return take_text("ping");
  }

  void get(const PayloadSpec& spec, Payload& out) override {
    start();
    if (rpc_) return rpc_call({.op = Operation::get, .spec = spec}, out);
    if (spec != last_spec_ || label_.empty()) {
      label_ = spec.label();
      last_spec_ = spec;
    }
    call(bodiless_, http::verb::get, "/payloads/", label_, http::status::ok);
    decode(out);
  }

  void echo(const Payload& in, Payload& out) override {
    start();
    if (rpc_) return rpc_call({.op = Operation::echo, .payload = &in}, out);
    encode(in);
    call(with_body_, http::verb::post, "/echo", {}, http::status::ok);
    decode(out);
  }

  std::string register_client() override {
    start();
    if (rpc_) return rpc_text({.op = Operation::register_client}, "register_client");
    call(bodiless_, http::verb::post, "/queues", {}, http::status::created);
    constexpr std::string_view kPrefix = "/queues/";
    const auto at = location_.rfind(kPrefix);  // a path or an absolute URL
    if (at == std::string::npos || at + kPrefix.size() == location_.size())
      throw CallError("beast: 201 without a queue Location (got '" + location_ + "')");
    std::string id = location_.substr(at + kPrefix.size());
    mark(timeline_, kDecoded);
    return id;
  }

  void send_message(const std::string& queue, const Message& message) override {
    start();
    if (rpc_)
      return rpc_call({.op = Operation::send_message, .queue = queue, .message = &message},
                      payload_);
    // Encoded from the caller's message: no copy into a Payload.
    codec_->encode_message(message, with_body_.body());
    set_content_type(codec_->content_type());
    call(with_body_, http::verb::put, "/queues/", queue, http::status::no_content);
    mark(timeline_, kDecoded);
  }

  void receive_messages(const std::string& queue, std::vector<Message>& out) override {
    start();
    if (rpc_) {
      rpc_call({.op = Operation::receive_messages, .queue = queue}, payload_);
    } else {
      call(bodiless_, http::verb::get, "/queues/", queue, http::status::ok);
      decode(payload_);
    }
    auto* list = std::get_if<MessageList>(&payload_);
    if (list == nullptr)
      throw CallError("beast: GET /queues/" + queue + " returned no message list");
    out = std::move(list->messages);
    mark(timeline_, kDecoded);
  }

  void unregister_client(const std::string& queue) override {
    start();
    if (rpc_) return rpc_call({.op = Operation::unregister_client, .queue = queue}, payload_);
    call(bodiless_, http::verb::delete_, "/queues/", queue, http::status::no_content);
    mark(timeline_, kDecoded);
  }

  std::string primes(std::uint32_t n) override {
    start();
    if (rpc_) return rpc_text({.op = Operation::primes, .n = n}, "primes");
    char digits[16];
    const std::string_view count(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
    call(bodiless_, http::verb::get, "/primes/", count, http::status::ok);
    decode(payload_);
    return take_text("primes");
  }

  std::string define(const std::string& word) override {
    start();
    if (rpc_) return rpc_text({.op = Operation::define, .word = word}, "define");
    call(bodiless_, http::verb::get, "/words/", word, http::status::ok);
    decode(payload_);
    return take_text("define");
  }

  void put(const std::string& word, const std::string& definition) override {
    start();
    if (rpc_)
      return rpc_call({.op = Operation::put, .word = word, .definition = definition}, payload_);
    // The definition as a text payload, in a reused one.
    auto* text = std::get_if<Text>(&definition_);
    if (text == nullptr) text = &definition_.emplace<Text>();
    text->value.assign(definition);
    encode(definition_);
    call(with_body_, http::verb::put, "/words/", word, http::status::no_content);
    mark(timeline_, kDecoded);
  }

  const Timeline& last_timeline() const override { return timeline_; }

  std::uint16_t local_port() const override { return open_ ? wire_->local_port() : 0; }

  bool request_server_timing() override {
    for (Request* req : {&bodiless_, &with_body_}) req->set(rest::kTimingRequestHeader, "1");
    server_timing_asked_ = true;
    return true;
  }

  std::optional<ServerDurations> last_server_timing() const override { return server_timing_; }

 private:
  void start() {
    timeline_ = {};
    server_timing_.reset();
    mark(timeline_, kInvoke);
    if (!open_) throw CallError("beast: no connection to " + where_ + ": " + closed_because_);
  }

  // A call of the codec's own protocol: its call document POSTed to its
  // path, its reply (or fault) decoded into `out`.
  void rpc_call(const CallArgs& args, Payload& out) {
    rpc_->encode_call(args, with_body_.body());
    set_content_type(rpc_->call_content_type());
    call(with_body_, http::verb::post, rpc_->path(), {}, http::status::ok);
    try {
      rpc_->decode_reply(args.op, response_body_, out);
    } catch (const DecodeError& e) {
      throw CallError(std::string("beast: undecodable response body: ") + e.what());
    }
    mark(timeline_, kDecoded);
  }

  std::string rpc_text(const CallArgs& args, const char* what) {
    rpc_call(args, payload_);
    return take_text(what);
  }

  void set_content_type(const std::string& content_type) {
    if (std::string_view(with_body_[http::field::content_type]) != content_type)
      with_body_.set(http::field::content_type, content_type);
  }

  void encode(const Payload& in) {
    codec_->encode(in, with_body_.body());
    // Constant for most codecs; MTOM's names a fresh boundary.
    set_content_type(codec_->content_type());
  }

  // The request line and header of `req` for `method` and target_, into
  // head_: the fields it holds (set once, or when they change), then the
  // body's length. What Beast's serializer would write for the same
  // message, at a tenth of its instructions (docs/servers/stacks/beast.md).
  void write_head(const Request& req, http::verb method) {
    head_.assign(http::to_string(method)).append(" ").append(target_).append(" HTTP/1.1\r\n");
    for (const auto& field : req)
      head_.append(field.name_string()).append(": ").append(field.value()).append("\r\n");
    // GET and DELETE send no length; POST and PUT announce theirs, empty or
    // not.
    if (&req == &with_body_ || method == http::verb::post) {
      char digits[24];
      const auto end = std::to_chars(digits, digits + sizeof digits, req.body().size()).ptr;
      head_.append("Content-Length: ").append(digits, end).append("\r\n");
    }
    head_.append("\r\n");
  }

  // Sends `req` to prefix + arg and reads the reply into response_body_;
  // anything but `expected` is a CallError.
  void call(Request& req, http::verb method, std::string_view prefix, std::string_view arg,
            http::status expected) {
    target_.assign(prefix);
    target_.append(arg);
    write_head(req, method);

    beast::error_code ec;
    // Marked before the write (see phases.h): on one vCPU the woken server
    // runs inside this send, and its work must not count as ours.
    mark(timeline_, kRequestWritten);
    const std::array<net::const_buffer, 2> request{net::buffer(head_), net::buffer(req.body())};
    wire_->write(request, ec);
    if (ec) fail("sending the request", ec);

    response_body_.clear();  // Beast's string_body appends
    ResponseParser parser(std::piecewise_construct, std::make_tuple(std::move(response_body_)),
                          std::make_tuple(ArenaAllocator<char>(arena_)));
    parser.body_limit(kMaxResponseBodyBytes);
    wire_->read(buffer_, parser, ec);
    auto& res = parser.get();
    response_body_ = std::move(res.body());
    if (ec) fail("reading the response", ec);
    mark(timeline_, kResponseReceived);
    if (server_timing_asked_) server_timing_ = rest::parse_server_timing(res["Server-Timing"]);

    const unsigned status = res.result_int();
    if (expected == http::status::created) location_ = std::string(res[http::field::location]);
    // The server ends the connection after errors it cannot recover from
    // (413, a malformed request); later calls must fail, not reconnect.
    if (!res.keep_alive()) close("the server closed it after HTTP " + std::to_string(status));
    // A protocol's fault may travel with an error status (SOAP: 500); its
    // body says what went wrong, and decoding it reports that.
    const bool fault = rpc_ != nullptr && status == rpc_->fault_status();
    if (res.result() != expected && !fault) {
      if (status / 100 == 2)
        throw CallError("HTTP " + std::to_string(status) + ": expected " +
                        std::to_string(static_cast<unsigned>(expected)));
      throw CallError("HTTP " + std::to_string(status) + ": " + snippet(response_body_));
    }
  }

  // Decodes the reply and marks kDecoded (callers that check the result
  // further mark it again).
  void decode(Payload& out) {
    try {
      codec_->decode(response_body_, out);
    } catch (const DecodeError& e) {
      throw CallError(std::string("beast: undecodable response body: ") + e.what());
    }
    mark(timeline_, kDecoded);
  }

  std::string take_text(const char* what) {
    auto* text = std::get_if<Text>(&payload_);
    if (text == nullptr) throw CallError(std::string("beast: ") + what + " returned no text");
    mark(timeline_, kDecoded);
    return std::move(text->value);
  }

  [[noreturn]] void fail(const char* what, const beast::error_code& ec) {
    const std::string reason = std::string(what) + " failed: " + ec.message();
    close(reason);
    throw CallError("beast: " + where_ + ": " + reason);
  }

  void close(std::string reason) {
    open_ = false;
    closed_because_ = std::move(reason);
    wire_->close();
  }

  const std::string where_;
  std::unique_ptr<Codec> codec_;
  std::unique_ptr<RpcBinding> rpc_;  // for a codec with requests of its own
  std::unique_ptr<ClientWire> wire_;
  bool open_ = true;
  std::string closed_because_;
  beast::flat_buffer buffer_;
  FieldArena arena_;   // the reply's fields, one reply at a time
  Request bodiless_;   // GET, DELETE, POST /queues
  Request with_body_;  // POST /echo, PUT /queues/{id}
  std::string target_;
  std::string head_;  // the request line and header being sent (write_head)
  std::string response_body_;
  std::string location_;
  PayloadSpec last_spec_;
  std::string label_;
  Payload payload_;     // decoded replies the caller does not receive directly
  Payload definition_;  // put's request body, reused
  Timeline timeline_{};
  bool server_timing_asked_ = false;
  std::optional<ServerDurations> server_timing_;  // of the last reply, if asked
};

}  // namespace

std::unique_ptr<Client> make_client(std::unique_ptr<ClientWire> wire, const Endpoint& server,
                                    const std::string& codec) {
  return std::make_unique<BeastClient>(std::move(wire), server, codec);
}

std::unique_ptr<Client> connect_beast_client(const Endpoint& server, const std::string& codec) {
  (void)find_codec(codec);  // an unknown codec is refused before connecting
  return make_client(std::make_unique<PlainWire>(server), server, codec);
}

}  // namespace wsb::beast_stack
