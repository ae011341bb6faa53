// The xmlrpc-c stack's server and client factories and the method names
// both sides use.
#pragma once

#include <memory>
#include <string>

#include "common/transport.h"

namespace wsb::xmlrpc {

inline constexpr const char* kPing = "wsbench.ping";
inline constexpr const char* kGet = "wsbench.get";
inline constexpr const char* kEcho = "wsbench.echo";
inline constexpr const char* kRegisterClient = "wsbench.registerClient";
inline constexpr const char* kSendMessage = "wsbench.sendMessage";
inline constexpr const char* kReceiveMessages = "wsbench.receiveMessages";
inline constexpr const char* kUnregisterClient = "wsbench.unregisterClient";
inline constexpr const char* kPrimes = "wsbench.primes";

// Throws std::runtime_error if the server cannot listen, std::invalid_argument
// for limits xmlrpc-c cannot honour.
std::unique_ptr<Server> start_xmlrpc_server(Service& service, const ServerOptions& options);

// Throws std::invalid_argument for a codec other than "xmlrpc". Connects on
// the first call (libcurl's way); a server that cannot be reached is a
// CallError then.
std::unique_ptr<Client> connect_xmlrpc_client(const Endpoint& server, const std::string& codec);

}  // namespace wsb::xmlrpc
