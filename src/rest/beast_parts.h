// The beast stack's server and client factories, declared without Beast so
// that beast_stack.cpp does not pay for compiling it.
#pragma once

#include <memory>
#include <string>

#include "common/transport.h"

namespace wsb::rest {

// The HTTP header that selects a codec for both directions on the common
// transport.
inline constexpr const char* kCodecHeader = "X-Wsbench-Codec";

// Throws std::runtime_error if the server cannot listen.
std::unique_ptr<Server> start_beast_server(Service& service, const ServerOptions& options);

// Throws CallError if the connection cannot be made, std::invalid_argument
// for an unknown codec.
std::unique_ptr<Client> connect_beast_client(const Endpoint& server, const std::string& codec);

}  // namespace wsb::rest
