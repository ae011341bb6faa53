// The xmlrpc-c anchor: xmlrpc-c's own minimal server and client for ping
// and echo, in the shape of its samples (examples/cpp/
// xmlrpc_sample_add_server.cpp and xmlrpc_sample_add_client_complex.cpp):
// methods in an xmlrpc_c::registry served by xmlrpc_c::serverAbyss at
// /RPC2, called through xmlrpc_c::client_xml over
// xmlrpc_c::clientXmlTransport_curl. No wsbench harness: no probes, no
// input guard, no limits, no request recording, no routing beyond the
// registry's. The rows of the xmlrpc-c stack (rtt/xmlrpc-c/xmlrpc) over
// it show what the stack adds.
//
// Same bytes as the stack: the methods are wsbench.ping (no parameters,
// answers the string "pong") and wsbench.echo (one payload value, answered
// with the same value), and a Payload becomes a value and back through
// the stack's own mapping (src/xmlrpc/xmlrpc_mapping.h), in the client and
// in the server's echo, as the stack does.
#pragma once

#include <memory>

#include "common/transport.h"

namespace wsb::anchors::xmlrpc {

// The library's own minimal server for ping and echo (its sample's shape).
// Listens on options.listen (an IPv4 address); options.cpu pins its threads
// like the stacks' servers. Limits and concurrency are ignored: Abyss's
// defaults stand, except that a connection is kept alive for any number of
// requests (the stack's default too; Abyss's own closes after 30, and
// libcurl would reconnect) and the idle keep-alive timeout is
// options.limits.keepalive_timeout_s, which every reply states, as the
// stack's do. TCP_NODELAY is set on the listening socket, which accepted
// connections inherit, as the stack does (libcurl sets it on the client).
// Throws std::runtime_error if it cannot listen.
std::unique_ptr<Server> start_server(const ServerOptions& options);

// The library's own minimal client: one keep-alive connection (libcurl's
// session in the transport). ping() and echo() only; every other
// operation throws CallError. Connects on the first call.
std::unique_ptr<Client> connect(const Endpoint& server);

}  // namespace wsb::anchors::xmlrpc
