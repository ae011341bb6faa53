// Between Beast's messages and the REST handler (src/rest/rest_handler.h):
// the handler's view of a parsed request, the response it fills, and the
// answer to a request Beast could not parse. Shared by the server's
// connection code and the fuzz target that feeds it from memory.
//
// Internal to src/beast and fuzz/: a Beast header (slow to compile).
#pragma once

#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <iterator>
#include <optional>
#include <string>

#include "beast/beast_stack.h"
#include "common/transport.h"
#include "rest/http_negotiation.h"
#include "rest/rest_handler.h"

namespace wsb::beast_stack {

using Request = boost::beast::http::request<boost::beast::http::string_body>;
using Response = boost::beast::http::response<boost::beast::http::string_body>;

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

// Status, headers and framing of the reply to `req`; `res` already holds
// the body (reply.body, moved in by the caller).
inline void fill_response(const Request& req, const rest::RestResponse& reply, Response& res) {
  namespace http = boost::beast::http;
  res.version(req.version());
  res.result(reply.status);
  if (!reply.content_type.empty()) res.set(http::field::content_type, reply.content_type);
  if (!reply.location.empty()) res.set(http::field::location, reply.location);
  if (!reply.allow.empty()) res.set(http::field::allow, reply.allow);
  if (!reply.server_timing.empty()) res.set("Server-Timing", reply.server_timing);
  res.keep_alive(req.keep_alive());
  // A 204 carries no Content-Length at all (RFC 9110 8.6).
  if (res.result() != http::status::no_content) res.prepare_payload();
}

// The reply to a request that could not be read whole (the connection
// closes after it), or none where HTTP has no answer: the peer closed
// between requests, or the error is the socket's, not the parser's.
inline std::optional<Response> refusal_of(const boost::beast::error_code& ec,
                                          const ServerLimits& limits) {
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
    return std::nullopt;
  }
  Response res{status, 11};
  res.set(http::field::content_type, rest::media_type(rest::Format::text));
  res.body() = std::move(message);
  res.keep_alive(false);
  res.prepare_payload();
  return res;
}

}  // namespace wsb::beast_stack
