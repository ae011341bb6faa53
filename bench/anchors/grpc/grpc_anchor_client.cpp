// The gRPC anchor's client (grpc_anchor.h): greeter_client.cc's
// GreeterClient with SayHello replaced by Ping and Echo. Where it departs
// from the example, a comment says why.
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <string>

#include "anchors/grpc/grpc_anchor.h"
#include "anchors/ping_echo_client.h"
#include "common/codec.h"
#include "ping_echo.grpc.pb.h"

namespace wsb::anchors::grpc_anchor {
namespace {

// ping_echo.proto's generated names.
namespace pb = wsbench_anchor;

void check(const ::grpc::Status& status, const char* operation) {
  if (status.ok()) return;
  // The example prints the code and message; a failed call here is a
  // CallError, as every client's is.
  throw CallError(std::string("grpc anchor: ") + operation + ": status " +
                  std::to_string(status.error_code()) + ": " + status.error_message());
}

class AnchorClient final : public PingEchoClient {
 public:
  explicit AnchorClient(const Endpoint& server)
      : channel_(::grpc::CreateChannel(server.to_string(), ::grpc::InsecureChannelCredentials())),
        stub_(pb::PingEcho::NewStub(channel_)) {
    // Not in the example, which connects on its first call: connect() must
    // fail where the server is not (anchors.h), and the connection is then
    // made before any call is timed, as the stack's client makes it. A
    // refused attempt fails at once: WaitForConnected would wait out the
    // deadline through gRPC's reconnection backoff.
    const auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(5);
    for (auto state = channel_->GetState(true); state != GRPC_CHANNEL_READY;
         state = channel_->GetState(true)) {
      if (state == GRPC_CHANNEL_TRANSIENT_FAILURE || !channel_->WaitForStateChange(state, deadline))
        throw CallError("grpc anchor: cannot connect to " + server.to_string());
    }
  }

  std::string ping() override {
    pb::PingRequest request;
    pb::PingReply reply;
    ::grpc::ClientContext context;
    check(stub_->Ping(&context, request, &reply), "ping");
    return reply.message();
  }

  // The payload as the protobuf codec encodes it, straight into the
  // request's field; the reply's field decoded by the same codec, the
  // codec work of the stack's client.
  void echo(const Payload& in, Payload& out) override {
    pb::EchoRequest request;
    codec_->encode(in, *request.mutable_body());
    pb::EchoReply reply;
    ::grpc::ClientContext context;
    check(stub_->Echo(&context, request, &reply), "echo");
    try {
      codec_->decode(reply.body(), out);
    } catch (const DecodeError& e) {
      throw CallError(std::string("grpc anchor: undecodable echo reply: ") + e.what());
    }
  }

 private:
  std::shared_ptr<::grpc::Channel> channel_;
  std::unique_ptr<pb::PingEcho::Stub> stub_;
  std::unique_ptr<Codec> codec_ = find_codec("protobuf").make();
};

}  // namespace

std::unique_ptr<Client> connect(const Endpoint& server) {
  return std::make_unique<AnchorClient>(server);
}

}  // namespace wsb::anchors::grpc_anchor
