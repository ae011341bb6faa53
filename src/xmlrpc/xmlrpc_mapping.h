// The one mapping between wsbench's model and xmlrpc-c's value trees. The
// codec (xmlrpc_codec.cpp), the Abyss server's methods and the curl client
// all go through it, so a body means the same thing in every one of them.
//
// Internal to src/xmlrpc: it includes xmlrpc-c headers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <xmlrpc-c/base.hpp>

#include "common/payload.h"

namespace wsb::xmlrpc {

// How the 64-bit fields (a message's timestamp, a record's sequence and
// created) are written. Read in either form, and as <i4> when they fit.
// Why a decimal string is the standard form: docs/reference/codecs.md.
enum class Int64Form {
  i8,      // <i8>: xmlrpc-c's extension, which standard clients do not send
  string,  // <string> of decimal digits: plain XML-RPC, exact, sent back as is
};

// The form a call's URL query asks for: "int64=string" or "int64=i8" (the
// default, also for an empty query); other parameters are ignored. Throws
// DecodeError for another value.
Int64Form int64_form_of_query(std::string_view query);

// ---- model -> value ----
// Throw std::invalid_argument for what XML-RPC cannot carry (NaN, infinity,
// characters above U+FFFD).

// A payload as the body's value: a struct whose one member names the kind
// (see the table in xmlrpc_codec.cpp).
xmlrpc_c::value payload_value(const Payload& payload, Int64Form form = Int64Form::i8);
// A message as a bare message struct (a sendMessage parameter).
xmlrpc_c::value message_value(const Message& message, Int64Form form = Int64Form::i8);

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

}  // namespace wsb::xmlrpc
