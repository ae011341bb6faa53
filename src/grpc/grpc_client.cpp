// The grpc stack's client: blocking unary calls on one channel.
//
// One channel per Client is one HTTP/2 connection: a local subchannel pool
// (GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL) keeps channels from sharing one, the
// default pick_first policy uses a single subchannel, proxies are off, and
// retries are off so a failed call is a CallError rather than a silent
// second attempt. Messages of any size are accepted: the server's limit is
// the one under test. A call blocks its thread in gRPC's own polling (the
// synchronous API), so this thread also does the client's HTTP/2 work.
//
// The calls are the generated stub's (grpc::internal::BlockingUnaryCall on
// the service's method names) with the messages as bytes, encoded and
// decoded here with the same protobuf calls gRPC's SerializationTraits
// make, so that the points between can be marked (grpc_probe.h). The
// request and reply messages are members reused from call to call, as the
// protobuf codec's reuse policy does; each reply is parsed afresh.
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/codegen/proto_utils.h>
#include <grpcpp/impl/rpc_method.h>

#include <chrono>
#include <iterator>
#include <optional>
#include <stdexcept>

#include "common/codec.h"
#include "common/phases.h"
#include "grpc/grpc_credentials.h"
#include "grpc/grpc_probe.h"
#include "grpc/grpc_stack.h"
#include "rest/protobuf_mapping.h"
#include "wsbench_service.grpc.pb.h"

namespace wsb::grpc_stack {
namespace {

// How long connect() waits for the connection.
constexpr auto kConnectTimeout = std::chrono::seconds(5);

// gRPC's status codes by number (grpc/impl/codegen/status.h).
const char* code_name(::grpc::StatusCode code) {
  static constexpr const char* kNames[] = {"OK",
                                           "CANCELLED",
                                           "UNKNOWN",
                                           "INVALID_ARGUMENT",
                                           "DEADLINE_EXCEEDED",
                                           "NOT_FOUND",
                                           "ALREADY_EXISTS",
                                           "PERMISSION_DENIED",
                                           "RESOURCE_EXHAUSTED",
                                           "FAILED_PRECONDITION",
                                           "ABORTED",
                                           "OUT_OF_RANGE",
                                           "UNIMPLEMENTED",
                                           "INTERNAL",
                                           "UNAVAILABLE",
                                           "DATA_LOSS",
                                           "UNAUTHENTICATED"};
  const auto i = static_cast<std::size_t>(code);
  return i < std::size(kNames) ? kNames[i] : "UNKNOWN";
}

// "grpc: define: NOT_FOUND: no definition of 'x'"
void check(const ::grpc::Status& status, const char* operation) {
  if (status.ok()) return;
  throw CallError(std::string("grpc: ") + operation + ": " + code_name(status.error_code()) + ": " +
                  status.error_message());
}

// The service's methods as the generated stub names them.
::grpc::internal::RpcMethod method(const char* name,
                                   const std::shared_ptr<::grpc::Channel>& channel) {
  return {name, ::grpc::internal::RpcMethod::NORMAL_RPC, channel};
}

class GrpcClient final : public Client {
 public:
  GrpcClient(const Endpoint& server, const ChannelSecurity& security)
      : channel_(open_channel(server, security)),
        ping_(method("/wsbench.Wsbench/Ping", channel_)),
        get_(method("/wsbench.Wsbench/Get", channel_)),
        echo_(method("/wsbench.Wsbench/Echo", channel_)),
        register_(method("/wsbench.Wsbench/Register", channel_)),
        send_(method("/wsbench.Wsbench/Send", channel_)),
        receive_(method("/wsbench.Wsbench/Receive", channel_)),
        unregister_(method("/wsbench.Wsbench/Unregister", channel_)),
        primes_(method("/wsbench.Wsbench/Primes", channel_)),
        define_(method("/wsbench.Wsbench/Define", channel_)),
        put_(method("/wsbench.Wsbench/Put", channel_)) {
    if (!channel_->WaitForConnected(std::chrono::system_clock::now() + kConnectTimeout))
      throw CallError("grpc: cannot connect to " + server.to_string());
  }

