// Anchor rows as bench runs them: through the round-trip kernel beside
// their stack's rows, verified before timing (a faulty anchor skips), with
// the stack rows' counters, the floor, and a label saying that no request
// check applies; and isolated as every round-trip case is.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "anchor_contract.h"
#include "bench_runs.h"
#include "forwarding_client.h"
#include "harness/process_state.h"
#include "rtt_bench.h"

namespace wsb {
namespace {

const char kPairFilter[] = "^(anchor/beast|rtt/beast/json)/(ping|echo/message-b/128KiB)/same/";

// The kernel's own counters: the phase columns are the stacks' alone.
std::set<std::string> kernel_keys(const Row& row) {
  std::set<std::string> keys;
  for (const auto& [key, counter] : row.counters)
    if (key.rfind("phase", 0) != 0 && key.rfind("server_gap", 0) != 0) keys.insert(key);
  return keys;
}

std::string case_of(const std::string& row_name) {
  return row_name.substr(0, row_name.find("/iterations:"));
}

TEST(AnchorRows, RunBesideTheirStackRowsWithTheSameCounters) {
  bench::RttOptions options;
  const auto rows = run_cases(kPairFilter, [&] { bench::register_rtt_benchmarks(options); });
  std::map<std::string, const Row*> by_case;
  for (const auto& row : rows) {
    EXPECT_FALSE(row.skipped) << row.name << ": " << row.message;
    by_case[case_of(row.name)] = &row;
  }
  ASSERT_EQ(rows.size(), 8u) << "four cases, two repetitions each";
  for (const char* op : {"ping", "echo/message-b/128KiB"}) {
    const Row* anchor = by_case.at(std::string("anchor/beast/") + op + "/same");
    const Row* stack = by_case.at(std::string("rtt/beast/json/") + op + "/same");
    EXPECT_EQ(kernel_keys(*anchor), kernel_keys(*stack)) << op;
    EXPECT_GT(anchor->n, 0) << op;  // how many: the pilot's (bench_core_test)
    EXPECT_GT(anchor->counters.at("floor_p50_us").value, 0) << op;
    // The same bytes both ways (beast_anchor.h).
    for (const char* bytes :
         {"request_bytes", "response_bytes", "request_body_bytes", "response_body_bytes"})
      EXPECT_EQ(anchor->counters.at(bytes).value, stack->counters.at(bytes).value)
          << op << " " << bytes;
    EXPECT_NE(anchor->label.find("request check: none (an anchor records no request)"),
              std::string::npos)
        << anchor->label;
    EXPECT_NE(anchor->label.find("server phases: none"), std::string::npos) << anchor->label;
    EXPECT_EQ(stack->label.find("request check"), std::string::npos) << stack->label;
  }
}

TEST(AnchorRows, AWrongReplySkipsTheRowBeforeTiming) {
  std::vector<anchors::AnchorEntry> faulty = {testing::faulty_beast<testing::OneByteOffPing>()};
  faulty.front().library = "one-byte-off";
  bench::RttOptions options;
  options.anchors = &faulty;
  const auto rows =
      run_cases("^anchor/one-byte-off/ping/same", [&] { bench::register_rtt_benchmarks(options); });
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& row : rows) {
    EXPECT_TRUE(row.skipped) << row.name << " was timed";
    EXPECT_NE(row.message.find("verification failed: ping returned 'qong'"), std::string::npos)
        << row.message;
  }
}

// An anchor's case leaves the process as it found it, as a stack's does
// (tests/servers/case_isolation_test.cpp): its connections released while
// its server runs, its thread and sockets gone once it stops, and bench's
// own check (CaseScope) silent.
TEST(AnchorRows, LeaveThreadsAndDescriptorsAsFound) {
  ::testing::internal::CaptureStderr();
  const ProcessState before = ProcessState::now();
  bench::RttOptions options;
  const auto rows = run_cases("^anchor/beast/(ping|echo/message-b/128KiB)/same/",
                              [&] { bench::register_rtt_benchmarks(options); });
  const ProcessState after = ProcessState::now();
  const std::string diagnostics = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rows.size(), 4u);
  for (const auto& row : rows) EXPECT_FALSE(row.skipped) << row.name << ": " << row.message;
  EXPECT_EQ(diagnostics.find("not released"), std::string::npos) << diagnostics;
  EXPECT_EQ(after.describe(), before.describe());
}

// An anchor runs only beside its stack: none without the stack's codec in
// the run.
TEST(AnchorRows, NoneWithoutTheirStackRow) {
  std::vector<StackEntry> beast_xml = {find_stack("beast")};
  beast_xml.front().codecs = {"xml"};
  bench::RttOptions options;
  options.stacks = &beast_xml;
  const auto rows = run_cases("^anchor/", [&] { bench::register_rtt_benchmarks(options); });
  EXPECT_TRUE(rows.empty());
}

}  // namespace
}  // namespace wsb
