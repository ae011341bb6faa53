// Between Beast's messages and the REST handler (src/rest/rest_handler.h):
// the handler's view of a parsed request, the header of the reply it
// fills, and the answer to a request Beast could not parse. Shared by the server's
// connection code and the fuzz target that feeds it from memory.
//
// Internal to src/beast and fuzz/: a Beast header (slow to compile).
#pragma once

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

#include "beast/beast_stack.h"
#include "common/transport.h"
#include "rest/http_negotiation.h"
#include "rest/rest_handler.h"

namespace wsb::beast_stack {

using Request = boost::beast::http::request<boost::beast::http::string_body>;

inline rest::Method method_of(boost::beast::http::verb method) {
  using boost::beast::http::verb;
  switch (method) {
    case verb::get:
      return rest::Method::get;
    case verb::post:
      return rest::Method::post;
    case verb::put:
      return rest::Method::put;
    case verb::delete_:
      return rest::Method::delete_;
    default:
      return rest::Method::other;
  }
}

// Sets up the parser of one request: the one place its limits are set.
inline void configure_parser(
    boost::beast::http::request_parser<boost::beast::http::string_body>& parser,
    const ServerLimits& limits) {
  parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
  parser.body_limit(limits.max_body_bytes);
}

// Beast bounds the header's bytes, not its fields: counted once it is read.
inline bool too_many_fields(const Request& req, const ServerLimits& limits) {
  return static_cast<std::size_t>(std::distance(req.begin(), req.end())) > limits.max_header_fields;
}

// Views into `req`, valid while it lives.
inline rest::RestRequest rest_request(const Request& req, std::int64_t received_ns,
                                      bool server_timing) {
  namespace http = boost::beast::http;
  return rest::RestRequest{
      method_of(req.method()),
      req.method_string(),
      req.target(),
      req[http::field::content_type],
      req[http::field::accept],
      req[rest::kCodecHeader],
      req.body(),
      received_ns,
      server_timing,
      req[http::field::host],
  };
}

// The status line and header of `reply` (whose body follows them as it
// is), written into `head` (its capacity kept): the fields a Beast
// response would carry, in Beast's order, without building one. A fixed
// header needs no field list, allocation or serializer per reply; the
// connection code sends head and body in one writev.
inline void response_head(unsigned version, bool keep_alive, const rest::RestResponse& reply,
                          std::string& head) {
  namespace http = boost::beast::http;
  const auto field = [&head](std::string_view name, std::string_view value) {
    head.append(name).append(": ").append(value).append("\r\n");
  };
  char digits[24];
  const auto number = [&digits](std::uint64_t n) {
    return std::string_view(digits, std::to_chars(digits, digits + sizeof digits, n).ptr - digits);
  };
  head.assign(version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
  head.append(number(reply.status)).append(" ");
  head.append(http::obsolete_reason(static_cast<http::status>(reply.status))).append("\r\n");
  if (!reply.content_type.empty()) field("Content-Type", reply.content_type);
  if (!reply.location.empty()) field("Location", reply.location);
  if (!reply.allow.empty()) field("Allow", reply.allow);
  if (!reply.server_timing.empty()) field("Server-Timing", reply.server_timing);
  // What Beast's keep_alive() sets: HTTP/1.1 says close, 1.0 keep-alive.
  if (version >= 11 && !keep_alive) field("Connection", "close");
  if (version < 11 && keep_alive) field("Connection", "keep-alive");
  // A 204 carries no Content-Length at all (RFC 9110 8.6).
  if (reply.status != static_cast<unsigned>(http::status::no_content))
    field("Content-Length", number(reply.body.size()));
  head.append("\r\n");
}

// The reply to a request that could not be read whole (the connection
// closes after it), filled into `reply`; false where HTTP has no answer:
// the peer closed between requests, or the error is the socket's, not the
// parser's.
inline bool refusal_of(const boost::beast::error_code& ec, const ServerLimits& limits,
                       rest::RestResponse& reply) {
  namespace http = boost::beast::http;
  http::status status = http::status::bad_request;
  std::string message;
  if (ec == http::error::body_limit) {
    status = http::status::payload_too_large;
    message =
        "request body exceeds the limit of " + std::to_string(limits.max_body_bytes) + " bytes";
  } else if (ec == http::error::header_limit) {
    status = http::status::request_header_fields_too_large;
    message = "request header exceeds the limit of " + std::to_string(limits.max_header_bytes) +
              " bytes or " + std::to_string(limits.max_header_fields) + " fields";
  } else if (ec == http::error::partial_message) {
    // The client closed (or half-closed) before the whole message arrived,
    // e.g. fewer body bytes than its Content-Length. If it still reads, it
    // learns why.
    message = "request ended before the message was complete";
  } else if (ec.category() == make_error_code(http::error::bad_method).category() &&
             ec != http::error::end_of_stream) {
    // One of Beast's parse errors (bad method, bad field, ...).
    message = "malformed request: " + ec.message();
  } else {
    return false;
  }
  reply.status = static_cast<unsigned>(status);
  reply.content_type = rest::media_type(rest::Format::text);
  reply.location.clear();
  reply.allow = {};
  reply.server_timing.clear();
  reply.body = std::move(message);
  return true;
}

}  // namespace wsb::beast_stack
