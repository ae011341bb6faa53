// The one mapping between wsbench's model and xmlrpc-c's value trees, and
// the guarded parse in front of xmlrpc-c's XML parser. The codec
// (xmlrpc_codec.cpp), the Abyss server and the curl client all go through
// it, so a body means the same thing in every one of them.
//
// Internal to src/xmlrpc: it includes xmlrpc-c headers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>
#include <xmlrpc-c/base.hpp>

#include "common/payload.h"

namespace wsb::xmlrpc {

// Raises xmlrpc-c's process-wide XML size limit to kXmlSizeLimit, once per
// process. Every xmlrpc-c user in wsbench calls it before it parses.
void raise_xml_size_limit();

// ---- model -> value ----
// Throw std::invalid_argument for what XML-RPC cannot carry (NaN, infinity,
// characters above U+FFFD).

// A payload as the body's value: a struct whose one member names the kind
// (see the table in xmlrpc_codec.cpp).
xmlrpc_c::value payload_value(const Payload& payload);
// A message as a bare message struct (a sendMessage parameter).
xmlrpc_c::value message_value(const Message& message);

// Why xmlrpc-c cannot carry the payload at all, or empty.
std::string unsupported_reason(const Payload& payload);

// ---- value -> model ----
// Every member and type is checked; anything else throws DecodeError with
// a message prefixed "xmlrpc: ". `what` names the value in that message.

Payload payload_of(const xmlrpc_c::value& v);
Message message_of(const xmlrpc_c::value& v);
std::string string_of(const xmlrpc_c::value& v, const char* what);
bool bool_of(const xmlrpc_c::value& v, const char* what);
// An <i4>, or an <i8> (which a client needs for values above 2^31 - 1).
std::int64_t integer_of(const xmlrpc_c::value& v, const char* what);

// ---- the guard in front of xmlrpc-c's parser ----

// One lexical pass that rejects, with DecodeError, the documents that crash,
// hang or fool xmlrpc-c 1.33.14's parser (details in xmlrpc_mapping.cpp).
// Holds a reusable stack; not thread-safe.
class InputGuard {
 public:
  void check(std::string_view doc);

 private:
  std::size_t start_tag(std::string_view doc, std::size_t lt);

  std::vector<std::uint32_t> open_;  // per open element: <member> children so far
};

// Checks `doc` against the size limit, the guard and its closing tag, e.g.
// "</methodCall>" (xmlrpc-c accepts a document whose final '>' is missing,
// so a body cut short by a byte would otherwise parse as whole). Throws
// DecodeError.
void check_document(std::string_view doc, std::string_view closing_tag, InputGuard& guard);

// Parses a methodResponse: a fault comes back in `outcome`, anything
// malformed throws DecodeError.
void parse_response(const std::string& wire, InputGuard& guard, xmlrpc_c::rpcOutcome& outcome);

}  // namespace wsb::xmlrpc
