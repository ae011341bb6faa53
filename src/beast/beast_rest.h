// Between Beast's messages and the REST handler (src/rest/rest_handler.h):
// the handler's view of a parsed request, the head of the reply it fills,
// and the answer to a request Beast could not parse. Shared by the server's
// connection code and the fuzz target that feeds it from memory.
//
// Internal to src/beast and fuzz/: a Beast header (slow to compile).
#pragma once

#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "beast/beast_stack.h"
#include "beast/field_arena.h"
#include "common/transport.h"
#include "rest/http_negotiation.h"
#include "rest/rest_handler.h"

namespace wsb::beast_stack {

// A request's fields live in its connection's FieldArena.
using Fields = boost::beast::http::basic_fields<ArenaAllocator<char>>;
using Request = boost::beast::http::request<boost::beast::http::string_body, Fields>;
using RequestParser =
    boost::beast::http::request_parser<boost::beast::http::string_body, ArenaAllocator<char>>;

// A parser for the next request, its fields in `arena`, its body appended
// to `body` (moved in; cleared first).
inline RequestParser& next_parser(std::optional<RequestParser>& parser, FieldArena& arena,
                                  std::string&& body) {
  body.clear();  // Beast's string_body appends
  return parser.emplace(std::piecewise_construct, std::make_tuple(std::move(body)),
                        std::make_tuple(ArenaAllocator<char>(arena)));
}

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
inline void configure_parser(RequestParser& parser, const ServerLimits& limits) {
  parser.header_limit(static_cast<std::uint32_t>(limits.max_header_bytes));
  parser.body_limit(limits.max_body_bytes);
}

// What the connection code and the REST handler read from a request's
// header, taken in one pass over its fields: a lookup by name searches the
// field set every time, and a request is looked up for six names.
struct HeaderView {
  std::size_t fields = 0;  // Beast bounds the header's bytes, not its fields
  std::string_view content_type, accept, codec, host, expect;  // the first of each, if any
  bool server_timing = false;  // rest::kTimingRequestHeader is present
};

inline HeaderView scan_header(const Request& req) {
  namespace http = boost::beast::http;
  using Slot = std::string_view HeaderView::*;
  static constexpr std::pair<http::field, Slot> kKnown[] = {
      {http::field::content_type, &HeaderView::content_type},
      {http::field::accept, &HeaderView::accept},
      {http::field::host, &HeaderView::host},
      {http::field::expect, &HeaderView::expect},
  };
  const auto first = [](std::string_view& slot, std::string_view value) {
    if (slot.data() == nullptr) slot = value;
  };
  HeaderView view;
  for (const auto& f : req) {
    ++view.fields;
    if (f.name() == http::field::unknown) {
      if (boost::beast::iequals(f.name_string(), rest::kCodecHeader))
        first(view.codec, f.value());
      else if (boost::beast::iequals(f.name_string(), rest::kTimingRequestHeader))
        view.server_timing = true;
      continue;
    }
    for (const auto& [name, slot] : kKnown)
      if (f.name() == name) first(view.*slot, f.value());
  }
  return view;
}

// Views into `req` and `header` (scan_header(req)), valid while req lives.
inline rest::RestRequest rest_request(const Request& req, const HeaderView& header,
                                      std::int64_t received_ns) {
  return rest::RestRequest{
      method_of(req.method()), req.method_string(), req.target(), header.content_type,
      header.accept,           header.codec,        req.body(),   received_ns,
      header.server_timing,    header.host,
  };
}

// The status line and header of a reply (whose body follows them as it
// is): the fields a Beast response would carry, in Beast's order, without
// building one; the connection code sends head and body in one writev.
// Replies that differ from the one before only in their body's length (a
// steady stream of pings) reuse its bytes up to the Content-Length value.
class ResponseHead {
 public:
  std::string_view of(unsigned version, bool keep_alive, const rest::RestResponse& reply) {
    const bool reusable = reply.location.empty() && reply.allow.empty() &&
                          reply.server_timing.empty() && reply.status != kNoContent;
    if (reusable && fixed_ != 0 && version == version_ && keep_alive == keep_alive_ &&
        reply.status == status_ && reply.content_type == content_type_) {
      head_.resize(fixed_);
      return finish(reply.body.size());
    }
    build(version, keep_alive, reply);
    fixed_ = 0;
    if (reply.status == kNoContent) return head_;
    if (reusable) {
      version_ = version;
      keep_alive_ = keep_alive;
      status_ = reply.status;
      content_type_ = reply.content_type;
      fixed_ = head_.size();
    }
    return finish(reply.body.size());
  }

 private:
  static constexpr unsigned kNoContent = 204;

  // Everything up to the Content-Length value (or the whole head of a 204,
  // which carries no Content-Length at all: RFC 9110 8.6).
  void build(unsigned version, bool keep_alive, const rest::RestResponse& reply) {
    namespace http = boost::beast::http;
    const auto field = [this](std::string_view name, std::string_view value) {
      head_.append(name).append(": ").append(value).append("\r\n");
    };
    head_.assign(version == 10 ? "HTTP/1.0 " : "HTTP/1.1 ");
    append_number(reply.status);
    head_.append(" ")
        .append(http::obsolete_reason(static_cast<http::status>(reply.status)))
        .append("\r\n");
    if (!reply.content_type.empty()) field("Content-Type", reply.content_type);
    if (!reply.location.empty()) field("Location", reply.location);
    if (!reply.allow.empty()) field("Allow", reply.allow);
    if (!reply.server_timing.empty()) field("Server-Timing", reply.server_timing);
    // What Beast's keep_alive() sets: HTTP/1.1 says close, 1.0 keep-alive.
    if (version >= 11 && !keep_alive) field("Connection", "close");
    if (version < 11 && keep_alive) field("Connection", "keep-alive");
    if (reply.status == kNoContent)
      head_.append("\r\n");
    else
      head_.append("Content-Length: ");
  }

  std::string_view finish(std::size_t body_bytes) {
    append_number(body_bytes);
    head_.append("\r\n\r\n");
    return head_;
  }

  void append_number(std::uint64_t n) {
    char digits[24];
    head_.append(digits, std::to_chars(digits, digits + sizeof digits, n).ptr);
  }

  std::string head_;
  std::size_t fixed_ = 0;  // bytes of head_ the next reply may reuse; 0: none
  unsigned version_ = 0;
  bool keep_alive_ = false;
  unsigned status_ = 0;
  std::string content_type_;
};

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
