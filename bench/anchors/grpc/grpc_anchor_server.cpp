// The gRPC anchor's servers (grpc_anchor.h): greeter_server.cc and
// greeter_callback_server.cc with SayHello replaced by Ping and Echo.
// Where they depart from the examples, a comment says why.
#include <grpcpp/grpcpp.h>

#include <stdexcept>
#include <string>

#include "anchors/grpc/grpc_anchor.h"
#include "common/codec.h"
#include "common/payload.h"
#include "common/service.h"  // kPingReply
#include "ping_echo.grpc.pb.h"

namespace wsb::anchors::grpc_anchor {
namespace {

using wsbench_anchor::EchoReply;
using wsbench_anchor::EchoRequest;
using wsbench_anchor::PingEcho;
using wsbench_anchor::PingReply;
using wsbench_anchor::PingRequest;

// Echo's work, shared by both services: the request's bytes decoded by the
// protobuf codec and encoded again into the reply, the codec work of the
// grpc stack's server (the examples only prefix a string). A codec is not
// thread-safe and gRPC runs handlers on threads of its own choosing, so
// each handler thread has its own, kept like the stack's reused messages.
::grpc::Status echo_body(const std::string& in, std::string& out) {
  thread_local const std::unique_ptr<Codec> codec = find_codec("protobuf").make();
  thread_local Payload payload;
  try {
    codec->decode(in, payload);
  } catch (const DecodeError& e) {
    return {::grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  }
  codec->encode(payload, out);
  return ::grpc::Status::OK;
}

// greeter_server.cc's GreeterServiceImpl.
class SyncService final : public PingEcho::Service {
  ::grpc::Status Ping(::grpc::ServerContext*, const PingRequest*, PingReply* reply) override {
    reply->set_message(kPingReply);
    return ::grpc::Status::OK;
  }
  ::grpc::Status Echo(::grpc::ServerContext*, const EchoRequest* request,
                      EchoReply* reply) override {
    return echo_body(request->body(), *reply->mutable_body());
  }
};

// greeter_callback_server.cc's GreeterServiceImpl.
class CallbackService final : public PingEcho::CallbackService {
  ::grpc::ServerUnaryReactor* Ping(::grpc::CallbackServerContext* context, const PingRequest*,
                                   PingReply* reply) override {
    reply->set_message(kPingReply);
    ::grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(::grpc::Status::OK);
    return reactor;
  }
  ::grpc::ServerUnaryReactor* Echo(::grpc::CallbackServerContext* context,
                                   const EchoRequest* request, EchoReply* reply) override {
    ::grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(echo_body(request->body(), *reply->mutable_body()));
    return reactor;
  }
};

// The examples' RunServer. They also enable the default health check
// service and the reflection plugin; neither is on the path of a call, and
// the stack has neither, so this leaves them out. The port is chosen by the
// kernel when options.listen asks for port 0.
template <class Service>
class AnchorServer final : public Server {
 public:
  explicit AnchorServer(const ServerOptions& options) {
    ::grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort(options.listen.to_string(), ::grpc::InsecureServerCredentials(),
                             &port);
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    if (!server_ || port == 0)
      throw std::runtime_error("grpc anchor: cannot listen on " + options.listen.to_string());
    endpoint_ = Endpoint{options.listen.host, static_cast<std::uint16_t>(port)};
  }

  ~AnchorServer() override { stop(); }

  Endpoint endpoint() const override { return endpoint_; }

  // The examples wait forever in Server::Wait. Here Shutdown ends the
  // calls in flight and closes the connections, and Wait returns.
  void stop() override {
    if (!server_) return;
    server_->Shutdown();
    server_->Wait();
    server_.reset();
  }

 private:
  Service service_;
  std::unique_ptr<::grpc::Server> server_;
  Endpoint endpoint_;
};

}  // namespace

std::unique_ptr<Server> start_sync_server(const ServerOptions& options) {
  return std::make_unique<AnchorServer<SyncService>>(options);
}

std::unique_ptr<Server> start_callback_server(const ServerOptions& options) {
  return std::make_unique<AnchorServer<CallbackService>>(options);
}

}  // namespace wsb::anchors::grpc_anchor
