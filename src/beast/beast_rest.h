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
#include <boost/beast/http/rfc7230.hpp>
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
#include "common/http_date.h"
#include "common/input_checks.h"
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
  std::size_t hosts = 0;               // Host fields: exactly one is valid in HTTP/1.1
  std::size_t transfer_encodings = 0;  // Transfer-Encoding fields
  std::string_view transfer_encoding;  // the last of them, whose last coding frames the body
  bool server_timing = false;          // rest::kTimingRequestHeader is present
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
    if (f.name() == http::field::host) ++view.hosts;
    if (f.name() == http::field::transfer_encoding) {
      ++view.transfer_encodings;
      view.transfer_encoding = f.value();
      continue;
    }
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

// The path and query of a request target: an absolute-form target
// ("http://host:port/path", RFC 9112 3.2.2, which a server MUST accept)
// loses its scheme and authority; any other form is returned as it is.
inline std::string_view origin_form(std::string_view target) {
  if (target.empty() || target.front() == '/') return target;  // the usual case, first
  const auto scheme_end = target.find("://");
  if (scheme_end == std::string_view::npos) return target;
  const std::string_view scheme = target.substr(0, scheme_end);
  if (!boost::beast::iequals(scheme, "http") && !boost::beast::iequals(scheme, "https"))
    return target;
  const auto path = target.find_first_of("/?", scheme_end + 3);
  if (path == std::string_view::npos) return "/";
  if (target[path] == '?') return target.substr(path - 1);  // "http://h?q": the '/' is implied
  return target.substr(path);
}

// Views into `req` and `header` (scan_header(req)), valid while req lives.
// HEAD is handed over as GET: the connection sends the GET's header and
// leaves out its body (RFC 9110 9.3.2).
inline rest::RestRequest rest_request(const Request& req, const HeaderView& header,
                                      std::int64_t received_ns) {
  const boost::beast::http::verb method =
      req.method() == boost::beast::http::verb::head ? boost::beast::http::verb::get : req.method();
  return rest::RestRequest{
      method_of(method),   req.method_string(), origin_form(req.target()),
      header.content_type, header.accept,       header.codec,
      req.body(),          received_ns,         header.server_timing,
      header.host,
  };
}

// Fills `reply` with an error answer: `status` and `message` as text.
inline bool refuse(rest::RestResponse& reply, unsigned status, std::string message) {
  reply.status = status;
  reply.content_type = rest::media_type(rest::Format::text);
  reply.location.clear();
  reply.allow = {};
  reply.server_timing.clear();
  reply.body = std::move(message);
  return true;
}

// The refusal of a request whose header Beast parsed but HTTP does not
// allow, filled into `reply` (the connection closes after it); false if
// the request may be served. RFC 9112 3.2 (Host), 6.1 and 6.3
// (Transfer-Encoding). Beast itself refuses Content-Length with
// Transfer-Encoding, a repeated chunked and a bad Content-Length, but reads
// a request whose final coding is not chunked as one without a body: its
// body would then be parsed as the next request.
inline bool framing_refusal(const Request& req, const HeaderView& header,
                            rest::RestResponse& reply) {
  namespace http = boost::beast::http;
  if (header.hosts > 1) return refuse(reply, 400, "more than one Host field");
  if (header.hosts == 0 && req.version() >= 11)
    return refuse(reply, 400, "HTTP/1.1 request without Host");
  if (header.hosts == 1 && !valid_host(header.host))
    return refuse(reply, 400, "invalid Host field");
  if (header.transfer_encodings == 0) return false;
  if (req.version() < 11) return refuse(reply, 400, "Transfer-Encoding in an HTTP/1.0 request");
  std::string_view last;
  std::size_t codings = 0, chunked = 0;
  for (const auto coding : http::token_list(header.transfer_encoding)) {
    ++codings;
    if (boost::beast::iequals(coding, "chunked")) ++chunked;
    last = coding;
  }
  if (!boost::beast::iequals(last, "chunked") || chunked > 1)
    return refuse(reply, 400, "Transfer-Encoding whose only and final coding is not chunked");
  if (codings > 1 || header.transfer_encodings > 1)
    return refuse(reply, 501, "transfer codings other than chunked are not implemented");
  return false;
}

// The status line and header of a reply (whose body follows them as it
// is): the fields a Beast response would carry, in Beast's order, then
// Content-Length and Date, without building one; the connection code
// sends head and body in one writev. Replies that differ from the one
// before only in their body's length (a steady stream of pings) reuse its
// bytes up to the Content-Length value.
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
    if (reusable) {
      version_ = version;
      keep_alive_ = keep_alive;
      status_ = reply.status;
      content_type_ = reply.content_type;
      fixed_ = head_.size();
    }
    return finish(reply.status == kNoContent ? kNoLength : reply.body.size());
  }

 private:
  static constexpr unsigned kNoContent = 204;
  static constexpr std::size_t kNoLength = ~std::size_t{0};

  // Everything before Content-Length, which a 204 does not carry at all
  // (RFC 9110 8.6).
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
  }

  std::string_view finish(std::size_t body_bytes) {
    if (body_bytes != kNoLength) {
      head_.append("Content-Length: ");
      append_number(body_bytes);
      head_.append("\r\n");
    }
    head_.append(http_date_field()).append("\r\n\r\n");
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
// parser's. `start_line`: the request line as far as it was read, while
// Beast's parser is still in it (it consumes the line once it is whole):
// a line longer than the header limit gets 414 (RFC 9112 3), a version
// other than HTTP/1.x 505 (RFC 9110 15.6.6).
inline bool refusal_of(const boost::beast::error_code& ec, const ServerLimits& limits,
                       rest::RestResponse& reply,
                       std::optional<std::string_view> start_line = std::nullopt) {
  namespace http = boost::beast::http;
  const std::string header_bytes = std::to_string(limits.max_header_bytes) + " bytes";
  if (ec == http::error::body_limit)
    return refuse(
        reply, 413,
        "request body exceeds the limit of " + std::to_string(limits.max_body_bytes) + " bytes");
  if (ec == http::error::header_limit && start_line)
    return refuse(reply, 414, "request line exceeds the limit of " + header_bytes);
  if (ec == http::error::bad_version && start_line) {
    const auto version = start_line->find(" HTTP/");
    if (version != std::string_view::npos && version + 6 < start_line->size() &&
        (*start_line)[version + 6] != '1')
      return refuse(reply, 505, "only HTTP/1.0 and HTTP/1.1 are served here");
  }
  if (ec == http::error::header_limit)
    return refuse(reply, 431,
                  "request header, chunk line or trailer section exceeds the limit of " +
                      header_bytes + " or " + std::to_string(limits.max_header_fields) + " fields");
  // The client closed (or half-closed) before the whole message arrived,
  // e.g. fewer body bytes than its Content-Length. If it still reads, it
  // learns why.
  if (ec == http::error::partial_message)
    return refuse(reply, 400, "request ended before the message was complete");
  // One of Beast's parse errors (bad method, bad field, ...).
  if (ec.category() == make_error_code(http::error::bad_method).category() &&
      ec != http::error::end_of_stream)
    return refuse(reply, 400, "malformed request: " + ec.message());
  return false;
}

}  // namespace wsb::beast_stack
