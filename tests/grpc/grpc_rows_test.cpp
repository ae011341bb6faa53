// The grpc stack's rows as bench runs them: through the round-trip kernel,
// verified before timing (the request check included), with the floor and
// the bytes counted on the socket through the relay (HTTP/2 frames), and
// isolated as every round-trip case is.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "bench_runs.h"
#include "common/service.h"
#include "common/transport.h"
#include "harness/process_state.h"
#include "rtt_bench.h"

namespace wsb {
namespace {

std::string case_of(const std::string& row_name) {
  return row_name.substr(0, row_name.find("/iterations:"));
}

TEST(GrpcRows, RunVerifiedWithTheFloorAndWireBytes) {
  {
    // gRPC's poller, made on first use and kept (grpc_stack_test).
    Service service;
    find_stack("grpc").start_server(service, ServerOptions{})->stop();
  }
  ::testing::internal::CaptureStderr();
  const ProcessState before = ProcessState::now();
  bench::RttOptions options;
  const auto rows =
      run_cases("^rtt/(grpc|beast)/protobuf/(ping|echo/message-a/100|define/x1)/same/",
                [&] { bench::register_rtt_benchmarks(options); });
  const ProcessState after = ProcessState::now();
  const std::string diagnostics = ::testing::internal::GetCapturedStderr();
  std::map<std::string, const Row*> by_case;
  for (const auto& row : rows) {
    EXPECT_FALSE(row.skipped) << row.name << ": " << row.message;
    by_case[case_of(row.name)] = &row;
  }
  ASSERT_EQ(rows.size(), 12u) << "six cases, two repetitions each";
  for (const char* op : {"ping", "echo/message-a/100", "define/x1"}) {
    const Row& grpc = *by_case.at(std::string("rtt/grpc/protobuf/") + op + "/same");
    EXPECT_GT(grpc.n, 0) << op;
    EXPECT_GT(grpc.counters.at("floor_p50_us").value, 0) << op;
    EXPECT_GT(grpc.counters.at("request_bytes").value, 0) << op;
    EXPECT_GT(grpc.counters.at("response_body_bytes").value, 0) << op;
  }
  // The same protobuf message each way: gRPC's DATA frames carry it behind
  // its 5-byte length prefix.
  const auto body = [&](const char* stack, const char* key) {
    return by_case.at(std::string("rtt/") + stack + "/protobuf/echo/message-a/100/same")
        ->counters.at(key)
        .value;
  };
  EXPECT_EQ(body("grpc", "request_body_bytes"), body("beast", "request_body_bytes") + 5);
  EXPECT_EQ(body("grpc", "response_body_bytes"), body("beast", "response_body_bytes") + 5);
  EXPECT_EQ(diagnostics.find("not released"), std::string::npos) << diagnostics;
  EXPECT_EQ(after.describe(), before.describe());
}

}  // namespace
}  // namespace wsb