  std::string ping() override {
    begin();
    call("ping", ping_, empty_, reply_);
    std::string text = text_of(reply_, "ping");
    end();
    return text;
  }
  void get(const PayloadSpec& spec, Payload& out) override {
    begin();
    label_.set_label(spec.label());
    call("get", get_, label_, reply_);
    out = unbind(reply_, "get");
    end();
  }
  void echo(const Payload& in, Payload& out) override {
    begin();
    rest::bind_response(in, request_);
    call("echo", echo_, request_, reply_);
    out = unbind(reply_, "echo");
    end();
  }
  std::string register_client() override {
    begin();
    call("register", register_, empty_, queue_reply_);
    end();
    return queue_reply_.id();
  }
  void send_message(const std::string& queue, const Message& message) override {
    begin();
    send_request_.set_queue(queue);
    rest::bind_message(message, *send_request_.mutable_message());
    call("send", send_, send_request_, empty_reply_);
    end();
  }
  void receive_messages(const std::string& queue, std::vector<Message>& out) override {
    begin();
    queue_.set_id(queue);
    call("receive", receive_, queue_, reply_);
    auto* list = std::get_if<MessageList>(&(reply_payload_ = unbind(reply_, "receive")));
    if (list == nullptr) throw CallError("grpc: receive: the reply is not a message list");
    out = std::move(list->messages);
    end();
  }
  void unregister_client(const std::string& queue) override {
    begin();
    queue_.set_id(queue);
    call("unregister", unregister_, queue_, empty_reply_);
    end();
  }
  std::string primes(std::uint32_t n) override {
    begin();
    primes_request_.set_n(n);
    call("primes", primes_, primes_request_, reply_);
    std::string text = text_of(reply_, "primes");
    end();
    return text;
  }
  std::string define(const std::string& word) override {
    begin();
    word_.set_word(word);
    call("define", define_, word_, reply_);
    std::string text = text_of(reply_, "define");
    end();
    return text;
  }
  void put(const std::string& word, const std::string& definition) override {
    begin();
    definition_.set_word(word);
    definition_.set_definition(definition);
    call("put", put_, definition_, empty_reply_);
    end();
  }

  // kInvoke, kRequestWritten, kResponseReceived and kDecoded (call()).
  const Timeline& last_timeline() const override { return timeline_; }

  // Every later call asks for the server's phases (grpc_probe.h).
  bool request_server_timing() override {
    server_timing_asked_ = true;
    return true;
  }
  std::optional<ServerDurations> last_server_timing() const override { return server_timing_; }

  // The port the server sees this connection on, asked once (grpc_probe.h)
  // with probes on, where the server probes; 0 otherwise. The question is a
  // call of its own, outside every timed call and its timeline.
  std::uint16_t local_port() const override {
    if (!probes_enabled()) return 0;
    if (!local_port_asked_) {
      local_port_asked_ = true;
      ::grpc::ClientContext context;
      context.AddMetadata(kPeerPortHeader, "?");
      Bytes out, in;
      bool own = false;
      if (::grpc::GenericSerialize<::grpc::ProtoBufferWriter, wsbench::Empty>(empty_, &out, &own)
              .ok() &&
          ::grpc::internal::BlockingUnaryCall<Bytes, Bytes>(channel_.get(), ping_, &context, out,
                                                            &in)
              .ok()) {
        const auto& metadata = context.GetServerInitialMetadata();
        if (const auto it = metadata.find(kPeerPortHeader); it != metadata.end())
          local_port_ = port_of_peer(":" + std::string(it->second.data(), it->second.size()));
      }
    }
    return local_port_;
  }

 private:
  using Bytes = ::grpc::ByteBuffer;

  static std::shared_ptr<::grpc::Channel> open_channel(const Endpoint& server,
                                                       const ChannelSecurity& security) {
    ::grpc::ChannelArguments args;
    if (!security.server_name.empty()) args.SetSslTargetNameOverride(security.server_name);
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    return ::grpc::CreateCustomChannel("ipv4:" + server.to_string(), security.credentials, args);
  }

