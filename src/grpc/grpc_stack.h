// The "grpc" stack: gRPC 1.51 over HTTP/2 (h2c), registered in
// src/stacks.cpp. One unary RPC per operation (src/rest/wsbench_service.proto)
// carrying the protobuf codec's messages. The server is a callback service
// (grpc::CallbackService), the API gRPC's performance guide recommends for
// new C++ code in 1.51; the client is the generated synchronous stub on one
// channel, that is one HTTP/2 connection, per Client. No gRPC header here:
// only src/grpc/ compiles against gRPC.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "common/transport.h"

namespace wsb::grpc_stack {

// grpc_server.cpp. Throws std::runtime_error if the server cannot listen.
std::unique_ptr<Server> start_grpc_server(Service& service, const ServerOptions& options);

// The memory the server's HTTP/2 transports may hold together (its
// grpc::ResourceQuota): room for four messages of max_body_bytes and 16 MiB
// of connection buffers.
std::size_t transport_quota(const ServerLimits& limits);

// Seconds the server waits on an unresponsive peer: for HTTP/2's preface
// and SETTINGS, and, with a call in flight and nothing received for that
// long, for the ACK of a PING. The smaller of request_timeout_s and
// keepalive_timeout_s, as Beast's read and write deadline (at least 1).
int peer_timeout_s(const ServerOptions& options);

// grpc_client.cpp: codec "protobuf". Throws CallError if the connection
// cannot be made, std::invalid_argument for another codec.
std::unique_ptr<Client> connect_grpc_client(const Endpoint& server, const std::string& codec);

// grpc_tls.cpp: the "grpc-tls" stack, the same server and client over
// gRPC's SSL credentials (tls::identity(); TLS 1.3 with tls::kCipherSuite,
// key exchange P-256, which gRPC 1.51 sets itself).
std::unique_ptr<Server> start_grpc_tls_server(Service& service, const ServerOptions& options);
std::unique_ptr<Client> connect_grpc_tls_client(const Endpoint& server, const std::string& codec);

}  // namespace wsb::grpc_stack
