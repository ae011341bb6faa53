// The gRPC anchors (bench/anchors/grpc): ping and a message-b/128KiB echo
// through both servers, the echo's field carrying the protobuf codec's
// encoding and coming back as the codec encodes it again, a refused
// connection failing at once, and the anchor rows run beside the grpc
// stack's with the stack's message bytes one field deeper.
#include "anchors/grpc/grpc_anchor.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>

#include "bench_runs.h"
#include "common/codec.h"
#include "common/payload.h"
#include "common/service.h"
#include "ping_echo.grpc.pb.h"
#include "rtt_bench.h"

namespace wsb {
namespace {

using StartServer = std::unique_ptr<Server> (*)(const ServerOptions&);

class GrpcAnchor : public ::testing::TestWithParam<StartServer> {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.listen = Endpoint{"127.0.0.1", 0};
    server_ = GetParam()(options);
    client_ = anchors::grpc_anchor::connect(server_->endpoint());
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<Client> client_;
};

TEST_P(GrpcAnchor, PingAnswersWhatTheServiceAnswers) {
  EXPECT_EQ(client_->ping(), kPingReply);
  EXPECT_EQ(client_->ping(), kPingReply);
}

TEST_P(GrpcAnchor, EchoReturnsMessageB128KiB) {
  const Payload sent = generate(parse_spec("message-b/128KiB"));
  for (int i = 0; i < 3; ++i) {
    Payload got;
    client_->echo(sent, got);
    EXPECT_EQ(describe_difference(sent, got), "");
  }
}

TEST_P(GrpcAnchor, EchoReturnsEveryKind) {
  for (const char* label : {"binary/1KiB", "message-a/10", "message-b/1KiB", "ints/10", "text",
                            "strings/10", "objects/10", "gml/2"}) {
    const Payload sent = generate(parse_spec(label));
    Payload got;
    client_->echo(sent, got);
    EXPECT_EQ(describe_difference(sent, got), "") << label;
  }
}

// The generated stub on its own: the reply's field is the codec's encoding
// of what the request's field decodes to (the stack server's codec work),
// and a field the codec cannot decode is refused.
TEST_P(GrpcAnchor, EchoFieldIsTheCodecsEncoding) {
  auto stub = wsbench_anchor::PingEcho::NewStub(
      ::grpc::CreateChannel(server_->endpoint().to_string(), ::grpc::InsecureChannelCredentials()));
  const auto codec = find_codec("protobuf").make();
  wsbench_anchor::EchoRequest request;
  codec->encode(generate(parse_spec("message-b/128KiB")), *request.mutable_body());
  wsbench_anchor::EchoReply reply;
  {
    ::grpc::ClientContext context;
    ASSERT_TRUE(stub->Echo(&context, request, &reply).ok());
  }
  EXPECT_EQ(reply.body(), request.body());

  request.set_body("\xff\xff\xff");
  ::grpc::ClientContext context;
  const ::grpc::Status status = stub->Echo(&context, request, &reply);
  EXPECT_EQ(status.error_code(), ::grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_P(GrpcAnchor, AStoppedServerIsRefusedAtOnce) {
  const Endpoint endpoint = server_->endpoint();
  client_.reset();
  server_->stop();
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(anchors::grpc_anchor::connect(endpoint), CallError);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

INSTANTIATE_TEST_SUITE_P(Servers, GrpcAnchor,
                         ::testing::Values(&anchors::grpc_anchor::start_sync_server,
                                           &anchors::grpc_anchor::start_callback_server),
                         [](const ::testing::TestParamInfo<StartServer>& param_info) {
                           return param_info.index == 0 ? "sync" : "callback";
                         });

std::string case_of(const std::string& row_name) {
  return row_name.substr(0, row_name.find("/iterations:"));
}

// Both anchors run beside rtt/grpc/protobuf, verified and timed, each
// message the stack's: ping's the same bytes, echo's nested in one bytes
// field, a tag byte and a three-byte length more each way.
TEST(GrpcAnchorRows, RunBesideTheStackWithItsMessages) {
  bench::RttOptions options;
  const auto rows = run_cases(
      "^(anchor/grpc-sync|anchor/grpc-callback|rtt/grpc/protobuf)/"
      "(ping|echo/message-b/128KiB)/same/",
      [&] { bench::register_rtt_benchmarks(options); });
  std::map<std::string, const Row*> by_case;
  for (const auto& row : rows) {
    EXPECT_FALSE(row.skipped) << row.name << ": " << row.message;
    by_case[case_of(row.name)] = &row;
  }
  ASSERT_EQ(rows.size(), 12u) << "six cases, two repetitions each";
  for (const char* library : {"grpc-sync", "grpc-callback"}) {
    for (const auto& [op, nesting] : {std::pair{"ping", 0.0}, {"echo/message-b/128KiB", 4.0}}) {
      const Row* anchor = by_case.at(std::string("anchor/") + library + "/" + op + "/same");
      const Row* stack = by_case.at(std::string("rtt/grpc/protobuf/") + op + "/same");
      for (const char* bytes : {"request_body_bytes", "response_body_bytes"})
        EXPECT_EQ(anchor->counters.at(bytes).value - stack->counters.at(bytes).value, nesting)
            << library << " " << op << " " << bytes;
    }
  }
}

}  // namespace
}  // namespace wsb