  // The call's first point; kDecoded, after the reply is in the model, is
  // its last.
  void begin() {
    timeline_ = {};
    mark(timeline_, kInvoke);
  }
  void end() { mark(timeline_, kDecoded); }

  // A unary call on a fresh ClientContext (gRPC's rule: one per call). The
  // request is encoded here, as gRPC's SerializationTraits would, and then
  // kRequestWritten marked: gRPC's call (context, HPACK, framing, the
  // write, the wait) lies between it and kResponseReceived, marked when the
  // reply's bytes are back (with its trailers: a unary call completes on
  // both); the reply is then decoded.
  template <class Request, class Reply>
  void call(const char* operation, const ::grpc::internal::RpcMethod& method,
            const Request& request, Reply& reply) {
    Bytes out, in;
    bool own = false;
    check(::grpc::GenericSerialize<::grpc::ProtoBufferWriter, Request>(request, &out, &own),
          operation);
    mark(timeline_, kRequestWritten);
    ::grpc::Status status;
    {
      ::grpc::ClientContext context;
      if (server_timing_asked_) context.AddMetadata(kServerTimingKey, "1");
      status = ::grpc::internal::BlockingUnaryCall<Bytes, Bytes>(channel_.get(), method, &context,
                                                                 out, &in);
      mark(timeline_, kResponseReceived);
      if (server_timing_asked_) server_timing_ = server_timing_of(context);
    }
    check(status, operation);
    if (!::grpc::GenericDeserialize<::grpc::ProtoBufferReader, Reply>(&in, &reply).ok())
      throw CallError(std::string("grpc: ") + operation + ": the reply does not parse");
  }

  // The server's phases from the reply's trailing metadata; nullopt if
  // absent or not a Server-Timing value.
  static std::optional<ServerDurations> server_timing_of(const ::grpc::ClientContext& context) {
    const auto& trailers = context.GetServerTrailingMetadata();
    const auto it = trailers.find(kServerTimingKey);
    if (it == trailers.end()) return std::nullopt;
    return parse_server_timing(std::string_view(it->second.data(), it->second.size()));
  }

  static Payload unbind(const wsbench::Response& reply, const char* operation) {
    try {
      return rest::unbind_response(reply);
    } catch (const DecodeError& e) {
      throw CallError(std::string("grpc: ") + operation + ": " + e.what());
    }
  }
  static std::string text_of(const wsbench::Response& reply, const char* operation) {
    if (reply.payload_case() != wsbench::Response::kText)
      throw CallError(std::string("grpc: ") + operation + ": the reply is not a text");
    return reply.text();
  }

  std::shared_ptr<::grpc::Channel> channel_;
  const ::grpc::internal::RpcMethod ping_, get_, echo_, register_, send_, receive_, unregister_,
      primes_, define_, put_;
  const wsbench::Empty empty_;
  wsbench::Empty empty_reply_;
  wsbench::PayloadLabel label_;
  wsbench::Response request_;
  wsbench::Response reply_;
  wsbench::Queue queue_;
  wsbench::Queue queue_reply_;
  wsbench::SendRequest send_request_;
  wsbench::PrimesRequest primes_request_;
  wsbench::Word word_;
  wsbench::Definition definition_;
  Payload reply_payload_;
  Timeline timeline_;
  bool server_timing_asked_ = false;
  std::optional<ServerDurations> server_timing_;
  mutable bool local_port_asked_ = false;
  mutable std::uint16_t local_port_ = 0;
};

}  // namespace

std::unique_ptr<Client> connect_client(const Endpoint& server, const std::string& codec,
                                       const ChannelSecurity& security) {
  if (codec != "protobuf")
    throw std::invalid_argument("grpc: unknown codec '" + codec + "' (it carries protobuf)");
  return std::make_unique<GrpcClient>(server, security);
}

std::unique_ptr<Client> connect_grpc_client(const Endpoint& server, const std::string& codec) {
  return connect_client(server, codec, {::grpc::InsecureChannelCredentials(), {}});
}

}  // namespace wsb::grpc_stack
