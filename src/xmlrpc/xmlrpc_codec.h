// XML-RPC methodResponse bodies via xmlrpc-c (see xmlrpc_codec.cpp).
#pragma once

#include <cstddef>
#include <memory>

#include "common/codec.h"

namespace wsb::xmlrpc {

// xmlrpc-c refuses to parse a document longer than a per-process limit
// (XMLRPC_XML_SIZE_LIMIT_ID, 512 KiB by default). Constructing the codec
// raises it once per process to this value: a 64 MiB binary is about
// 88 MiB of base64 plus line breaks and envelope, and the margin admits
// larger experiments. Other xmlrpc-c users in the process (client, server)
// should use the same constant so the last writer does not lower it.
inline constexpr std::size_t kXmlSizeLimit = std::size_t{256} << 20;

std::unique_ptr<Codec> make_xmlrpc_codec();

}  // namespace wsb::xmlrpc
