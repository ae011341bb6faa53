// The socket options each stack sets on its connected sockets, so the
// floor under its round trips uses the same: gSOAP sets 64 KiB send and
// receive buffers (SOAP_BUFLEN) on both ends, xmlrpc-c and Beast leave the
// kernel's autotuned buffers, as gRPC does; all set TCP_NODELAY. A test compares
// this table with the stacks' live sockets.
#pragma once

#include <string>

#include "harness/tcp_floor.h"

namespace wsb {

// A TLS variant (<stack>-tls) gets its plain stack's. Throws
// std::invalid_argument for a stack this table does not know.
ConnectionOptions stack_socket_options(const std::string& stack);

}  // namespace wsb
