// The Date field every HTTP/1.1 server here sends (RFC 9110 6.6.1: an
// origin server with a clock MUST send one), in IMF-fixdate (RFC 9110
// 5.6.7): one implementation for the beast, gsoap and xmlrpc-c servers and
// the Beast anchor.
#pragma once

#include <ctime>
#include <string_view>

namespace wsb {

// "Date: Sun, 06 Nov 1994 08:49:37 GMT" for now, without the line's end
// (its data() NUL-terminated, for C libraries' header hooks): formatted
// once a second per thread; valid until the thread's next call in another
// second.
std::string_view http_date_field();

// The field's value alone ("Sun, 06 Nov 1994 08:49:37 GMT").
inline std::string_view http_date() { return http_date_field().substr(6); }

// The field for `at`, into `out` (35 bytes: "Date: " and 29 more, no NUL).
void format_http_date_field(std::time_t at, char (&out)[35]);

}  // namespace wsb
