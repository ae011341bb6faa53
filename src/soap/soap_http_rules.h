// The HTTP/1.1 rules (RFC 9110, 9112) an origin server must keep where
// gSOAP 2.8's own parser does not keep them: the header's syntax and size,
// Transfer-Encoding, Host, absolute-form targets and the Date field. The
// gsoap server's callbacks (soap_engine_callbacks.cpp) apply them around
// gSOAP's parsing; docs/servers/stacks/gsoap.md says what each refuses.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "soap/soap_binding.h"

namespace wsb::soap {

// Checks a request's start line and header fields as their bytes arrive,
// before gSOAP parses them, and counts them: gSOAP accepts whitespace
// between a field's name and its colon, skips lines without a colon,
// unfolds obs-fold, drops a bare CR with the byte after it and passes
// control characters on.
class HeaderScan {
 public:
  // Feeds the request's next bytes; stops at the header's end (done()).
  // Returns the HTTP status refusing the header (400 for its syntax, 431
  // past `max_bytes`, 414 if still in the request line), else 0; why()
  // says why.
  int feed(std::string_view bytes, std::size_t max_bytes);
  bool done() const { return state_ == State::done; }
  // The header's bytes so far, request line and final CRLF included.
  std::size_t bytes() const { return bytes_; }
  const char* why() const { return why_; }

 private:
  enum class State : std::uint8_t {
    start,         // before the request line (empty lines are skipped)
    request_line,  // in it
    request_cr,
    line_start,  // at a field line's first byte
    name,
    value,
    value_cr,
    end_cr,  // the empty line's CR
    done,
  };
  int refuse(const char* why) {
    why_ = why;
    return 400;
  }

  State state_ = State::start;
  std::size_t bytes_ = 0;
  const char* why_ = "";
};

// Whether a request line ends in "HTTP/x.y" of a major version other than
// 1 (505, RFC 9110 15.6.6).
bool other_major_version(std::string_view request_line);

// Transfer-Encoding's codings, over all its fields (RFC 9112 6.1).
struct TransferCodings {
  bool present = false;
  bool chunked_last = false;  // the final coding is chunked
  bool chunked_twice = false;
  bool other = false;  // a coding other than chunked (gSOAP decodes none)

  void add(std::string_view field_value);
};

// Whether `value` can be a Host field's value: uri-host [ ":" port ]
// (RFC 3986 reg-name, IPv4 or an IP literal), empty included.
bool valid_host(std::string_view value);

// An absolute-form target ("http://host:port/path?query") in gSOAP's
// soap::path turned into its origin form ("/path?query"): gSOAP takes a
// target not starting with '/' as the path itself. False if the target is
// neither form ("*" and authority-form included: no method here takes
// them).
bool to_origin_form(Context* ctx);

// "Date: <IMF-fixdate>" for now (RFC 9110 6.6.1), formatted once a second
// per thread.
const char* date_field();

}  // namespace wsb::soap
