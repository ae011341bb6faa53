// beast-request: the beast stack's request path without a socket. Beast's
// request parser, with the server's header and body limits, reads the
// input as one connection's bytes; each request goes through the REST
// handler (REST routes and, by X-Wsbench-Codec, every RPC codec) and its
// reply is serialised, as the server's connection code does
// (src/beast/beast_server.cpp), until the input ends or a reply closes.
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>

#include "beast/beast_rest.h"
#include "common/codec.h"
#include "target_parts.h"

namespace wsb::fuzz {
namespace {

namespace http = boost::beast::http;
using beast_stack::Request;

constexpr std::string_view kTarget = "beast-request";

// Feeds `input` to `parser` as a socket would deliver it, then the end of
// the stream; returns the bytes it used.
std::size_t parse(beast_stack::RequestParser& parser, std::string_view input,
                  boost::beast::error_code& ec) {
  std::size_t used = 0;
  while (!parser.is_done()) {
    const std::size_t n =
        parser.put(boost::asio::const_buffer(input.data() + used, input.size() - used), ec);
    used += n;
    if (ec == http::error::need_more) ec = {};
    if (ec) break;
    // Nothing more parses from what is left (a partial line, or nothing):
    // the connection has ended there.
    if (n == 0) {
      parser.put_eof(ec);
      break;
    }
  }
  return used;
}

// The reply as the server sends it: its ResponseHead, then the body.
std::string serialise(beast_stack::ResponseHead& head, unsigned version, bool keep_alive,
                      const rest::RestResponse& reply) {
  return std::string(head.of(version, keep_alive, reply)) + reply.body;
}

void serve(std::string_view input) {
  Service service(service_limits());
  const ServerLimits limits = server_limits();
  rest::RestHandler handler(service);
  std::string reply_body;
  rest::RestResponse reply(reply_body);
  beast_stack::ResponseHead head;  // one per connection, as the server keeps it
  beast_stack::FieldArena arena;
  std::optional<beast_stack::RequestParser> parser_slot;
  while (!input.empty()) {
    auto& parser = beast_stack::next_parser(parser_slot, arena, std::string());
    beast_stack::configure_parser(parser, limits);
    parser.eager(true);
    boost::beast::error_code ec;
    const std::size_t used = parse(parser, input, ec);
    input.remove_prefix(used);
    const beast_stack::HeaderView header = beast_stack::scan_header(parser.get());
    if (!ec && header.fields > limits.max_header_fields) ec = http::error::header_limit;
    if (ec) {
      if (beast_stack::refusal_of(ec, limits, reply))
        check_http_reply(kTarget, serialise(head, 11, false, reply));
      return;
    }
    Request& req = parser.get();
    if (beast_stack::framing_refusal(req, header, reply)) {
      check_http_reply(kTarget, serialise(head, 11, false, reply));
      return;
    }
    handler.handle(beast_stack::rest_request(req, header, 0), reply);
    check_http_reply(kTarget, serialise(head, req.version(), parser.keep_alive(), reply));
    if (!parser.keep_alive()) return;
  }
}

std::vector<std::string> seeds() {
  std::vector<std::string> out = {
      "GET /ping HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
      "GET /payloads/ints/5 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n",
      "GET /payloads/message-a/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/xml\r\n\r\n",
      "GET /payloads/gml/1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/x-protobuf\r\n\r\n",
      "GET /primes/20 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
      "POST /queues HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
      "GET /queues/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
      "DELETE /queues/1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
  };
  const auto payloads = seed_payloads();
  for (const auto& entry : all_codecs()) {
    const std::string codec_header = std::string(rest::kCodecHeader) + ": " + entry.name + "\r\n";
    if (entry.make_rpc) {
      for (auto& request : rpc_requests(entry, codec_header)) out.push_back(std::move(request));
      continue;
    }
    auto codec = entry.make();
    std::string body;
    for (const auto& payload : payloads) {
      if (std::holds_alternative<MessageList>(payload) || !codec->unsupported(payload).empty())
        continue;
      codec->encode(payload, body);
      out.push_back(http_post("/echo", codec->content_type(), codec_header, body));
    }
    codec->encode(payloads.front(), body);
    out.push_back(http_post("/echo", codec->content_type(), "", body));
  }
  return out;
}

}  // namespace

FuzzTarget beast_request_target() {
  return {std::string(kTarget),
          "the beast stack: Beast's request parser with the server's limits, the REST and RPC "
          "handler, the reply serialised; never a 5xx",
          "http.dict json.dict xml.dict soap.dict xmlrpc.dict", serve, seeds};
}

}  // namespace wsb::fuzz
