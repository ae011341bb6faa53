// The grpc stack's server: the generated Wsbench::CallbackService backed by
// wsb::Service.
//
// The callback API (grpc::CallbackService, each method returning a
// ServerUnaryReactor) is what gRPC's performance guide recommends for new
// C++ code in 1.51: gRPC runs the handlers on its own threads, with no
// completion-queue loop or thread pool of ours. Each handler here is short
// (the service call and the message mapping), so it finishes its reactor
// inline, the guide's pattern for non-blocking unary handlers.
//
// Threads: every thread is gRPC's, process-wide and shared with any gRPC
// client in the process (its pollers, the callback queue's threads, the
// executor and the timer manager). gRPC 1.51 has no hook to place them, and
// pinning one from a handler would pin a thread that also polls for the
// in-process client, so options.cpu is not applied (docs/servers/stacks/grpc.md).
//
// Limits: the largest message received is max_body_bytes, the metadata
// (headers) at most max_header_bytes, a connection idle for
// keepalive_timeout_s is closed (GRPC_ARG_MAX_CONNECTION_IDLE_MS), and so is
// one whose handshake outlasts the shorter of that and request_timeout_s
// (GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS).
#include <grpcpp/grpcpp.h>
#include <grpcpp/support/server_callback.h>

#include <chrono>
#include <climits>
#include <stdexcept>

#include "common/codec.h"
#include "common/service.h"
#include "grpc/grpc_credentials.h"
#include "grpc/grpc_stack.h"
#include "rest/protobuf_mapping.h"
#include "wsbench_service.grpc.pb.h"

