// The "gsoap" stack: gSOAP 2.8's own HTTP engine end to end, registered in
// src/stacks.cpp. The server is the generated wsbenchService (request
// handling) behind an accept thread and a thread per connection; the client
// is the generated wsbenchProxy on one keep-alive connection. Carries soap
// and soap-mtom: one server serves both, answering MTOM in kind.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/transport.h"

namespace wsb::soap {

// soap_server.cpp. Throws std::runtime_error if it cannot listen.
std::unique_ptr<Server> start_gsoap_server(Service& service, const ServerOptions& options);

// One connection's handling without a socket, for fuzzing: `request` is
// all a client sent before closing its end, the result all the server
// wrote back, through the same callbacks, limits and serve loop as a
// socket's (soap_server.cpp).
std::string serve_bytes(Service& service, const ServerLimits& limits, std::string_view request);

// soap_client.cpp: codec "soap" or "soap-mtom". Throws CallError if it cannot
// connect, std::invalid_argument for another codec.
std::unique_ptr<Client> connect_gsoap_client(const Endpoint& server, const std::string& codec);

// The "gsoap-tls" stack: the same server and client over TLS with gSOAP's
// OpenSSL engine (soap_tls.h), codec "soap".
std::unique_ptr<Server> start_gsoap_tls_server(Service& service, const ServerOptions& options);
std::unique_ptr<Client> connect_gsoap_tls_client(const Endpoint& server, const std::string& codec);

}  // namespace wsb::soap
