// The grpc stack: its client against its server for every operation, its
// errors as CallErrors carrying gRPC's status, and its server's message
// limit.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/payload.h"
#include "common/service.h"
#include "common/transport.h"
#include "harness/process_state.h"
#include "stack_fixture.h"

namespace wsb {
namespace {

constexpr char kGrpc[] = "grpc";
using GrpcStack = testing::StackSuite<kGrpc>;

// The message a CallError carries, or "" if `call` returned.
template <class Call>
std::string call_error(Call&& call) {
  try {
    call();
  } catch (const CallError& e) {
    return e.what();
  }
  return {};
}

TEST_F(GrpcStack, ListsTheProtobufCodecAlone) {
  EXPECT_EQ(find_stack(kGrpc).codecs, std::vector<std::string>{"protobuf"});
  EXPECT_THROW(connect("json"), std::invalid_argument);
}

TEST_F(GrpcStack, PingAndPrimes) {
  const auto client = connect("protobuf");
  EXPECT_EQ(client->ping(), kPingReply);
  EXPECT_EQ(client->primes(5), service_->primes(5));
}

TEST_F(GrpcStack, GetReturnsEveryCatalogueKind) {
  const auto client = connect("protobuf");
  for (const Kind kind : {Kind::text, Kind::ints, Kind::strings, Kind::objects, Kind::message_a,
                          Kind::message_b, Kind::binary, Kind::gml}) {
    const PayloadSpec spec{kind, 16, Strings::escaped};
    Payload got;
    client->get(spec, got);
    EXPECT_EQ(got, generate(spec)) << spec.label();
  }
}

TEST_F(GrpcStack, EchoReturnsWhatWasSentAndTheServiceRecordsIt) {
  const auto client = connect("protobuf");
  service_->record_requests(true);
  for (const Kind kind : {Kind::text, Kind::ints, Kind::message_b, Kind::gml}) {
    const Payload sent = generate({kind, 32, Strings::escaped});
    Payload back;
    client->echo(sent, back);
    EXPECT_EQ(back, sent);
    EXPECT_EQ(service_->last_request(), sent);
  }
  service_->record_requests(false);
}

TEST_F(GrpcStack, MessagingLifecycle) {
  const auto client = connect("protobuf");
  const std::string queue = client->register_client();
  EXPECT_FALSE(queue.empty());
  const auto a = std::get<Message>(generate({Kind::message_a, 3}));
  const auto b = std::get<Message>(generate({Kind::message_b, 64}));
  client->send_message(queue, a);
  client->send_message(queue, b);
  std::vector<Message> got;
  client->receive_messages(queue, got);
  EXPECT_EQ(got, (std::vector<Message>{a, b}));
  client->receive_messages(queue, got);
  EXPECT_TRUE(got.empty());
  client->unregister_client(queue);
  EXPECT_NE(call_error([&] { client->send_message(queue, a); }), "");
}

TEST_F(GrpcStack, DefinePutAndAMissingWordIsACallError) {
  const auto client = connect("protobuf");
  client->put("wsbenchgrpc", "a word put by the grpc test");
  EXPECT_EQ(client->define("wsbenchgrpc"), "a word put by the grpc test");
  const std::string error = call_error([&] { client->define("zzzgrpcmissing"); });
  EXPECT_NE(error.find("grpc: define: NOT_FOUND: "), std::string::npos) << error;
  EXPECT_EQ(client->ping(), kPingReply) << "the connection serves on";
}

TEST_F(GrpcStack, RefusedRequestsCarryTheServicesMessage) {
  const auto client = connect("protobuf");
  Payload out;
  const std::string error = call_error([&] { client->get({Kind::ints, 1'000'000'000}, out); });
  EXPECT_NE(error.find("grpc: get: RESOURCE_EXHAUSTED: "), std::string::npos) << error;
}

// A request over max_body_bytes is refused by gRPC before the handler
// runs, and the server serves on.
TEST(GrpcLimits, AnOversizedMessageIsResourceExhaustedNotACrash) {
  Service service;
  ServerOptions options;
  options.limits.max_body_bytes = 4096;
  const auto server = find_stack(kGrpc).start_server(service, options);
  const auto client = find_stack(kGrpc).connect(server->endpoint(), "protobuf");
  Payload back;
  const Payload small = Binary{Bytes(1000, 7)};
  client->echo(small, back);
  EXPECT_EQ(back, small);
  const std::string error = call_error([&] { client->echo(Binary{Bytes(5000, 7)}, back); });
  EXPECT_NE(error.find("grpc: echo: RESOURCE_EXHAUSTED: "), std::string::npos) << error;
  EXPECT_EQ(find_stack(kGrpc).connect(server->endpoint(), "protobuf")->ping(), kPingReply);
}

TEST(GrpcLimits, ConnectingToNoServerIsACallError) {
  Service service;
  Endpoint gone;
  {
    const auto server = find_stack(kGrpc).start_server(service, ServerOptions{});
    gone = server->endpoint();
  }
  EXPECT_THROW(find_stack(kGrpc).connect(gone, "protobuf"), CallError);
}

// gRPC's first use in the process makes its poller (an epoll set and its
// eventfd), kept until the process ends; bench warms each stack up before
// a case's baseline for that (ServerPool::warm_up). After it, a stopped
// server and its clients leave no thread or descriptor behind: bench's
// case isolation counts both.
TEST(GrpcLifecycle, FirstUseKeepsItsPollerAndStoppingLeavesNothingElse) {
  const ProcessState unused = ProcessState::now();
  {
    Service service;
    find_stack(kGrpc).start_server(service, ServerOptions{})->stop();
  }
  const ProcessState warmed = wait_for_state(unused, std::chrono::seconds(2));
  EXPECT_EQ(warmed.threads, unused.threads);
  EXPECT_LE(warmed.open_files, unused.open_files + 2);
  {
    Service service;
    const auto server = find_stack(kGrpc).start_server(service, ServerOptions{});
    const auto client = find_stack(kGrpc).connect(server->endpoint(), "protobuf");
    EXPECT_EQ(client->ping(), kPingReply);
    EXPECT_GT(ProcessState::now().threads, warmed.threads) << "gRPC's threads run meanwhile";
  }
  EXPECT_EQ(wait_for_state(warmed, std::chrono::seconds(2)).describe(), warmed.describe());
}

}  // namespace
}  // namespace wsb
