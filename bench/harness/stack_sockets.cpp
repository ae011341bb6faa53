#include "harness/stack_sockets.h"

#include <stdexcept>

namespace wsb {

ConnectionOptions stack_socket_options(const std::string& name) {
  // A TLS variant (<stack>-tls) sets what its plain stack sets: TLS sits
  // above the same sockets.
  const std::string stack = name.ends_with("-tls") ? name.substr(0, name.size() - 4) : name;
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
  throw std::invalid_argument("no socket options recorded for stack '" + name +
                              "' (bench/harness/stack_sockets.cpp)");
}

}  // namespace wsb
