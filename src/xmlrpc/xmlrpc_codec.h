// XML-RPC methodResponse bodies via xmlrpc-c (see xmlrpc_codec.cpp).
#pragma once

#include <cstddef>
#include <memory>

#include "common/codec.h"

namespace wsb::xmlrpc {

// xmlrpc-c refuses to parse a document longer than a per-process limit
// (XMLRPC_XML_SIZE_LIMIT_ID, 512 KiB by default). The codec, the xmlrpc-c
// stack's server and its client all raise it, once per process, to this
// value (raise_xml_size_limit() in xmlrpc_mapping.h), so no one lowers it
// for the others: a 64 MiB binary is about 88 MiB of base64 plus line
// breaks and envelope, and the margin admits larger experiments. The
// server's own body limit (ServerLimits::max_body_bytes) must not exceed it.
inline constexpr std::size_t kXmlSizeLimit = std::size_t{256} << 20;

std::unique_ptr<Codec> make_xmlrpc_codec();

}  // namespace wsb::xmlrpc
