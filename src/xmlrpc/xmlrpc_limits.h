// xmlrpc-c's process-wide XML size limit, as wsbench sets it. The codec and
// the stack's client need it raised to parse large documents; the stack's
// server checks ServerLimits::max_body_bytes against it.
#pragma once

#include <cstddef>

namespace wsb::xmlrpc {

// xmlrpc-c refuses to parse a document longer than a per-process limit
// (XMLRPC_XML_SIZE_LIMIT_ID, 512 KiB by default). Every xmlrpc-c user in
// wsbench raises it to this one value, so no one lowers it for the others:
// a 64 MiB binary is about 88 MiB of base64 plus line breaks and envelope,
// and the margin admits larger experiments.
inline constexpr std::size_t kXmlSizeLimit = std::size_t{256} << 20;

// Members of one struct the guard admits (xmlrpc_guard.cpp): our widest
// struct has 9, and xmlrpc-c inserts members in time quadratic in their
// number.
inline constexpr std::size_t kMaxStructMembers = 256;

// Abyss reads a request's header into its connection buffer, fixed at 4 KiB
// when the library is built (it answered 408 to a header that did not fit);
// the front (xmlrpc_front.h) answers 431 to one longer than this less one.
inline constexpr std::size_t kAbyssHeaderBufferBytes = 4096;

// Raises the limit to kXmlSizeLimit, once per process; call before parsing.
void raise_xml_size_limit();

}  // namespace wsb::xmlrpc
