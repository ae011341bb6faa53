// The grpc stack's phase points (src/grpc/grpc_probe.h): the client marks
// all four of its points in order around gRPC's call, the server its four
// on the connection the client names by the port the server told it, and
// with probes off neither marks any nor asks for the port; bytes that do
// not parse as the request are refused as gRPC's typed service refuses
// them. The phase checks on grpc, and their failure under an injected
// marking fault, are tests/bench/phase_attribution_test.cpp's.
#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/client_unary_call.h>
#include <grpcpp/impl/rpc_method.h>
#include <gtest/gtest.h>

#include "common/phases.h"
#include "common/service.h"
#include "common/transport.h"
#include "grpc/grpc_probe.h"
#include "server_points.h"

namespace wsb {
namespace {

TEST(GrpcProbes, ThePortOfAPeerStringOrZero) {
  using grpc_stack::port_of_peer;
  EXPECT_EQ(port_of_peer("ipv4:127.0.0.1:54321"), 54321);
  EXPECT_EQ(port_of_peer("ipv6:[::1]:8080"), 8080);
  EXPECT_EQ(port_of_peer(":1"), 1);
  for (const char* bad : {"", "ipv4:127.0.0.1", "ipv4:127.0.0.1:", "ipv4:1.2.3.4:65536",
                          "ipv4:1.2.3.4:12x", "unix:/tmp/socket"})
    EXPECT_EQ(port_of_peer(bad), 0) << bad;
}

// Probes are switched for a process before servers start and clients
// connect (phases.h); restored however the test ends.
class ProbesSwitched {
 public:
  explicit ProbesSwitched(bool on) : was_(probes_enabled()) { set_probes_enabled(on); }
  ~ProbesSwitched() { set_probes_enabled(was_); }
  ProbesSwitched(const ProbesSwitched&) = delete;
  ProbesSwitched& operator=(const ProbesSwitched&) = delete;

 private:
  bool was_;
};

TEST(GrpcProbes, ClientAndServerMarkTheirPointsInOrder) {
  const ProbesSwitched probes(true);
  Service service;
  const auto server = find_stack("grpc").start_server(service, ServerOptions{});
  const auto client = find_stack("grpc").connect(server->endpoint(), "protobuf");
  EXPECT_EQ(client->ping(), kPingReply);
  const std::uint16_t port = client->local_port();
  EXPECT_NE(port, 0) << "the server did not tell the client its port";
  EXPECT_EQ(client->local_port(), port) << "asked once, kept";
  Payload out;
  client->echo(generate(parse_spec("message-a/10")), out);
  Timeline t = client->last_timeline();
  ASSERT_TRUE(testing::collect_server_points(*client, server->endpoint(), t));
  for (std::size_t p = kInvoke; p < kPointCount; ++p) EXPECT_TRUE(t.marked(p)) << p;
  EXPECT_TRUE(in_order(t));
  // The port question marks no point: the slot still holds the echo's.
  const Timeline echo_points = t;
  const auto second = find_stack("grpc").connect(server->endpoint(), "protobuf");
  EXPECT_NE(second->local_port(), 0);
  EXPECT_NE(second->local_port(), port);
  Timeline again = client->last_timeline();
  ASSERT_TRUE(testing::collect_server_points(*client, server->endpoint(), again));
  EXPECT_EQ(again[kMarshalled], echo_points[kMarshalled]);
}

TEST(GrpcProbes, NoPointsAndNoPortQuestionWithProbesOff) {
  const ProbesSwitched probes(false);
  Service service;
  const auto server = find_stack("grpc").start_server(service, ServerOptions{});
  const auto client = find_stack("grpc").connect(server->endpoint(), "protobuf");
  EXPECT_EQ(client->ping(), kPingReply);
  for (std::size_t p = kInvoke; p < kPointCount; ++p)
    EXPECT_FALSE(client->last_timeline().marked(p)) << p;
  EXPECT_EQ(client->local_port(), 0);
  Timeline t{};
  ServerPointsReader reader(server->endpoint().port, 0);
  EXPECT_FALSE(reader.collect(t)) << "the server registered a probe with probes off";
}

// The server decodes requests itself (raw methods): bytes that are not the
// request message get gRPC's own parse status, as the typed service gives
// them, and the server serves on.
TEST(GrpcProbes, ARequestThatDoesNotParseIsRefusedAndServingGoesOn) {
  Service service;
  const auto server = find_stack("grpc").start_server(service, ServerOptions{});
  const auto channel = ::grpc::CreateChannel("ipv4:" + server->endpoint().to_string(),
                                             ::grpc::InsecureChannelCredentials());
  const ::grpc::internal::RpcMethod echo("/wsbench.Wsbench/Echo",
                                         ::grpc::internal::RpcMethod::NORMAL_RPC, channel);
  // Field 1, length-delimited, claiming 100 bytes where 2 follow.
  const char garbage[] = {0x0a, 100, 'x', 'y'};
  ::grpc::Slice slice(garbage, sizeof garbage);
  const ::grpc::ByteBuffer request(&slice, 1);
  ::grpc::ByteBuffer reply;
  ::grpc::ClientContext context;
  const ::grpc::Status status =
      ::grpc::internal::BlockingUnaryCall<::grpc::ByteBuffer, ::grpc::ByteBuffer>(
          channel.get(), echo, &context, request, &reply);
  EXPECT_EQ(status.error_code(), ::grpc::StatusCode::INTERNAL) << status.error_message();
  EXPECT_EQ(find_stack("grpc").connect(server->endpoint(), "protobuf")->ping(), kPingReply);
}

}  // namespace
}  // namespace wsb
