// The grpc stack's rows as bench runs them: through the round-trip kernel,
// verified before timing (the request check included), with the floor and
// the bytes counted on the socket through the relay (HTTP/2 frames), and
// isolated as every round-trip case is.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

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

// One row of --wire-sizes' HTTP/2 table.
struct SplitRow {
  std::string who, op, direction, call;
  std::uint64_t frames = 0, hpack = 0, control = 0, prefix = 0, message = 0, total = 0;
};

std::vector<SplitRow> split_rows(const std::string& table) {
  std::vector<SplitRow> rows;
  std::istringstream lines(table);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream in(line);
    SplitRow r;
    if (in >> r.who >> r.op >> r.direction >> r.call >> r.frames >> r.hpack >> r.control >>
        r.prefix >> r.message >> r.total)
      rows.push_back(r);
  }
  return rows;
}

// The table's every row adds up to what the relay counted, in whole
// frames; a ping's messages are the protobuf bytes known by hand; and a
// connection's next call sends fewer header bytes than its first, whose
// HPACK table was empty.
TEST(GrpcWireSizes, SplitsEveryRowIntoPartsThatAddUp) {
  std::vector<StackEntry> grpc = {find_stack("grpc")};
  bench::RttOptions options;
  options.stacks = &grpc;
  ::testing::internal::CaptureStdout();
  const int status = bench::print_wire_sizes(options);
  const std::string table = ::testing::internal::GetCapturedStdout();
  ASSERT_EQ(status, 0) << table;
  const auto rows = split_rows(table);
  ASSERT_EQ(rows.size(), 2u * 6u * 4u) << "two messages x six operations x first/next x "
                                          "request/response: "
                                       << table;
  for (const auto& r : rows) {
    const std::string where = r.op + " " + r.direction + " " + r.call;
    EXPECT_EQ(r.frames + r.hpack + r.control + r.prefix + r.message, r.total) << where;
    EXPECT_EQ(r.frames % 9, 0u) << where;
    EXPECT_GE(r.frames, 2u * 9u) << where << ": a HEADERS and a DATA frame at least";
    EXPECT_EQ(r.prefix, 5u) << where << ": one gRPC message";
  }
  const auto find = [&](const char* op, const char* direction, const char* call) {
    for (const auto& r : rows)
      if (r.op == op && r.direction == direction && r.call == call) return r;
    ADD_FAILURE() << "no row " << op << " " << direction << " " << call;
    return SplitRow{};
  };
  // Empty{} is no bytes; Response{text: "pong"} a tag, a length, the text.
  EXPECT_EQ(find("ping", "request", "next").message, 0u);
  EXPECT_EQ(find("ping", "response", "next").message, 2 + std::string(kPingReply).size());
  for (const char* op : {"ping", "echo", "register"})
    EXPECT_LT(find(op, "request", "next").hpack, find(op, "request", "first").hpack) << op;
}

}  // namespace
}  // namespace wsb
