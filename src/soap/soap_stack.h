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

// soap_client.cpp: codec "soap" or "soap-mtom". Throws CallError if it cannot
// connect, std::invalid_argument for another codec.
std::unique_ptr<Client> connect_gsoap_client(const Endpoint& server, const std::string& codec);

}  // namespace wsb::soap
