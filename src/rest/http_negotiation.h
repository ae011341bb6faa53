// Media types of the beast stack's REST API and HTTP content negotiation.
//
// Plain string logic, free of Beast and Asio, so it is cheap to compile and
// to test on its own.
#pragma once

#include <optional>
#include <string_view>

#include "common/phases.h"

namespace wsb::rest {

// The body formats a REST client picks by media type. The common transport
// (X-Wsbench-Codec) reaches the other codecs without a media type.
enum class Format { json, xml, protobuf, text };

// "application/json", "application/xml", "application/x-protobuf", and
// "text/plain; charset=utf-8".
std::string_view media_type(Format format);

// The codec carrying a format ("json", "xml", "protobuf", "text").
std::string_view codec_name(Format format);

// The format a codec carries, or nullopt for codecs that are not REST bodies.
std::optional<Format> format_of_codec(std::string_view codec);

// The format of a request body from its Content-Type: the media type is
// compared case-insensitively and parameters (charset) are ignored. A
// missing header (empty) means JSON; an unsupported type gives nullopt.
std::optional<Format> format_of_content_type(std::string_view content_type);

// The response format an Accept header asks for (RFC 9110 section 12.5.1):
// each format gets the q-value of the most specific media range matching it
// (exact, then type/*, then */*), and the highest non-zero q wins. On a tie
// `preferred` wins if it is among the best, then json, xml, protobuf, text.
// Text is only a candidate when `text_allowed` (the payload is a string). A
// missing header (empty) gives `preferred`. nullopt: nothing acceptable
// (HTTP 406).
std::optional<Format> negotiate(std::string_view accept, bool text_allowed, Format preferred);

// Server-Timing is every stack's (common/phases.h).
using wsb::parse_server_timing;

}  // namespace wsb::rest
