// The "beast" stack: Boost.Beast HTTP/1.1 server and client, registered in
// src/stacks.cpp; and "beast-tls", the same over TLS (beast::ssl_stream,
// src/common/tls.h's configuration). It carries the REST API (src/rest/) and, as the common
// transport, every registered codec (named by the X-Wsbench-Codec header).
// No Beast header here: a Beast translation unit takes ~10 s to compile.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/transport.h"

namespace wsb::beast_stack {

// beast_server.cpp. Throws std::runtime_error if the server cannot listen.
std::unique_ptr<Server> start_beast_server(Service& service, const ServerOptions& options);

// beast_client.cpp. Throws CallError if the connection cannot be made,
// std::invalid_argument for an unknown codec.
std::unique_ptr<Client> connect_beast_client(const Endpoint& server, const std::string& codec);

// beast_tls_server.cpp, beast_tls_client.cpp: the same errors; a failed
// TLS handshake is a CallError.
std::unique_ptr<Server> start_beast_tls_server(Service& service, const ServerOptions& options);
std::unique_ptr<Client> connect_beast_tls_client(const Endpoint& server, const std::string& codec);

}  // namespace wsb::beast_stack
