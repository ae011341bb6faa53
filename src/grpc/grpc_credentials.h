// What the grpc and grpc-tls stacks differ by: the credentials their server
// listens with and their client's channel uses. Internal to src/grpc.
#pragma once

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

#include "common/transport.h"

namespace wsb::grpc_stack {

struct ChannelSecurity {
  std::shared_ptr<::grpc::ChannelCredentials> credentials;
  // The name the server's certificate must carry (GRPC_SSL_TARGET_NAME_OVERRIDE_ARG);
  // empty for plain h2c.
  std::string server_name;
};

// grpc_server.cpp, grpc_client.cpp: the stacks' server and client over
// these credentials.
std::unique_ptr<Server> start_server(Service& service, const ServerOptions& options,
                                     std::shared_ptr<::grpc::ServerCredentials> credentials);
std::unique_ptr<Client> connect_client(const Endpoint& server, const std::string& codec,
                                       const ChannelSecurity& security);

// grpc_tls.cpp: SSL credentials from tls::identity().
std::shared_ptr<::grpc::ServerCredentials> tls_server_credentials();
ChannelSecurity tls_channel_security();

}  // namespace wsb::grpc_stack
