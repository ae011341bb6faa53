// The grpc stack's client: the generated synchronous stub on one channel.
//
// One channel per Client is one HTTP/2 connection: a local subchannel pool
// (GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL) keeps channels from sharing one, the
// default pick_first policy uses a single subchannel, proxies are off, and
// retries are off so a failed call is a CallError rather than a silent
// second attempt. Messages of any size are accepted: the server's limit is
// the one under test. A call blocks its thread in gRPC's own polling (the
// synchronous API), so this thread also does the client's HTTP/2 work.
//
// The request and reply messages are members reused from call to call, as
// the protobuf codec's reuse policy does; gRPC parses each reply afresh.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <iterator>
#include <stdexcept>

#include "common/codec.h"
#include "common/phases.h"
#include "grpc/grpc_credentials.h"
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

class GrpcClient final : public Client {
 public:
  GrpcClient(const Endpoint& server, const ChannelSecurity& security) {
    ::grpc::ChannelArguments args;
    if (!security.server_name.empty()) args.SetSslTargetNameOverride(security.server_name);
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt(GRPC_ARG_ENABLE_HTTP_PROXY, 0);
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 0);
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    channel_ =
        ::grpc::CreateCustomChannel("ipv4:" + server.to_string(), security.credentials, args);
    if (!channel_->WaitForConnected(std::chrono::system_clock::now() + kConnectTimeout))
      throw CallError("grpc: cannot connect to " + server.to_string());
    stub_ = wsbench::Wsbench::NewStub(channel_);
  }

  std::string ping() override {
    begin();
    call("ping", &wsbench::Wsbench::Stub::Ping, empty_, reply_);
    std::string text = text_of(reply_, "ping");
    end();
    return text;
  }
  void get(const PayloadSpec& spec, Payload& out) override {
    begin();
    label_.set_label(spec.label());
    call("get", &wsbench::Wsbench::Stub::Get, label_, reply_);
    out = unbind(reply_, "get");
    end();
  }
  void echo(const Payload& in, Payload& out) override {
    begin();
    rest::bind_response(in, request_);
    call("echo", &wsbench::Wsbench::Stub::Echo, request_, reply_);
    out = unbind(reply_, "echo");
    end();
  }
  std::string register_client() override {
    begin();
    call("register", &wsbench::Wsbench::Stub::Register, empty_, queue_reply_);
    end();
    return queue_reply_.id();
  }
  void send_message(const std::string& queue, const Message& message) override {
    begin();
    send_.set_queue(queue);
    rest::bind_message(message, *send_.mutable_message());
    call("send", &wsbench::Wsbench::Stub::Send, send_, empty_reply_);
    end();
  }
  void receive_messages(const std::string& queue, std::vector<Message>& out) override {
    begin();
    queue_.set_id(queue);
    call("receive", &wsbench::Wsbench::Stub::Receive, queue_, reply_);
    auto* list = std::get_if<MessageList>(&(reply_payload_ = unbind(reply_, "receive")));
    if (list == nullptr) throw CallError("grpc: receive: the reply is not a message list");
    out = std::move(list->messages);
    end();
  }
  void unregister_client(const std::string& queue) override {
    begin();
    queue_.set_id(queue);
    call("unregister", &wsbench::Wsbench::Stub::Unregister, queue_, empty_reply_);
    end();
  }
  std::string primes(std::uint32_t n) override {
    begin();
    primes_.set_n(n);
    call("primes", &wsbench::Wsbench::Stub::Primes, primes_, reply_);
    std::string text = text_of(reply_, "primes");
    end();
    return text;
  }
  std::string define(const std::string& word) override {
    begin();
    word_.set_word(word);
    call("define", &wsbench::Wsbench::Stub::Define, word_, reply_);
    std::string text = text_of(reply_, "define");
    end();
    return text;
  }
  void put(const std::string& word, const std::string& definition) override {
    begin();
    definition_.set_word(word);
    definition_.set_definition(definition);
    call("put", &wsbench::Wsbench::Stub::Put, definition_, empty_reply_);
    end();
  }

  // kInvoke and kDecoded only (begin()); interceptors could mark more:
  // not wired yet.
  const Timeline& last_timeline() const override { return timeline_; }

 private:
  // A unary call on a fresh ClientContext (gRPC's rule: one per call).
  // The call's first point; kDecoded is its last. gRPC serializes the
  // request, writes it, reads and parses the reply inside the stub's call,
  // so the points between are not marked: the phases merge (phases.h).
  void begin() {
    timeline_ = {};
    mark(timeline_, kInvoke);
  }
  void end() { mark(timeline_, kDecoded); }

  template <class Request, class Reply>
  void call(const char* operation,
            ::grpc::Status (wsbench::Wsbench::Stub::*method)(::grpc::ClientContext*, const Request&,
                                                             Reply*),
            const Request& request, Reply& reply) {
    ::grpc::ClientContext context;
    check(((*stub_).*method)(&context, request, &reply), operation);
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
  std::unique_ptr<wsbench::Wsbench::Stub> stub_;
  const wsbench::Empty empty_;
  wsbench::Empty empty_reply_;
  wsbench::PayloadLabel label_;
  wsbench::Response request_;
  wsbench::Response reply_;
  wsbench::Queue queue_;
  wsbench::Queue queue_reply_;
  wsbench::SendRequest send_;
  wsbench::PrimesRequest primes_;
  wsbench::Word word_;
  wsbench::Definition definition_;
  Payload reply_payload_;
  Timeline timeline_;
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
