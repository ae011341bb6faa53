// The HTTP/1.1 request head as the xmlrpc-c stack's front checks it before
// Abyss reads it (xmlrpc_front.cpp): the duties RFC 9110/9112 put on an
// origin server that Abyss 1.33 does not do (docs/servers/stacks/xmlrpc-c.md).
// Pure functions on bytes, so each rule is tested apart from sockets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <string>

namespace wsb::xmlrpc {

struct RequestHead {
  std::size_t length = 0;     // bytes of the head, its empty line included; 0: not all here
  std::uint16_t refusal = 0;  // 0, or the status the request is refused with
  const char* why = "";       // the refusal's reason, for its body
  bool head_method = false;   // HEAD: the reply carries no body
  std::uint64_t content_length = 0;
};

// Checks the head at the start of `bytes`, at most `max_bytes` long with at
// most `max_fields` fields. Empty lines before the request line are removed
// (RFC 9112 2.2). An acceptable head is rewritten in place where Abyss would
// misread it (a field value right after the colon gets a space, an
// absolute-form target's scheme is lower-cased), so `length` is the
// rewritten one. A head that cannot be complete within `max_bytes` is a 431
// before its end arrives, a 414 if its request line has not ended (RFC 9112
// 3); an invalid Host value, like anything else malformed, a 400 (505 for a version
// other than HTTP/1.x); a chunked body, 411 (Abyss's XML-RPC handler reads
// Content-Length bodies only).
RequestHead check_request_head(std::string& bytes, std::size_t max_bytes, std::size_t max_fields);

// "Date: <IMF-fixdate>\r\n" (RFC 9110 5.6.7) for `now`.
std::string date_field(std::time_t now);

// A whole reply of the front's own: `status` with Connection: close, Date
// and a text body (none for a HEAD request).
std::string refusal_reply(std::uint16_t status, const char* why, bool head_method);

}  // namespace wsb::xmlrpc
