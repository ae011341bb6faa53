// XML-RPC methodResponse bodies via xmlrpc-c (see xmlrpc_codec.cpp).
#pragma once

#include <memory>

#include "common/codec.h"
#include "common/rpc_binding.h"
// The codec parses under kXmlSizeLimit, which it raises on construction.
#include "xmlrpc/xmlrpc_limits.h"

namespace wsb::xmlrpc {

std::unique_ptr<Codec> make_xmlrpc_codec();
// Its RPC binding (xmlrpc_rpc.cpp): the xmlrpc-c stack's methodCall and
// methodResponse documents.
std::unique_ptr<RpcBinding> make_xmlrpc_rpc();

}  // namespace wsb::xmlrpc
