#include "harness/stack_sockets.h"

#include <stdexcept>

namespace wsb {

ConnectionOptions stack_socket_options(const std::string& stack) {
  // A TLS variant sets its sockets as its plain counterpart does.
  if (stack.ends_with("-tls")) return stack_socket_options(stack.substr(0, stack.size() - 4));
  if (stack == "gsoap") {
    // stdsoap2.c: tcp_connect and soap_accept set SO_SNDBUF and SO_RCVBUF
    // to SOAP_BUFLEN (65536) and TCP_NODELAY.
    const SocketOptions gsoap{true, 65536, 65536};
    return {gsoap, gsoap};
  }
  // libcurl and Abyss (set in xmlrpc_server.cpp), Beast (both ends set
  // tcp::no_delay), gRPC (its posix TCP sets TCP_NODELAY on both ends):
  // TCP_NODELAY only.
  if (stack == "xmlrpc-c" || stack == "beast" || stack == "grpc") return {};
  throw std::invalid_argument("no socket options recorded for stack '" + stack +
                              "' (bench/harness/stack_sockets.cpp)");
}

}  // namespace wsb