namespace wsb::grpc_stack {
namespace {

// A refused request as the status the client sees; its message is the
// service's own.
::grpc::Status status_of(const ServiceError& e) {
  switch (e.kind()) {
    case ServiceError::Kind::not_found:
      return {::grpc::StatusCode::NOT_FOUND, e.what()};
    case ServiceError::Kind::too_large:
      return {::grpc::StatusCode::RESOURCE_EXHAUSTED, e.what()};
    case ServiceError::Kind::bad_request:
      break;
  }
  return {::grpc::StatusCode::INVALID_ARGUMENT, e.what()};
}

// Runs one handler's body and finishes its reactor with the outcome.
template <class Body>
::grpc::ServerUnaryReactor* answer(::grpc::CallbackServerContext* context, Body&& body) {
  ::grpc::Status status;
  try {
    body();
  } catch (const ServiceError& e) {
    status = status_of(e);
  } catch (const DecodeError& e) {
    status = {::grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  } catch (const std::invalid_argument& e) {
    status = {::grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  } catch (const std::exception& e) {
    status = {::grpc::StatusCode::INTERNAL, e.what()};
  }
  auto* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

class WsbenchService final : public wsbench::Wsbench::CallbackService {
 public:
  // wsb::: inside the class, Service names the generated base.
  explicit WsbenchService(wsb::Service& service) : service_(service) {}

  ::grpc::ServerUnaryReactor* Ping(::grpc::CallbackServerContext* context, const wsbench::Empty*,
                                   wsbench::Response* reply) override {
    return answer(context, [&] { reply->set_text(service_.ping()); });
  }
  ::grpc::ServerUnaryReactor* Get(::grpc::CallbackServerContext* context,
                                  const wsbench::PayloadLabel* request,
                                  wsbench::Response* reply) override {
    return answer(context, [&] {
      const auto payload = service_.get(parse_spec(request->label()));
      rest::bind_response(*payload, *reply);
    });
  }
  // The decoded request goes through Service::echo, so request
  // verification sees what the server received.
  ::grpc::ServerUnaryReactor* Echo(::grpc::CallbackServerContext* context,
                                   const wsbench::Response* request,
                                   wsbench::Response* reply) override {
    return answer(context, [&] {
      rest::bind_response(service_.echo(rest::unbind_response(*request)), *reply);
    });
  }
  ::grpc::ServerUnaryReactor* Register(::grpc::CallbackServerContext* context,
                                       const wsbench::Empty*, wsbench::Queue* reply) override {
    return answer(context, [&] { reply->set_id(service_.register_client()); });
  }
  ::grpc::ServerUnaryReactor* Send(::grpc::CallbackServerContext* context,
                                   const wsbench::SendRequest* request, wsbench::Empty*) override {
    return answer(context, [&] {
      service_.send_message(request->queue(), rest::unbind_message(request->message()));
    });
  }
  ::grpc::ServerUnaryReactor* Receive(::grpc::CallbackServerContext* context,
                                      const wsbench::Queue* request,
                                      wsbench::Response* reply) override {
    return answer(context, [&] {
      rest::bind_response(MessageList{service_.receive_messages(request->id())}, *reply);
    });
  }
  ::grpc::ServerUnaryReactor* Unregister(::grpc::CallbackServerContext* context,
                                         const wsbench::Queue* request, wsbench::Empty*) override {
    return answer(context, [&] { service_.unregister_client(request->id()); });
  }
  ::grpc::ServerUnaryReactor* Primes(::grpc::CallbackServerContext* context,
                                     const wsbench::PrimesRequest* request,
                                     wsbench::Response* reply) override {
    return answer(context, [&] { reply->set_text(service_.primes(request->n())); });
  }
  ::grpc::ServerUnaryReactor* Define(::grpc::CallbackServerContext* context,
                                     const wsbench::Word* request,
                                     wsbench::Response* reply) override {
    return answer(context, [&] { reply->set_text(service_.define(request->word())); });
  }
  ::grpc::ServerUnaryReactor* Put(::grpc::CallbackServerContext* context,
                                  const wsbench::Definition* request, wsbench::Empty*) override {
    return answer(context, [&] { service_.put(request->word(), request->definition()); });
  }

 private:
  wsb::Service& service_;
};

int clamp_to_int(std::size_t n) { return n > INT_MAX ? INT_MAX : static_cast<int>(n); }

int handshake_timeout_s(const ServerOptions& options) {
  const int request = options.concurrency.request_timeout_s;
  const int idle = options.limits.keepalive_timeout_s;
  if (request <= 0) return idle > 0 ? idle : 120;  // gRPC's default
  return idle > 0 && idle < request ? idle : request;
}

class GrpcServer final : public Server {
 public:
  GrpcServer(Service& service, const ServerOptions& options,
             const std::shared_ptr<::grpc::ServerCredentials>& credentials)
      : service_(service) {
    ::grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort(options.listen.host + ":" + std::to_string(options.listen.port),
                             credentials, &port);
    builder.RegisterService(&service_);
    builder.SetMaxReceiveMessageSize(clamp_to_int(options.limits.max_body_bytes));
    builder.SetMaxSendMessageSize(-1);  // replies are bounded by the service's limits
    builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE,
                               clamp_to_int(options.limits.max_header_bytes));
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_IDLE_MS,
        clamp_to_int(std::size_t(options.limits.keepalive_timeout_s) * 1000));
    // A connection's handshake (TLS for grpc-tls, then HTTP/2's settings)
    // ends within a request's time and an idle wait, the shorter.
    builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                               clamp_to_int(std::size_t(handshake_timeout_s(options)) * 1000));
    // An ephemeral port must be this server's alone.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    server_ = builder.BuildAndStart();
    if (!server_ || port == 0)
      throw std::runtime_error("grpc: cannot listen on " + options.listen.to_string());
    endpoint_ = Endpoint{options.listen.host, static_cast<std::uint16_t>(port)};
  }
  ~GrpcServer() override { stop(); }

  Endpoint endpoint() const override { return endpoint_; }

  // Calls in flight get a second to finish, then are cancelled; the
  // destructor waits for every handler to return.
  void stop() override {
    if (!server_) return;
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
    server_.reset();
  }

 private:
  WsbenchService service_;
  std::unique_ptr<::grpc::Server> server_;
  Endpoint endpoint_;
};

}  // namespace

std::unique_ptr<Server> start_server(Service& service, const ServerOptions& options,
                                     std::shared_ptr<::grpc::ServerCredentials> credentials) {
  return std::make_unique<GrpcServer>(service, options, credentials);
}

std::unique_ptr<Server> start_grpc_server(Service& service, const ServerOptions& options) {
  return start_server(service, options, ::grpc::InsecureServerCredentials());
}

}  // namespace wsb::grpc_stack
