// The "xmlrpc-c" stack: xmlrpc-c's Abyss HTTP server and its curl client
// transport, carrying the xmlrpc codec's bodies; registered in
// src/stacks.cpp. Its API (methods, faults) is in xmlrpc_api.h.
#pragma once

#include <memory>
#include <string>

#include "common/transport.h"
#include "xmlrpc/xmlrpc_api.h"

namespace wsb::xmlrpc {

// Throws std::runtime_error if the server cannot listen, std::invalid_argument
// for limits xmlrpc-c cannot honour.
std::unique_ptr<Server> start_xmlrpc_server(Service& service, const ServerOptions& options);

// Throws std::invalid_argument for a codec other than "xmlrpc". Connects on
// the first call (libcurl's way); a server that cannot be reached is a
// CallError then.
std::unique_ptr<Client> connect_xmlrpc_client(const Endpoint& server, const std::string& codec);

}  // namespace wsb::xmlrpc
