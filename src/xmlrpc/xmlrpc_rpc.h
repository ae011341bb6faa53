// The XML-RPC form of a call (xmlrpc_rpc.cpp): method names and parameters
// as the xmlrpc-c stack's client sends them, shared by that client and the
// RPC binding, so both put the same methodCall on the wire.
//
// Internal to src/xmlrpc: it includes xmlrpc-c headers.
#pragma once

#include <xmlrpc-c/base.hpp>

#include "common/rpc_binding.h"

namespace wsb::xmlrpc {

// The wsbench.* method of an operation (xmlrpc_api.h).
const char* method_of(Operation op);

// The parameters of a call; std::invalid_argument for what XML-RPC cannot
// carry (see xmlrpc_mapping.h).
xmlrpc_c::paramList params_of(const CallArgs& call);

}  // namespace wsb::xmlrpc
