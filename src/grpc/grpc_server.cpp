// The grpc stack's server: the generated service's raw callback methods
// (Wsbench::WithRawCallbackMethod_*) backed by wsb::Service. Raw: each
// method gets the request's bytes and returns the reply's, decoded and
// encoded here with the protobuf calls gRPC's SerializationTraits make, so
// that the points between can be marked (grpc_probe.h).
//
// The callback API (each method returning a ServerUnaryReactor) is what gRPC's performance guide
// recommends for new C++ code in 1.51: gRPC runs the handlers on its own threads, with no
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
// (headers) at most max_header_bytes, what the transports buffer
// transport_quota(); a connection idle for keepalive_timeout_s is closed
// (GRPC_ARG_MAX_CONNECTION_IDLE_MS), and so is one that does not finish
// the SETTINGS exchange or answer a PING within peer_timeout_s()
// (GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, GRPC_ARG_KEEPALIVE_*).
// The handshake bounded so includes grpc-tls's TLS handshake.
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/support/server_callback.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "common/clock.h"
#include "common/codec.h"
#include "common/phases.h"
#include "common/service.h"
#include "grpc/grpc_credentials.h"
#include "grpc/grpc_probe.h"
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

// A raw method: the request's bytes and the reply's bytes.
using Bytes = ::grpc::ByteBuffer;

