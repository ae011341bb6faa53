// The gRPC anchor: gRPC's own helloworld shape (examples/cpp/helloworld in
// gRPC's sources) for a Ping and Echo service of its own (ping_echo.proto),
// with two servers, greeter_server.cc's synchronous service and
// greeter_callback_server.cc's callback service, and greeter_client.cc's
// generated synchronous stub as client. Echo's bytes are the protobuf
// codec's encoding of the payload, decoded and encoded again by the server
// as the grpc stack's server does, so that the codec work equals
// rtt/grpc/protobuf's. No probes, no limits, no channel arguments, no
// request recording (docs/anchors.md). No gRPC header here: only
// bench/anchors/grpc/ compiles against gRPC.
#pragma once

#include <memory>

#include "common/transport.h"

namespace wsb::anchors::grpc_anchor {

// greeter_server.cc: a ServerBuilder with one insecure listening port and
// the generated Service (synchronous handlers on gRPC's own thread pool).
// Listens on options.listen; options.cpu, limits and concurrency are
// ignored, as the grpc stack ignores cpu: every thread is gRPC's.
// Throws std::runtime_error if it cannot listen.
std::unique_ptr<Server> start_sync_server(const ServerOptions& options);

// greeter_callback_server.cc: the same with the generated CallbackService,
// each handler finishing its DefaultReactor inline, the service type the
// grpc stack's server uses.
std::unique_ptr<Server> start_callback_server(const ServerOptions& options);

// greeter_client.cc: a channel from grpc::CreateChannel with insecure
// credentials and the generated stub, a ClientContext, request and reply
// made per call. ping() and echo() only; any other operation throws
// CallError. Throws CallError if the first attempt to connect fails or
// none succeeds within 5 s.
std::unique_ptr<Client> connect(const Endpoint& server);

}  // namespace wsb::anchors::grpc_anchor
