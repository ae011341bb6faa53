// The XML-RPC form of a call (xmlrpc_rpc.cpp): method names and parameters
// as the xmlrpc-c stack's client sends them and its server reads them,
// shared with the RPC binding, so both stacks put the same methodCall on
// the wire and accept the same parameters.
//
// Internal to src/xmlrpc: it includes xmlrpc-c headers.
#pragma once

#include <vector>
#include <xmlrpc-c/base.hpp>

#include "common/rpc_binding.h"

namespace wsb::xmlrpc {

// The wsbench.* method of an operation (xmlrpc_api.h).
const char* method_of(Operation op);

// The parameters of a call; std::invalid_argument for what XML-RPC cannot
// carry (see xmlrpc_mapping.h).
xmlrpc_c::paramList params_of(const CallArgs& call);

// The arguments of a call of `op` from its parsed parameters into `out`
// (op, and what the operation takes); DecodeError for parameters that do
// not fit the method.
void arguments_of(Operation op, const std::vector<xmlrpc_c::value>& params, DecodedCall& out);

}  // namespace wsb::xmlrpc
