// XML-RPC methodResponse bodies via xmlrpc-c (see xmlrpc_codec.cpp).
#pragma once

#include <memory>

#include "common/codec.h"
// The codec parses under kXmlSizeLimit, which it raises on construction.
#include "xmlrpc/xmlrpc_limits.h"

namespace wsb::xmlrpc {

std::unique_ptr<Codec> make_xmlrpc_codec();

}  // namespace wsb::xmlrpc