// The probes of the connections this server has served, by the client's
// port: one per port, kept for the server's life (a port's next connection
// is keyed as its last was, so at most one per port).
class ProbeBoard {
 public:
  // The probe of the connection `context` came on; null with probes off
  // or where gRPC's peer names no port.
  ConnectionProbe* find(::grpc::CallbackServerContext* context, std::uint16_t server_port) {
    if (!probes_enabled()) return nullptr;
    const std::uint16_t client_port = port_of_peer(context->peer());
    if (client_port == 0) return nullptr;
    const std::lock_guard lock(mutex_);
    auto& probe = probes_[client_port];
    if (!probe) probe = std::make_unique<ConnectionProbe>(client_port, server_port);
    return probe.get();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::uint16_t, std::unique_ptr<ConnectionProbe>> probes_;
};

// One call on a raw method: the request decoded from `in`, `body` run on it
// (what the request carries taken into the model, kParsed, the service,
// kServiced, the reply bound), the reply encoded into `out`, and the
// reactor finished with the outcome. Points, on this handler's thread:
// kRequestReceived on entry (gRPC has read the request whole and handed it
// over), kParsed and kServiced in `body`, kMarshalled once the reply is
// encoded; gRPC frames and writes the reply after Finish. A request whose
// metadata asks for Server-Timing (grpc_probe.h) gets the three server
// phases in the reply's trailing metadata, probes on or off.
template <class Request, class Reply, class Body>
::grpc::ServerUnaryReactor* answer(::grpc::CallbackServerContext* context, ConnectionProbe* probe,
                                   const Bytes* in, Bytes* out, Body&& body) {
  // Destroyed after the reply is handed over, as gRPC's own message
  // holders are released when the call is done.
  Request request;
  Reply reply;
  std::optional<ServerTimingRecorder> timing;
  if (context->client_metadata().count(kServerTimingKey) != 0) timing.emplace();
  if (probe != nullptr || timing) {
    if (probe != nullptr) probe->serving_starts();
    const std::int64_t received = now_ns();
    if (probe != nullptr) probe->request_read(received);
    if (timing) timing->begin(received);
  }
  ::grpc::Status status;
  try {
    Bytes bytes(*in);  // gRPC's reader consumes the buffer it reads
    status = ::grpc::GenericDeserialize<::grpc::ProtoBufferReader, Request>(&bytes, &request);
    if (status.ok()) {
      body(request, reply);
      bool own = false;
      status = ::grpc::GenericSerialize<::grpc::ProtoBufferWriter, Reply>(reply, out, &own);
      mark_server(kMarshalled);
      if (timing && status.ok()) context->AddTrailingMetadata(kServerTimingKey, timing->value());
    }
  } catch (const ServiceError& e) {
    status = status_of(e);
  } catch (const DecodeError& e) {
    status = {::grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  } catch (const std::invalid_argument& e) {
    status = {::grpc::StatusCode::INVALID_ARGUMENT, e.what()};
  } catch (const std::exception& e) {
    status = {::grpc::StatusCode::INTERNAL, e.what()};
  }
  if (timing) timing->end();
  if (probe != nullptr) {
    probe->reply_handed();
    // gRPC's threads serve every connection: no point of a later call may
    // land in this one's slot.
    detail::current_slot = nullptr;
  }
  auto* reactor = context->DefaultReactor();
  reactor->Finish(status);
  return reactor;
}

using RawService = wsbench::Wsbench::WithRawCallbackMethod_Ping<
    wsbench::Wsbench::WithRawCallbackMethod_Get<wsbench::Wsbench::WithRawCallbackMethod_Echo<
        wsbench::Wsbench::WithRawCallbackMethod_Register<
            wsbench::Wsbench::WithRawCallbackMethod_Send<
                wsbench::Wsbench::WithRawCallbackMethod_Receive<
                    wsbench::Wsbench::WithRawCallbackMethod_Unregister<
                        wsbench::Wsbench::WithRawCallbackMethod_Primes<
                            wsbench::Wsbench::WithRawCallbackMethod_Define<
                                wsbench::Wsbench::WithRawCallbackMethod_Put<
                                    wsbench::Wsbench::Service>>>>>>>>>>;

class WsbenchService final : public RawService {
 public:
  // wsb::: inside the class, Service names the generated base.
  explicit WsbenchService(wsb::Service& service) : service_(service) {}
  void set_port(std::uint16_t port) { port_ = port; }

  // A ping asking for the peer's port (grpc_probe.h) is answered with it
  // and marks no point: the slot keeps the previous call's.
  ::grpc::ServerUnaryReactor* Ping(::grpc::CallbackServerContext* context, const Bytes* in,
                                   Bytes* out) override {
    ConnectionProbe* probe = probes_.find(context, port_);
    if (probe != nullptr && context->client_metadata().count(kPeerPortHeader) != 0) {
      context->AddInitialMetadata(kPeerPortHeader, std::to_string(probe->client_port()));
      probe = nullptr;
    }
    return answer<wsbench::Empty, wsbench::Response>(
        context, probe, in, out, [&](const wsbench::Empty&, wsbench::Response& reply) {
          mark_server(kParsed);
          std::string text = service_.ping();
          mark_server(kServiced);
          reply.set_text(std::move(text));
        });
  }
  ::grpc::ServerUnaryReactor* Get(::grpc::CallbackServerContext* context, const Bytes* in,
                                  Bytes* out) override {
    return answer<wsbench::PayloadLabel, wsbench::Response>(
        context, probe(context), in, out,
        [&](const wsbench::PayloadLabel& request, wsbench::Response& reply) {
          mark_server(kParsed);
          const auto payload = service_.get(parse_spec(request.label()));
          mark_server(kServiced);
          rest::bind_response(*payload, reply);
        });
  }
  // The decoded request goes through Service::echo, so request
  // verification sees what the server received.
  ::grpc::ServerUnaryReactor* Echo(::grpc::CallbackServerContext* context, const Bytes* in,
                                   Bytes* out) override {
    return answer<wsbench::Response, wsbench::Response>(
        context, probe(context), in, out,
        [&](const wsbench::Response& request, wsbench::Response& reply) {
          Payload payload = rest::unbind_response(request);
          mark_server(kParsed);  // the request in the model, as every stack marks it
          const Payload& back = service_.echo(std::move(payload));
          mark_server(kServiced);
          rest::bind_response(back, reply);
        });
  }
  ::grpc::ServerUnaryReactor* Register(::grpc::CallbackServerContext* context, const Bytes* in,
                                       Bytes* out) override {
    return answer<wsbench::Empty, wsbench::Queue>(
        context, probe(context), in, out, [&](const wsbench::Empty&, wsbench::Queue& reply) {
          mark_server(kParsed);
          std::string id = service_.register_client();
          mark_server(kServiced);
          reply.set_id(std::move(id));
        });
  }
  ::grpc::ServerUnaryReactor* Send(::grpc::CallbackServerContext* context, const Bytes* in,
                                   Bytes* out) override {
    return answer<wsbench::SendRequest, wsbench::Empty>(
        context, probe(context), in, out,
        [&](const wsbench::SendRequest& request, wsbench::Empty&) {
          Message message = rest::unbind_message(request.message());
          mark_server(kParsed);
          service_.send_message(request.queue(), std::move(message));
          mark_server(kServiced);
        });
  }
  ::grpc::ServerUnaryReactor* Receive(::grpc::CallbackServerContext* context, const Bytes* in,
                                      Bytes* out) override {
    return answer<wsbench::Queue, wsbench::Response>(
        context, probe(context), in, out,
        [&](const wsbench::Queue& request, wsbench::Response& reply) {
          mark_server(kParsed);
          MessageList list{service_.receive_messages(request.id())};
          mark_server(kServiced);
          rest::bind_response(list, reply);
        });
  }
  ::grpc::ServerUnaryReactor* Unregister(::grpc::CallbackServerContext* context, const Bytes* in,
                                         Bytes* out) override {
    return answer<wsbench::Queue, wsbench::Empty>(
        context, probe(context), in, out, [&](const wsbench::Queue& request, wsbench::Empty&) {
          mark_server(kParsed);
          service_.unregister_client(request.id());
          mark_server(kServiced);
        });
  }
  ::grpc::ServerUnaryReactor* Primes(::grpc::CallbackServerContext* context, const Bytes* in,
                                     Bytes* out) override {
    return answer<wsbench::PrimesRequest, wsbench::Response>(
        context, probe(context), in, out,
        [&](const wsbench::PrimesRequest& request, wsbench::Response& reply) {
          mark_server(kParsed);
          std::string text = service_.primes(request.n());
          mark_server(kServiced);
          reply.set_text(std::move(text));
        });
  }
  ::grpc::ServerUnaryReactor* Define(::grpc::CallbackServerContext* context, const Bytes* in,
                                     Bytes* out) override {
    return answer<wsbench::Word, wsbench::Response>(
        context, probe(context), in, out,
        [&](const wsbench::Word& request, wsbench::Response& reply) {
          mark_server(kParsed);
          std::string text = service_.define(request.word());
          mark_server(kServiced);
          reply.set_text(std::move(text));
        });
  }
  ::grpc::ServerUnaryReactor* Put(::grpc::CallbackServerContext* context, const Bytes* in,
                                  Bytes* out) override {
    return answer<wsbench::Definition, wsbench::Empty>(
        context, probe(context), in, out, [&](const wsbench::Definition& request, wsbench::Empty&) {
          mark_server(kParsed);
          service_.put(request.word(), request.definition());
          mark_server(kServiced);
        });
  }

 private:
  ConnectionProbe* probe(::grpc::CallbackServerContext* context) {
    return probes_.find(context, port_);
  }

  wsb::Service& service_;
  ProbeBoard probes_;
  std::uint16_t port_ = 0;
};

int clamp_to_int(std::size_t n) { return n > INT_MAX ? INT_MAX : static_cast<int>(n); }

}  // namespace

std::size_t transport_quota(const ServerLimits& limits) {
  constexpr std::size_t kMessages = 4;
  constexpr std::size_t kFloor = std::size_t{16} << 20;
  const std::size_t most = std::numeric_limits<std::size_t>::max();
  return limits.max_body_bytes > (most - kFloor) / kMessages
             ? most
             : kMessages * limits.max_body_bytes + kFloor;
}

int peer_timeout_s(const ServerOptions& options) {
  return std::max(
      1, std::min(options.concurrency.request_timeout_s, options.limits.keepalive_timeout_s));
}

namespace {

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
    // gRPC 1.51 checks a message's size only once the whole message is
    // in, and keeps opening its flow-control windows meanwhile: without a
    // quota, a stream whose prefix claims 1 GiB buffers whatever it is
    // sent (256 MiB for a 4 KiB limit, tests/grpc/grpc_hostile_test.cpp).
    // The quota bounds what every connection's transport holds together;
    // gRPC's reclaimer resets a stream that takes it over
    // (ENHANCE_YOUR_CALM).
    ::grpc::ResourceQuota quota("wsbench-grpc-server");
    quota.Resize(transport_quota(options.limits));
    builder.SetResourceQuota(quota);
    builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE,
                               clamp_to_int(options.limits.max_header_bytes));
    builder.AddChannelArgument(
        GRPC_ARG_MAX_CONNECTION_IDLE_MS,
        clamp_to_int(std::size_t(options.limits.keepalive_timeout_s) * 1000));
    // The wait on an unresponsive peer, as Beast's read and write
    // deadline: a connection that has not finished HTTP/2's SETTINGS
    // exchange (no preface, a partial one, no SETTINGS; gRPC's default is
    // 120 s), and one that has a call in flight and has sent nothing for
    // that long, then leaves a PING unanswered as long (a client that
    // never reads its reply), are closed.
    const int peer_ms = clamp_to_int(std::size_t(peer_timeout_s(options)) * 1000);
    builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, peer_ms);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, peer_ms);
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, peer_ms);
    // No ping strikes: gRPC 1.51 answers every PING past the strikes
    // (GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2 by default) with another GOAWAY
    // and another close, each kept while a write is pending, so a flood
    // whose ACKs are never read grew the server by 63 MB and more. Without
    // strikes a PING costs its ACK, and gRPC stops reading a connection
    // with 10,000 frames it has not written (docs/servers/hostile-input.md).
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 0);
    // An ephemeral port must be this server's alone.
    builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
    server_ = builder.BuildAndStart();
    if (!server_ || port == 0)
      throw std::runtime_error("grpc: cannot listen on " + options.listen.to_string());
    endpoint_ = Endpoint{options.listen.host, static_cast<std::uint16_t>(port)};
    service_.set_port(endpoint_.port);
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
